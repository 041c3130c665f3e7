"""Audit data on a terminal (cli/auditpipe/terminal.py): a control character a database user wrote is
shown as an escape, never sent to the terminal, in every text output that carries audit data."""

from datetime import datetime

from auditpipe.archive.history import Imported, describe
from auditpipe.evidence.alerts import format_alerts
from auditpipe.evidence.chain import Finding
from auditpipe.evidence.query import format_table
from auditpipe.evidence.verify import Verification, format_report
from auditpipe.terminal import shown

HOSTILE = "SELECT 1\x1b]0;owned\x07\x1b[2J\r\n\x9b31m\u202eevil\x7f"


def test_each_control_character_is_written_as_an_escape():
    assert shown(HOSTILE) == "SELECT 1\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0a\\x9b31m\\u202eevil\\x7f"
    assert shown("plain é ✓ 𝄞 \\x1b") == "plain é ✓ 𝄞 \\x1b", "printable text, backslashes included, as it is"
    assert shown(42) == "42"


def assert_no_controls(text: str) -> None:
    body = text.replace("\n", "")  # the output's own line breaks
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in body), repr(text)


def test_query_alerts_verify_and_import_output_carry_no_control_character():
    assert_no_controls(format_table([{"sqltext": HOSTILE, HOSTILE: 1, "user": {"name": HOSTILE}}]))
    assert_no_controls(format_alerts([{"first_event_time": datetime(2026, 11, 26), "severity": "high",
                                       "rule": "brute_force", "server": HOSTILE, "summary": HOSTILE}]))
    v = Verification(findings=[("store", Finding("inserted", "db-01", None, HOSTILE, "a document without a link"))],
                     notes=[HOSTILE])
    assert_no_controls(format_report(v))
    done = Imported("import-x", [], {"records": 1, "dead_letters": 1, "dead_letter_reasons": {HOSTILE: 1}}, 0, True)
    assert_no_controls("\n".join(describe(done, "db-01")))
