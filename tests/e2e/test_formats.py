"""Multi-line formats end to end: Percona's OLD and NEW XML and CSV, framed by rsyslog, rotating.

The simulator writes the same traffic as in JSON (sessions, statements with quotes, tabs and
newlines, failed logins) the way the plugin writes each format, rotating every few hundred
records with late writes into the renamed file, and the XML files' declaration, <AUDIT> and
</AUDIT>. Every record must be stored once with the fields its JSON twin says, and counted once;
nothing may become a dead letter (a record cut in two or glued to the next one would).
"""

from __future__ import annotations

import pytest

from auditpipe.simulate import simulate

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("server,style", [("e2e-xml-old", "xml-old"), ("e2e-xml-new", "xml-new"), ("e2e-csv", "csv")])
def test_multi_line_records_arrive_whole_and_exactly_once(stack, server, style):
    m = simulate(stack.log_path(server), rate=2000, duration=4, speedup=4, seed=21, rotate_on_size=256 * 1024,
                 rotations=60, late_writes=3, failed_login_burst=10, style=style)
    assert m.rotations >= 3 and m.late_writes == 3 * m.rotations
    stack.assert_stored_and_counted_exactly_once(server, m)
    assert stack.dead_letters(server) == [], "no record cut in two or glued to another"
