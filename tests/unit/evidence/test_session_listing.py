"""How `auditpipe sessions` and `auditpipe session` show sessions: what a database user wrote (names,
statements) escaped and bounded on the terminal; the states are the schema's."""

from datetime import datetime, timezone

from auditpipe.evidence import sessions


def _session(**kw) -> dict:
    s = {"_id": "db-01/5/1795860000000", "server": "db-01", "connection_id": 5, "user": "app\x1b[31m", "ip": "10.0.0.7",
         "db": "shop", "start_time": datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc),
         "login_time": datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc), "login_outcome": "success",
         "first_event_time": datetime(2026, 11, 28, 10, 0), "last_event_time": datetime(2026, 11, 28, 11, 2, 3),
         "state": "idle", "duration_ms": 3_723_000, "records": 3, "failures": 1,
         "categories": {"authentication": 1, "data_read": 2}, "tables": ["shop.cards"], "more_tables": 2,
         "data_classes": ["pci_cardholder"], "first_event": "a", "last_event": "b"}
    s.update(kw)
    return s


def test_the_states_are_the_schemas():
    assert sessions.STATES == ("open", "logout", "failed_login", "idle", "superseded")


def test_a_list_escapes_what_a_user_wrote_and_says_when_there_is_none():
    assert sessions.format_sessions([]) == "(no sessions)"
    text = sessions.format_sessions([_session(), _session(_id="x", user=None, ip=None, host="h", state="open",
                                                          duration_ms=61_000, data_classes=[])])
    assert "\x1b" not in text and "app\\x1b[31m" in text, text
    assert "1h02m03s" in text and "1m01s" in text and "pci_cardholder" in text
    assert text.splitlines()[0].startswith("start (UTC)") and len(text.splitlines()) == 3


def test_a_session_shows_its_records_in_order_bounded_and_escaped():
    records = [{"event_time": datetime(2026, 11, 28, 10, 0, 1), "action": "select", "sqltext": "SELECT 'x\x07'" + "y" * 400,
                "outcome": "success", "status": 0},
               {"event_time": datetime(2026, 11, 28, 10, 0, 2), "action": "select", "sqltext": "SELECT * FROM gone",
                "outcome": "failure", "status": 1146}]
    text = sessions.format_session(_session(), records)
    assert "\x07" not in text and "\x1b" not in text
    assert "y" * 300 not in text and "..." in text, "a statement is cut on its line"
    assert "[failure 1146]" in text and "and 2 more" in text and "(2 of its 3 records shown)" in text
    assert "session db-01/5/1795860000000" in text.splitlines()[0]
    gone = sessions.format_session(_session(records=1), [])
    assert "the archive holds them" in gone
