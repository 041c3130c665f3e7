"""`auditpipe status`'s servers row: a fleet in one line, the silent servers named (stack/collector/fleet.py)."""

from datetime import datetime, timedelta, timezone

from auditpipe.stack.collector.fleet import LISTED, summary

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def test_servers_that_send_are_counted_and_the_silent_ones_named():
    expected = [f"db-{i:02d}" for i in range(1, 51)]
    seen = {s: NOW - timedelta(minutes=1) for s in expected if s not in ("db-17", "db-33")}
    seen["db-17"] = NOW - timedelta(hours=3, minutes=5)
    seen["syslog-host-a"] = NOW  # a sender named by its own host
    health, detail = summary(expected, seen, NOW, 15 * 60)
    assert health == "warning"
    assert detail == ("50 configured: 48 with events in the last 15m; 1 more by their own name (syslog hosts, imports); "
                      "2 silent: db-17 (last event 2026-11-27 08:55 UTC, 3h ago), db-33 (no event stored)")


def test_all_sending_is_ok_and_never_silent_with_zero():
    seen = {"a": NOW - timedelta(days=2), "b": NOW}
    assert summary(["a", "b"], seen, NOW, 3600) == (
        "warning", "2 configured: 1 with events in the last 1h; 1 silent: a (last event 2026-11-25 12:00 UTC, 2d ago)")
    assert summary(["a", "b"], seen, NOW, 0) == ("ok", "2 configured: 2 with events stored")


def test_many_silent_servers_are_listed_up_to_a_bound_and_names_are_escaped():
    expected = [f"db-{i:02d}" for i in range(30)] + ["evil\x1b[31m"]
    health, detail = summary(expected, {}, NOW, 60)
    assert health == "warning"
    assert detail.endswith(f" and {len(expected) - LISTED} more")
    assert detail.count("(no event stored)") == LISTED
    assert "\x1b" not in summary(["evil\x1b[31m"], {}, NOW, 60)[1]


def test_a_stack_with_no_named_source_says_so():
    assert summary([], {}, NOW, 900) == ("ok", "none named in sources")
    assert summary([], {"localhost": NOW}, NOW, 900) == (
        "ok", "none named in sources; 1 by their own name (syslog hosts, imports)")
