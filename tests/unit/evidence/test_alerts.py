"""The CLI's side of the alerts: the list prints what a reviewer needs."""

from __future__ import annotations

from datetime import datetime, timezone

from auditpipe.evidence.alerts import format_alerts


def test_the_alert_list_shows_the_whole_summary():
    t = datetime(2026, 11, 22, 10, 0, 15, tzinfo=timezone.utc)
    summary = "40 failed logins for account 'admin' on demo-db within 0.8 s (threshold 5 in 60 s) " + "x" * 80
    text = format_alerts([{"first_event_time": t, "severity": "high", "rule": "brute_force", "server": "demo-db",
                           "summary": summary}])
    assert "2026-11-22 10:00:15  high      brute_force  demo-db  " + summary in text
    assert format_alerts([]) == "(no alerts)"
