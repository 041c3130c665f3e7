"""The evidence report's parts that need no store (cli/auditpipe/evidence/report.py): silence periods, the
digest and its evidence block, HTML escaping of what the audit log holds, the charts. The report
itself is built from the real store in tests/e2e/evidence/test_evidence_report.py."""

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone

from auditpipe.evidence import regimes, report

T0 = datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc)


def minutes(*offsets):
    return [(T0 + timedelta(minutes=m)).replace(tzinfo=None) for m in offsets]  # naive UTC, as pymongo gives


def test_silences_inside_the_range_before_between_and_after():
    until = T0 + timedelta(minutes=60)
    assert report.silences(minutes(*range(60)), T0, until) == []
    # events in minutes 0-4 and 20-59: silent from minute 5 to 20
    got = report.silences(minutes(*range(5), *range(20, 60)), T0, until)
    assert got == [(T0 + timedelta(minutes=5), T0 + timedelta(minutes=20))]
    # nothing until minute 15, nothing after minute 40
    got = report.silences(minutes(*range(15, 41)), T0, until)
    assert got == [(T0, T0 + timedelta(minutes=15)), (T0 + timedelta(minutes=41), until)]
    assert report.silences([], T0, until) == [(T0, until)]
    assert report.silences(minutes(*range(0, 60, 9)), T0, until) == [], "8 quiet minutes are not a silence"


def sample() -> report.Report:
    r = report.Report(regimes.REGIMES["pci"], T0, T0 + timedelta(hours=1), ["db-01"], T0 + timedelta(hours=2))
    r.controls = [{"control": c, "requirement": req, "events": i} for i, (c, req) in
                  enumerate(report.controls_of("PCI DSS v4.0"))]
    hostile = "SELECT '</script><script>alert(1)</script>' & 1"
    r.sections = [report.Section("failed-logins", "Failed logins", "d", "failed-logins",
                                 {"since": r.since, "until": r.until, "servers": ["db-01"]},
                                 [{"_id": {"user": "mallory", "host": "h", "ip": "10.0.0.9"}, "attempts": 12}],
                                 ["user", "host", "ip", "attempts"]),
                  report.Section("account-changes", "Account changes", "d", "account-changes",
                                 {"since": r.since, "until": r.until, "servers": ["db-01"]},
                                 [{"_id": "db-01/7", "event_time": T0.replace(tzinfo=None), "server": "db-01",
                                   "user": "root", "action": "grant", "sqltext": hostile}],
                                 ["event_time", "server", "user", "action", "sqltext"], limit=1000)]
    r.coverage = [report.ServerCoverage("db-01", 99, T0, T0 + timedelta(minutes=50),
                                        [(T0 + timedelta(minutes=50), T0 + timedelta(hours=1))])]
    return r


def test_pci_lists_the_seven_sub_requirements_of_10_2_1():
    assert [c for c, _ in report.controls_of("PCI DSS v4.0")] == [f"PCI-DSS-10.2.1.{i}" for i in range(1, 8)]
    assert [c for c, _ in report.controls_of("SOX ITGC")] == ["SOX-ITGC-ACCESS", "SOX-ITGC-CHANGE"]


def test_the_digest_is_the_sha256_of_the_evidence_block_and_changes_with_any_row():
    r = sample()
    page = report.render_html(r)
    block = re.search(r'<script type="application/json" id="evidence">(.*?)</script>', page, re.S).group(1)
    assert hashlib.sha256(block.encode("ascii")).hexdigest() == r.digest()
    assert r.digest() in page
    evidence = json.loads(block)
    assert evidence["sections"]["account-changes"][0]["sqltext"].startswith("SELECT '</script>")
    assert evidence["controls"][3] == {"control": "PCI-DSS-10.2.1.4", "events": 3,
                                       "requirement": "10.2.1.4 Invalid logical access attempts"}
    before = r.digest()
    r.sections[0].rows[0]["attempts"] = 13
    assert r.digest() != before
    r.sections[0].rows[0]["attempts"] = 12
    r.generated_at += timedelta(days=1)
    assert r.digest() == before, "generated later, same evidence: the same digest"


def test_what_the_audit_log_holds_is_text_on_the_page_never_markup():
    page = report.render_html(sample())
    assert "<script>alert(1)" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 1, "the evidence block is the only script element, and it is JSON"
    assert re.search(r'data-figure="control:PCI-DSS-10.2.1.4">3<', page)
    assert "./auditpipe query failed-logins --from 2026-11-23T10:00:00.000Z --to 2026-11-23T11:00:00.000Z " \
           "--server db-01" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page


def test_charts_are_inline_svg_with_marks():
    r = sample()
    per_minute = [{"_id": {"minute": (T0 + timedelta(minutes=i)).replace(tzinfo=None), "server": "db-01"},
                   "events": i} for i in range(10)]
    svgs = report.charts(r, per_minute)
    assert set(svgs) == {"events-over-time", "evidence-per-control", "failed-logins"}
    for name, svg in svgs.items():
        assert svg.startswith("<svg") and 'class="mark-' in svg, name
    assert r.chart_unit == "minute", "an hour's period by the minute"


def test_the_events_chart_reads_a_quarter_by_the_day_and_stays_small():
    """Minutes for hours, hours for days, days for months: each server's line a few hundred points."""
    assert report.chart_resolution(T0, T0 + timedelta(hours=12))[0] == "minute"
    assert report.chart_resolution(T0, T0 + timedelta(days=3))[0] == "hour"
    assert report.chart_resolution(T0, T0 + timedelta(days=90))[0] == "day"
    r = sample()
    r.until = T0 + timedelta(days=90)
    midnight = T0.replace(hour=0)
    per_minute = [{"_id": {"minute": (midnight + timedelta(minutes=i)).replace(tzinfo=None), "server": server},
                   "events": 2} for i in range(0, 90 * 1440, 3) for server in ("db-01", "db-02")]
    days = report.per_unit(per_minute, "day")
    assert len(days) == 2 * 90 and {d["events"] for d in days} == {2 * 480}, "each day the sum of its minutes"
    svg = report.charts(r, per_minute)["events-over-time"]
    assert r.chart_unit == "day" and len(svg) < 200_000, len(svg)
    assert "Events per day" in svg


def alert_sections(r: report.Report) -> None:
    params = {"since": r.since, "until": r.until, "servers": ["db-01"]}
    r.sections.append(report.Section("login-alerts", "Alerts raised by failed logins", "d", "alerts-list", params, [],
                                     ["rule"]))
    r.imported_section = report.Section("imported", "Imported history", "d", "imported-events-by-server", params,
                                        [{"_id": "db-01", "events": r.imported_events}], ["server", "events"])


def test_an_alert_section_over_imported_history_says_the_rules_did_not_run():
    """The alert rules run on the live stream: over a period of imported history an alert section says
    it was not evaluated, never "none"; over a period partly imported it says how much."""
    r = sample()  # 99 events of db-01 in the period
    r.imported = {"db-01": 99}
    alert_sections(r)
    page = report.render_html(r)
    section = page[page.index('id="login-alerts"'):page.index('id="review"') if 'id="review"' in page else None]
    assert 'data-figure="not-evaluated:login-alerts">Not evaluated: every one of the\nperiod\'s 99 events' in section
    assert "None in the period." not in section
    assert "./auditpipe query imported-events-by-server" in section
    assert json.loads(re.search(r'id="evidence">(.*?)</script>', page, re.S).group(1))["imported_history"] == {"db-01": 99}

    r.imported = {"db-01": 40}
    page = report.render_html(r)
    section = page[page.index('id="login-alerts"'):]
    assert "40 of the period's\n99 events are imported history (db-01: 40)" in section
    assert "None in the period." in section, "the live part's answer, beside what it leaves out"

    r.imported = {}
    section = report.render_html(r)[page.index('id="login-alerts"'):]
    assert "not-evaluated" not in section and "imported-events-by-server" not in section


def test_a_controls_rows_are_split_from_the_rows_by_list_of_controls():
    """One query groups by the whole list of controls; each control's rows are those whose list holds
    it, merged by user, category and action: what events-for-control gives for it (the e2e report
    test checks the figures against the store)."""
    by_list = [
        {"_id": {"controls": ["PCI-DSS-10.2.1.2", "PCI-DSS-10.2.1.5"], "user": "root", "category": "account_management",
                 "action": "grant"}, "events": 2},
        {"_id": {"controls": ["PCI-DSS-10.2.1.2"], "user": "root", "category": "account_management", "action": "grant"},
         "events": 3},
        {"_id": {"controls": ["PCI-DSS-10.2.1.2"], "user": "dba_bob", "category": "data_read", "action": "select"},
         "events": 5},
        {"_id": {"controls": ["SOX-ITGC-ACCESS"], "user": "app", "category": "data_read", "action": "select"},
         "events": 7},
    ]
    assert report.rows_for_control(by_list, "PCI-DSS-10.2.1.2") == [  # a tie: in the order of the key's JSON
        {"_id": {"user": "root", "category": "account_management", "action": "grant"}, "events": 5},
        {"_id": {"user": "dba_bob", "category": "data_read", "action": "select"}, "events": 5}]
    assert report.rows_for_control(by_list, "PCI-DSS-10.2.1.5") == [
        {"_id": {"user": "root", "category": "account_management", "action": "grant"}, "events": 2}]
    assert report.rows_for_control(by_list, "PCI-DSS-10.2.1.7") == []


def test_chromium_keeps_its_sandbox_unless_run_as_root(monkeypatch):
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert report.chromium_sandbox() == []
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert report.chromium_sandbox() == ["--no-sandbox"]
