"""When `report --schedule` writes a day (evidence/schedule.py): the ended days of the last week whose time
has come and whose file is missing, oldest first; the next time due."""

from __future__ import annotations

from datetime import date, datetime, time, timezone

from auditpipe.evidence import schedule


def test_the_days_due_are_the_ended_ones_without_a_file(tmp_path):
    now = datetime(2026, 11, 29, 0, 30, tzinfo=timezone.utc)
    at = time(1, 0)
    # at 00:30 the 28th is not due yet (01:00); the six days before it are
    assert schedule.due_days(tmp_path, "pci", now, at) == [date(2026, 11, d) for d in range(22, 28)]
    schedule.report_file(tmp_path, "pci", date(2026, 11, 25)).write_text("x")
    schedule.report_file(tmp_path, "hipaa", date(2026, 11, 26)).write_text("x")  # another regime's
    later = datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc)
    assert schedule.due_days(tmp_path, "pci", later, at) == [date(2026, 11, d) for d in (22, 23, 24, 26, 27, 28)]
    assert date(2026, 11, 21) not in schedule.due_days(tmp_path, "pci", later, at), "a week back, no more"


def test_the_next_time_due():
    at = time(1, 0)
    assert schedule.next_due(datetime(2026, 11, 29, 0, 30, tzinfo=timezone.utc), at) == datetime(
        2026, 11, 29, 1, 0, tzinfo=timezone.utc)
    assert schedule.next_due(datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc), at) == datetime(
        2026, 11, 30, 1, 0, tzinfo=timezone.utc)
