"""The evidence report's parts that need no store (cli/auditpipe/evidence/report.py): silence periods, the
digest and its evidence block, HTML escaping of what the audit log holds, the charts. The report
itself is built from the real store in tests/e2e/test_evidence_report.py."""

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone

from auditpipe.evidence import report

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
    r = report.Report(report.REGIMES["pci"], T0, T0 + timedelta(hours=1), ["db-01"], T0 + timedelta(hours=2))
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
    assert set(svgs) == {"events-per-minute", "evidence-per-control", "failed-logins"}
    for name, svg in svgs.items():
        assert svg.startswith("<svg") and 'class="mark-' in svg, name


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
