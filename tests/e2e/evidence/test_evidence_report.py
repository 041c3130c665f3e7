"""Evidence reports end to end (docs/reports.md): a scenario with known answers (fixed-seed traffic
with the simulator's incidents: a brute force, a password spray, a privilege escalation, PHI read
by a service account, the audit log turned off, a record deleted from the log) goes through the
real stack; the PCI DSS, HIPAA, SOX, SOC 2 and NIST SP 800-53 reports are written by the CLI, and every section is checked
against the scenario's manifest, or where the manifest cannot know (the job's classification),
against the store with a pipeline written here. Then the PCI report is opened in a real headless
Chromium: no console errors, no network request, every chart drawn, the numbers on the page those
of the evidence."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from datetime import datetime, timedelta

import pytest

from auditpipe.evidence import frameworks, query, regimes, report
from auditpipe.tools.simulate import GRANT_PASSWORD, percona_time, simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-report"


def iso(t: datetime) -> str:
    return report._plain(t)


@pytest.fixture(scope="module")
def scenario(stack, tmp_path_factory):
    # a minute of traffic: the record_gap alert comes once the watermark passes the missing record plus 30 s
    m = simulate(stack.log_path(SERVER), rate=100, duration=60, speedup=10, seed=17, rotate_on_size=256 * 1024,
                 rotations=1, failed_login_burst=6, incidents=True)
    stack.assert_stored_and_counted_exactly_once(SERVER, m)
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]
    expected = sorted((a["rule"], a["subject"]) for a in m.expected_alerts)
    stack.wait_for("the incidents' alerts", lambda: (
        sorted((a["rule"], a["subject"]) for a in alerts.find({"server": SERVER})) == expected,
        [a["rule"] for a in alerts.find({"server": SERVER})]), timeout=150)
    stack.wait_for("the one-minute counts of every event", lambda: (
        (n := stack.stats_total(SERVER)) == m.records, n), timeout=120)
    first, last = percona_time(m.first_event_time), percona_time(m.last_event_time)
    since = first.replace(second=0) - timedelta(minutes=30)  # a silence of 30 minutes before the traffic
    until = last.replace(second=0) + timedelta(minutes=2)
    out = tmp_path_factory.mktemp("reports")
    pages = {}
    for regime in regimes.REGIMES:
        f = out / f"{regime}.html"
        pdf = ["--pdf"] if regime == "sox" and shutil.which("chromium") else []
        r = stack.cli("report", regime, "--server", SERVER, "--from", iso(since), "--to", iso(until), "--out", str(f),
                      *pdf)
        assert str(f) in r.stdout and "evidence SHA-256:" in r.stdout, r.stdout
        if pdf:
            printed = f.with_suffix(".pdf")
            assert printed.read_bytes()[:5] == b"%PDF-" and printed.stat().st_size > 20_000, r.stdout
        pages[regime] = f
    return m, since, until, pages


def evidence_of(page: str) -> tuple[dict, str]:
    block = re.search(r'<script type="application/json" id="evidence">(.*?)</script>', page, re.S).group(1)
    return json.loads(block), hashlib.sha256(block.encode("ascii")).hexdigest()


def store_count(stack, since, until, **match) -> int:
    """The events of SERVER in the range matching ``match``, counted with a pipeline of this test's own."""
    rows = query.run_pipeline(stack.cfg, "events", [
        {"$match": {"server": SERVER, "event_time": {"$gte": since, "$lt": until}, **match}}, {"$count": "n"}])
    return rows[0]["n"] if rows else 0


def test_each_section_holds_exactly_the_scenario(stack, scenario):
    m, since, until, pages = scenario
    page = pages["pci"].read_text(encoding="utf-8")
    ev, digest = evidence_of(page)
    assert f'data-figure="digest">{digest}<' in page, "the digest shown is the SHA-256 of the evidence block"
    assert ev["regime"] == "pci" and ev["servers"] == [SERVER]
    assert ev["since"] == iso(since) and ev["until"] == iso(until)

    # coverage: every event, first and last as written, one silence: the 30 minutes before the traffic
    first, last = percona_time(m.first_event_time), percona_time(m.last_event_time)
    assert ev["coverage"] == [{"server": SERVER, "events": m.records, "first": iso(first), "last": iso(last),
                               "silences": [[iso(since), iso(first.replace(second=0))]]}], ev["coverage"]

    # failed logins, per account, as generated
    by_user = Counter()
    for row in ev["sections"]["failed-logins"]:
        by_user[row["_id"]["user"]] += row["attempts"]
    assert dict(by_user) == m.failed_logins_by_user

    # the alerts: exactly the incidents', split into the sections that show them
    expected = sorted((a["rule"], a["subject"]) for a in m.expected_alerts)
    assert sorted((a["rule"], a["subject"]) for a in ev["sections"]["alerts"]) == expected
    assert sorted(a["rule"] for a in ev["sections"]["login-alerts"]) == ["brute_force", "password_spray"]
    assert sorted((a["rule"], a.get("gap_class", "")) for a in ev["sections"]["audit-trail"]) == [
        ("audit_stopped", ""), ("record_gap", "restart"), ("record_gap", "unexplained")], "the gaps with their class"

    # the privilege escalation is an account change; PHI read by a service account a violation
    grants = [r for r in ev["sections"]["account-changes"] if r.get("user") == "reporting"]
    assert [g["sqltext"] for g in grants] == [f"GRANT ALL PRIVILEGES ON *.* TO 'reporting'@'%' IDENTIFIED BY "
                                              f"'{'*' * len(GRANT_PASSWORD)}' WITH GRANT OPTION"], "its password masked"
    assert len(ev["sections"]["account-changes"]) == store_count(stack, since, until, category="account_management")
    assert ("batch", ["hipaa_ephi"]) in [(r["_id"]["user"], r["_id"]["access_violations"])
                                         for r in ev["sections"]["access-violations"]]

    # each control's figure is the store's count of its events
    for c in ev["controls"]:
        assert c["events"] == store_count(stack, since, until, controls=c["control"]), c
        assert sum(r["events"] for r in ev["control_details"][c["control"]]) == c["events"], c["control"]
    assert [c["control"] for c in ev["controls"]] == [f"PCI-DSS-10.2.1.{i}" for i in range(1, 8)]
    failed = next(c for c in ev["controls"] if c["control"] == "PCI-DSS-10.2.1.4")["events"]
    assert failed >= m.failed_logins

    # PCI's classified data is the cardholder data: the scenario's card statements are by svc_payments
    cardholder = Counter()
    for r in ev["sections"]["classified-access"]:  # by user, principal class and category
        cardholder[r["_id"]["user"]] += r["events"]
    assert cardholder["svc_payments"] >= 3 and "batch" not in cardholder, cardholder
    assert sum(cardholder.values()) == store_count(stack, since, until, data_classes="pci_cardholder")
    # after hours (tests/helpers/stack.py's business hours): the job's after_hours, counted here from the store
    assert sum(r["events"] for r in ev["sections"]["after-hours"]) == store_count(
        stack, since, until, data_classes="pci_cardholder", after_hours=True)

    # the same evidence, the same digest: a second report of the same period is the same report
    again = pages["pci"].with_name("pci-again.html")
    stack.cli("report", "pci", "--server", SERVER, "--from", iso(since), "--to", iso(until), "--out", str(again))
    assert evidence_of(again.read_text(encoding="utf-8"))[1] == digest


def test_hipaa_and_sox_reports_show_their_own_controls_and_classes(stack, scenario):
    m, since, until, pages = scenario
    hipaa, _ = evidence_of(pages["hipaa"].read_text(encoding="utf-8"))
    assert [c["control"] for c in hipaa["controls"]] == ["HIPAA-164.312(b)", "HIPAA-164.308(a)(5)(ii)(C)"]
    phi = Counter()
    for r in hipaa["sections"]["classified-access"]:
        phi[r["_id"]["user"]] += r["events"]
    assert phi["batch"] >= 1 and sum(phi.values()) == store_count(stack, since, until, data_classes="hipaa_ephi")
    sox, _ = evidence_of(pages["sox"].read_text(encoding="utf-8"))
    assert [c["control"] for c in sox["controls"]] == ["SOX-ITGC-ACCESS", "SOX-ITGC-CHANGE"]
    for ev in (hipaa, sox):
        for c in ev["controls"]:
            assert c["events"] == store_count(stack, since, until, controls=c["control"]), c
        assert ev["coverage"][0]["events"] == m.records


def test_soc2_and_nist_reports_count_each_requirement_by_its_control_tags(stack, scenario):
    """A requirement of SOC 2 or NIST SP 800-53 counts the events carrying any of its control tags,
    each once (framework-map.csv): the store's count of them, and what the shown command gives."""
    m, since, until, pages = scenario
    for regime in ("soc2", "nist"):
        ev, _ = evidence_of(pages[regime].read_text(encoding="utf-8"))
        wanted = frameworks.requirement_tags(regimes.REGIMES[regime].framework)
        assert [(c["control"], c["tags"]) for c in ev["controls"]] == [(rid, tags) for rid, _, tags in wanted]
        for c in ev["controls"]:
            assert c["events"] == store_count(stack, since, until, controls={"$in": c["tags"]}), (regime, c)
            assert sum(r["events"] for r in ev["control_details"][c["control"]]) == c["events"], (regime, c)
        assert sorted((a["rule"], a["subject"]) for a in ev["sections"]["alerts"]) == sorted(
            (a["rule"], a["subject"]) for a in m.expected_alerts)
        assert ev["coverage"][0]["events"] == m.records
    nist, _ = evidence_of(pages["nist"].read_text(encoding="utf-8"))
    logging = next(c for c in nist["controls"] if c["control"] == "AU-2")  # every tag maps to event logging
    assert logging["events"] == store_count(stack, since, until, **{"controls.0": {"$exists": True}})
    rerun = stack.cli("query", "events-for-controls", "--server", SERVER, "--from", iso(since), "--to", iso(until),
                      "--param", "controls=" + ",".join(logging["tags"]), "--json")
    assert sum(r["events"] for r in json.loads(rerun.stdout)) == logging["events"]


def test_the_report_in_a_real_browser(stack, scenario, tmp_path):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (`./auditpipe test` installs it when run as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a test dependency (pyproject.toml)")
    _, _, _, pages = scenario
    page_file = pages["pci"]
    ev, _ = evidence_of(page_file.read_text(encoding="utf-8"))
    requests, problems = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            *report.chromium_sandbox(), "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        assert requests == [page_file.as_uri()], f"the page asked for nothing but itself: {requests}"
        assert problems == []
        for chart in ("evidence-per-control", "events-over-time", "failed-logins"):
            marks = page.locator(f'[data-chart="{chart}"] svg .mark-rect path, [data-chart="{chart}"] svg .mark-line path')
            assert marks.count() > 0, f"chart {chart} has no marks"
            box = page.locator(f'[data-chart="{chart}"] svg').bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50, (chart, box)
        for c in ev["controls"]:
            shown = page.locator(f'[data-figure="control:{c["control"]}"]').inner_text()
            assert int(shown) == c["events"], c
        assert int(page.locator(f'[data-figure="events:{SERVER}"]').inner_text()) == ev["coverage"][0]["events"]
        rows = page.locator('table[data-section="failed-logins"] tr')
        assert rows.count() == 1 + len(ev["sections"]["failed-logins"])
        shot = tmp_path / "report.png"
        page.set_viewport_size({"width": 1200, "height": 1600})
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 20_000
        browser.close()
    # README's picture of the report is this screenshot: AUDITPIPE_REPORT_SCREENSHOT=docs/images/report-pci.png
    if os.environ.get("AUDITPIPE_REPORT_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["AUDITPIPE_REPORT_SCREENSHOT"])
