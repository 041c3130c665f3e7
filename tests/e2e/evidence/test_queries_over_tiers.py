"""Queries and reports over the tiers (docs/queries.md "Tiers"). Three days of one server's traffic
go through the real stack into the store and the archive. Then the store loses the first two days
(as the capped collection trims its oldest) and holds events the archive does not hold yet (copies
of the newest with links past the archive's, as the job writes them seconds before the archive
commits them). Every events query of the catalog, read from the tiers, equals its answer on the
whole store taken before the trim, each event counted once; neither tier alone gives it; `query`
and `report` say which tiers they read."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from auditpipe.evidence import query, tiers
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-tiers"
DAYS = 3
NOT_ARCHIVED = 40  # events the store holds and the archive does not (yet)


def normalized(rows: list[dict]) -> list[str]:
    return [json.dumps(r, sort_keys=True, default=str) for r in rows]  # in order: the order is part of the answer


@pytest.fixture(scope="module")
def scenario(stack):
    start = (datetime.now(timezone.utc) - timedelta(days=DAYS)).replace(minute=0, second=0, microsecond=0)
    span = DAYS * 86400
    m = simulate(stack.log_path(SERVER), rate=6000 / span, duration=span, speedup=span / 10, seed=31,
                 rotate_on_size=256 * 1024, rotations=1, failed_login_burst=6, incidents=True, start_time=start)
    stored = stack.stored_documents(SERVER, m.records)
    assert len(stored) == m.records
    stack.assert_archived_exactly(SERVER)
    return m, start, stored


def test_the_stats_queries_events_forms_count_what_the_stats_count(stack, scenario):
    """A stats query's events form (schemas/queries.yaml), over the tiers, gives the rows the stats
    give, and the events too late for their minute's count besides (the stats' dead letters: the
    rotations' late writes reach the job after newer lines): the reports' coverage and silences read
    it when the archive holds the period."""
    m, start, _ = scenario

    def too_late() -> int:
        return sum(1 for d in stack.dead_letters(SERVER) if d["stage"] == "stats")

    def counted() -> tuple[bool, dict]:
        n = {"records": m.records, "in the stats": stack.stats_total(SERVER), "too late": too_late()}
        return n["in the stats"] + n["too late"] == m.records, n

    stack.wait_for("every event counted in the stats or too late for them", counted)
    since, until = (start - timedelta(hours=1)).isoformat(), (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    names = sorted(n for n, q in query.saved_queries().items() if "events" in q)
    assert names == ["events-by-hour", "events-by-server", "stats-by-minute"]
    hours = stack.db()[stack.cfg.store["stats_hourly_collection"]]
    stack.wait_for("the hours summed from the minutes", lambda: (
        sum(d["count"] for d in hours.find({"server": SERVER})) == stack.stats_total(SERVER), stack.stats_total(SERVER)))
    for name in names:
        read: list[str] = []
        tiered = tiers.run_saved(stack.cfg, name, since, until, [SERVER], {}, tiers_read=read)
        assert any(line.startswith(f"archive: {m.records:,} events") for line in read), read
        assert sum(r["events"] for r in tiered) == m.records, name
        on_store = {json.dumps(r["_id"], default=str): r["events"]
                    for r in tiers.run_saved(stack.cfg, name, since, until, [SERVER], {}, tier="store")}
        counted = {json.dumps(r["_id"], default=str): r["events"] for r in tiered}
        assert set(on_store) <= set(counted) and all(on_store[k] <= counted[k] for k in on_store), name
        assert sum(counted.values()) - sum(on_store.values()) == too_late(), name


def test_every_events_query_over_the_tiers_equals_the_whole_store(stack, scenario, tmp_path):
    m, start, stored = scenario
    events = stack.db()[stack.cfg.store["events_collection"]]
    by_link = sorted(stored, key=lambda d: d["chain_seq"])
    newest = by_link[-1]["chain_seq"]
    events.insert_many([{**d, "_id": f"{d['_id']}#not-archived", "chain_seq": newest + i}
                        for i, d in enumerate(by_link[-NOT_ARCHIVED:], start=1)])
    # read from FerretDB's file newest first (the archive's newest link of each server as the bound):
    # exactly those, as FerretDB itself returns them
    if stack.cfg.store_uses_local_ferretdb:
        from auditpipe.store.ferretdb import newest_unarchived

        read = newest_unarchived(stack.cfg, events.name, {SERVER: newest}, 2500)
        assert sorted(read, key=lambda d: d["_id"]) == sorted(events.find({"_id": {"$regex": "#not-archived$"}}),
                                                              key=lambda d: d["_id"])
    since, until = (start - timedelta(hours=1)).isoformat(), (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    params = {"control": "PCI-DSS-10.2.1.4", "controls": ["PCI-DSS-10.2.1.4", "PCI-DSS-10.2.1.2"]}
    names = [n for n, q in query.saved_queries().items() if q["collection"] == "events"]
    assert len(names) >= 15

    def answers(tier: str) -> dict[str, list[str]]:
        return {n: normalized(tiers.run_saved(stack.cfg, n, since, until, [SERVER], params, tier=tier)) for n in names}

    whole = answers("store")  # every event and the not-archived ones, before the trim
    assert sum(json.loads(r)["events"] for r in whole["events-by-name"]) == m.records + NOT_ARCHIVED

    cut = start + timedelta(days=DAYS - 1)
    trimmed = events.delete_many({"server": SERVER, "event_time": {"$lt": cut}}).deleted_count
    assert trimmed > m.records // 2, "the store keeps the last day only"

    read: list[str] = []
    tiered = {n: normalized(tiers.run_saved(stack.cfg, n, since, until, [SERVER], params, tiers_read=read))
              for n in names}
    for n in names:
        assert tiered[n] == whole[n], n
    assert any(line.startswith(f"store: {NOT_ARCHIVED} events") for line in read), read
    assert any(line.startswith(f"archive: {m.records:,} events") for line in read), read
    assert answers("archive")["events-by-name"] != whole["events-by-name"], "the archive alone lacks the newest"
    assert answers("store")["events-by-name"] != whole["events-by-name"], "the store alone lacks the first days"

    # the CLI says what each tier held; the report's sections too, and count the same
    r = stack.cli("query", "events-by-name", "--server", SERVER, "--from", since, "--to", until, "--json")
    assert normalized(json.loads(r.stdout)) == whole["events-by-name"]
    assert f"read: store: {NOT_ARCHIVED} events" in r.stderr and f"read: archive: {m.records:,} events" in r.stderr, r.stderr
    page = tmp_path / "pci.html"
    stack.cli("report", "pci", "--server", SERVER, "--from", since, "--to", until, "--out", str(page))
    html = page.read_text(encoding="utf-8")
    assert f'data-tiers="account-changes">Read from archive: {m.records:,} events' in html
    assert f"store: {NOT_ARCHIVED} events" in html
    assert 'data-tiers="alerts">Read from store: the alerts collection' in html
    assert "immediately available: the archive and the store" in html
