"""A review period that only the tiers together hold (docs/reports.md "A quarter's evidence"): three
days of a server's history brought in with `auditpipe import` (the archive, the evidence collection,
the hours and the rollups hold them; the capped collection does not) and then minutes of the same
server shipped live (the capped collection holds them, the archive once committed). Over the whole
period every count the catalog, the dashboards and a report give equals what the generator wrote,
each event once: events by name, failed logins per account, events per server and per hour, each
rollup form against its events form, the report's coverage and failed logins."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from auditpipe.evidence import dashboards, query, report, tiers
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-quarter"  # a configured source: its history imported, then its live minutes shipped
DAYS = 3


@pytest.fixture(scope="module")
def period(stack, tmp_path_factory):
    now = datetime.now(timezone.utc)
    start = (now - timedelta(days=DAYS)).replace(minute=0, second=0, microsecond=0)
    span = (now - timedelta(hours=2) - start).total_seconds()  # history ends two hours ago
    folder = tmp_path_factory.mktemp("quarter")
    history = simulate(folder / "audit.log", rate=6000 / span, duration=span, speedup=span / 20, seed=51,
                       rotate_on_size=256 * 1024, rotations=9, failed_login_burst=6, incidents=True, start_time=start)
    files = sorted(folder.glob("audit.log*"))
    imported = stack.cli("import", *map(str, files), "--server", SERVER)
    assert f"imported {history.records:,} events" in imported.stdout, imported.stdout
    assert stack.count(SERVER) == 0, "the history is in the tiers below the capped collection"

    live = simulate(stack.log_path(SERVER), rate=100, duration=30, speedup=10, seed=52, rotate_on_size=0,
                    failed_login_burst=6, start_time=now - timedelta(minutes=5))
    stack.stored_documents(SERVER, live.records)
    stack.wait_for("the live events' hours", lambda: (
        (n := sum(h["count"] for h in stack.db()[stack.cfg.store["stats_hourly_collection"]].find({"server": SERVER})))
        == history.records + live.records, n), timeout=120)
    return history, live, start, now + timedelta(minutes=30)


def both(history, live, attribute: str) -> dict:
    return dict(Counter(getattr(history, attribute)) + Counter(getattr(live, attribute)))


def test_the_catalog_counts_every_event_of_the_period_once(stack, period):
    history, live, since, until = period
    total = history.records + live.records
    read: list[str] = []
    by_name = Counter()
    for r in tiers.run_saved(stack.cfg, "events-by-name", since.isoformat(), until.isoformat(), [SERVER], {},
                             tiers_read=read):
        by_name[r["_id"]["event_name"]] += r["events"]
    assert dict(by_name) == both(history, live, "events_by_name")
    assert any(line.startswith("archive:") for line in read), read
    failed = Counter()
    for r in tiers.run_saved(stack.cfg, "failed-logins", since.isoformat(), until.isoformat(), [SERVER], {}):
        failed[r["_id"].get("user")] += r["attempts"]
    assert dict(failed) == both(history, live, "failed_logins_by_user")
    for name in ("events-by-server", "events-by-hour"):
        assert sum(r["events"] for r in tiers.run_saved(stack.cfg, name, since.isoformat(), until.isoformat(),
                                                        [SERVER], {})) == total, name
    stored_hours = tiers.run_saved(stack.cfg, "events-by-hour", since.isoformat(), until.isoformat(), [SERVER], {},
                                   tier="store")
    assert sum(r["events"] for r in stored_hours) == total, "the hours collection, imported and live"


def test_each_rollup_form_answers_its_events_form_over_the_tiers(stack, period):
    """Over the UTC days of the period, the daily rollups (imported chain and live) give the rows the
    events give from the archive and the capped collection."""
    _, _, since, until = period
    first_day = since.replace(hour=0)
    last_day = until.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    compared = 0
    for name, q in query.saved_queries().items():
        if "rollup" not in q:
            continue
        controls = ["PCI-DSS-10.2.1.2", "PCI-DSS-10.2.1.4", "SOX-ITGC-ACCESS"]
        used = query.params_used(q["pipeline"])
        for params in ([{"control": c} for c in controls] if "control" in used
                       else [{"controls": controls[:2]}, {"controls": controls}] if "controls" in used else [{}]):
            bound = {**params, "since": since, "until": until, "servers": [SERVER]}
            rolled = query.run_pipeline(stack.cfg, "rollups", query.bind(q["rollup"], bound))
            events = tiers.run_saved(stack.cfg, name, first_day.isoformat(), last_day.isoformat(), [SERVER], params)
            assert sorted(json.dumps(r, sort_keys=True, default=str) for r in rolled) == \
                sorted(json.dumps(r, sort_keys=True, default=str) for r in events), (name, params)
            compared += bool(events)
    assert compared >= 3, compared


def test_the_report_and_the_panels_count_what_was_generated(stack, period):
    history, live, since, until = period
    built = report.build(stack.cfg, "pci", since, until, [SERVER])
    (coverage,) = built.coverage
    assert coverage.events == history.records + live.records
    failed = Counter()
    for row in next(s for s in built.sections if s.key == "failed-logins").rows:
        failed[row["_id"].get("user")] += row["attempts"]
    assert dict(failed) == both(history, live, "failed_logins_by_user")

    health = json.loads((dashboards.OUT_DIR / "pipeline-health.json").read_text())
    pci = json.loads((dashboards.OUT_DIR / "pci-dss-10.json").read_text())
    shown = {}
    for d in (health, pci):
        for title, target in dashboards.panel_targets(d):
            shown[title] = stack.run_panel(target, *dashboards.panel_range(d, title, since, until), [SERVER])
    assert sum(r["count"] for r in shown["Events per hour by server"]) == history.records + live.records
    failed_panel = Counter()
    for r in shown["Invalid logical access attempts"]:
        failed_panel[r["_id"].get("user")] += r["attempts"]
    assert dict(failed_panel) == both(history, live, "failed_logins_by_user")
