"""Multi-line formats end to end: Percona's OLD and NEW XML and CSV, MySQL Enterprise's JSON
(pretty-printed and one record per line), framed by rsyslog, rotating.

The simulator writes the same traffic as in JSON (sessions, statements with quotes, tabs and
newlines, failed logins) the way the plugin writes each format, rotating every few hundred
records with late writes into the renamed file, and the XML files' declaration, <AUDIT> and
</AUDIT>. Every record must be stored once with the fields its JSON twin says, and counted once;
nothing may become a dead letter (a record cut in two or glued to the next one would).
"""

from __future__ import annotations

import pytest

from auditpipe.tools.simulate import simulate

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]


@pytest.mark.parametrize("server,style", [("e2e-xml-old", "xml-old"), ("e2e-xml-new", "xml-new"), ("e2e-csv", "csv"),
                                          ("e2e-enterprise", "enterprise-json"), ("e2e-enterprise-l", "enterprise-jsonl")])
def test_multi_line_records_arrive_whole_and_exactly_once(stack, server, style):
    raw_before = stack.raw_offsets()
    # a rotation every ~0.2 s: at every 0.1 s (speedup 4) rsyslog once missed a whole file renamed away
    # before it opened it, a limit of imfile (docs/collectors.md) this test is not about
    m = simulate(stack.log_path(server), rate=2000, duration=4, speedup=2, seed=21, rotate_on_size=256 * 1024,
                 rotations=60, late_writes=3, failed_login_burst=10, style=style)
    assert m.rotations >= 3 and m.late_writes == 3 * m.rotations
    if style.startswith("enterprise"):
        # the array's comma comes with the next record, so the last record's line ends only when the
        # next record or the file's end is written: the server closes the file (shutdown)
        with open(stack.log_path(server), "ab") as f:
            f.write(b"\n]\n")
    stack.assert_stored_and_counted_exactly_once(server, m)
    assert stack.dead_letters(server) == [], "no record cut in two or glued to another"
    # on audit.raw too, one message per record: none sent twice, no framing sent alone
    assert stack.raw_messages_of(server, raw_before) == m.records, stack.collectors_say()


def test_timestamp_renamed_rotation_arrives_exactly_once(stack):
    """MySQL Enterprise Audit's and audit_log_filter's scheme: audit.log renamed to
    audit.<time>.log (-2, -3 ... within one second), late writes into the renamed file."""
    server = "e2e-stamped"
    raw_before = stack.raw_offsets()
    m = simulate(stack.log_path(server), rate=2000, duration=5, speedup=2, seed=22, rotate_on_size=256 * 1024,
                 rotations=60, late_writes=3, rotation="timestamp")
    assert m.rotations >= 5
    names = [p.name for p in stack.log_path(server).parent.iterdir()]
    assert any("-2.log" in n for n in names), f"two rotations within a second, named apart: {names}"
    stack.assert_stored_and_counted_exactly_once(server, m)
    assert stack.raw_messages_of(server, raw_before) == m.records, ("lines written == messages on audit.raw; "
                                                                     + stack.collectors_say())
