"""Incremental verification (evidence/verify.py ``after``, stack/verification.py) against the real local
store alone: FerretDB, no Kafka or Flink. The events are written here, linked as the job links them
(evidence/chain.py, whose digests tests/unit/evidence/test_chain.py holds to the job's), in a capped
collection as the job's. What an incremental pass finds without reading again what it verified
before, what it leaves to the full pass, and when it falls back to one."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from auditpipe import config, paths
from auditpipe.evidence import verify
from auditpipe.evidence.chain import link
from auditpipe.stack import verification
from auditpipe.stack.components.store import LocalStore
from auditpipe.store.client import mongo_client

pytestmark = pytest.mark.e2e

STORE_PORT = 27817
LONG_AGO = datetime.now(timezone.utc) - timedelta(hours=1)  # heads older than the in-flight window


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental")
    f = root / "auditpipe.yaml"
    f.write_text(f"state_dir: {root / 'state'}\ntools_dir: {paths.REPO / '.auditpipe' / 'tools'}\n"
                 f"store: {{port: {STORE_PORT}, database: incremental, events_capped_size_mb: 64}}\n"
                 "archive: {enabled: false}\nchain: {watch_interval: 1m, full_verify_interval: 1h}\n")
    cfg = config.load(f)
    part = LocalStore(cfg)
    part.install()
    part.start()
    try:
        yield cfg
    finally:
        part.stop()


class Chains:
    """Each server's chain as the job writes it: events in the capped collection, a head per link."""

    def __init__(self, cfg):
        db = mongo_client(cfg)[cfg.store["database"]]
        self.events, self.heads = db[cfg.store["events_collection"]], db[cfg.store["chain_heads_collection"]]
        self.last: dict[str, tuple[int, str]] = {}

    def add(self, server: str, n: int) -> list[dict]:
        docs = self.link(server, n)
        self.store(docs)
        return docs

    def link(self, server: str, n: int) -> list[dict]:
        """The next ``n`` links of ``server``'s chain, not stored yet."""
        seq, previous = self.last.get(server, (0, ""))
        docs = []
        for _ in range(n):
            seq += 1
            d = {"_id": f"{server}/{seq}", "server": server, "sqltext": f"select {seq}",
                 "event_time": datetime(2026, 11, 26, 10, 0, seq % 60), "chain_seq": seq}
            d["chain_digest"] = previous = link(previous, d)
            docs.append(d)
        self.last[server] = (seq, previous)
        return docs

    def store(self, docs: list[dict]) -> None:
        """Stores linked ``docs`` (one server's) and a head for the last of them."""
        self.events.insert_many(docs)
        top = docs[-1]
        self.heads.insert_one({"_id": f"{top['server']}/head/{top['chain_seq']}", "server": top["server"],
                               "seq": top["chain_seq"], "digest": top["chain_digest"], "last_event_id": top["_id"],
                               "last_event_time": top["event_time"], "recorded_at": LONG_AGO})


def kinds(v: verify.Verification) -> list[tuple[str, str, int | None, str | None]]:
    return sorted(((f.kind, f.server, f.seq, f.event_id) for _, f in v.findings), key=str)


def test_a_pass_reads_what_is_new_and_leaves_old_edits_to_the_full_pass(store):
    chains = Chains(store)
    a = chains.add("db-a", 100)
    chains.add("db-b", 50)

    def run(after):
        return verify.verify(store, store=True, in_archive=False, after=after)

    full = run(verify.Progress())
    assert not full.incremental and kinds(full) == [], full.findings
    assert {s: x.seq for s, x in full.progress.anchors.items()} == {"db-a": 100, "db-b": 50}

    chains.add("db-a", 20)
    new = run(full.progress)
    assert new.incremental and kinds(new) == []
    assert {r.server: (r.first_seq, r.last_seq) for _, r in new.reports} == {"db-a": (101, 120), "db-b": (None, None)}
    assert {s: x.seq for s, x in new.progress.anchors.items()} == {"db-a": 120, "db-b": 50}

    # forged documents land after the marker, whatever link they claim
    chains.events.insert_one({"_id": "db-a/forged", "server": "db-a", "sqltext": "GRANT ALL ON *.* TO 'mallory'"})
    chains.events.insert_one(dict(a[4], _id="db-b/claims-5", server="db-b"))
    forged = run(new.progress)
    assert forged.incremental
    assert kinds(forged) == [("inserted", "db-a", None, "db-a/forged"), ("inserted", "db-b", 5, "db-b/claims-5")]
    quiet = run(forged.progress)
    assert quiet.incremental and kinds(quiet) == [], "a finding is raised once; the full pass finds it again"

    # an old event edited: the incremental pass does not read it again, the full pass names it
    chains.events.update_one({"_id": "db-a/10"}, {"$set": {"sqltext": "select nothing"}})
    assert kinds(run(quiet.progress)) == []
    again = run(verify.Progress())
    assert ("edited", "db-a", 10, "db-a/10") in kinds(again) and not again.incremental

    # the newest verified event (an anchor) edited: checked at every pass
    chains.events.update_one({"_id": "db-b/50"}, {"$set": {"user": "mallory"}})
    edited = run(again.progress)
    assert edited.incremental and ("edited", "db-b", 50, "db-b/50") in kinds(edited), edited.findings

    # new links with one missing, and a gap after the anchor
    chains.add("db-a", 5)
    chains.events.delete_one({"_id": "db-a/123"})
    gap = run(edited.progress)
    assert gap.incremental and ("deleted", "db-a", 123, None) in kinds(gap)


def test_a_deleted_anchor_or_marker_makes_the_pass_a_full_one(store):
    chains = Chains(store)
    chains.events.database.drop_collection(chains.events.name)
    chains.heads.delete_many({})
    chains.events.database.create_collection(chains.events.name, capped=True, size=64 << 20)
    chains.add("db-c", 30)
    first = verify.verify(store, store=True, in_archive=False, after=verify.Progress())
    assert kinds(first) == []

    # the newest three deleted (the anchor with them) though a head names link 30: read whole, named
    for seq in (28, 29, 30):
        chains.events.delete_one({"_id": f"db-c/{seq}"})
    tail = verify.verify(store, store=True, in_archive=False, after=first.progress)
    assert not tail.incremental and ("deleted", "db-c", 28, None) in kinds(tail), tail.findings

    # the same with their heads deleted too: the last pass saw link 30, which the store no longer holds
    chains.heads.delete_many({"server": "db-c", "seq": 30})
    chains.heads.insert_one({"_id": "db-c/head/27", "server": "db-c", "seq": 27, "digest": chains.events.find_one(
        {"_id": "db-c/27"})["chain_digest"], "recorded_at": LONG_AGO})
    assert ("deleted", "db-c", 28, None) not in kinds(verify.verify(store, store=True, in_archive=False)), \
        "the store alone is consistent again"
    unseen = verify.verify(store, store=True, in_archive=False, after=first.progress)
    assert ("deleted", "db-c", 28, None) in kinds(unseen), unseen.findings
    assert any("continuous verification found link 30" in f.detail for _, f in unseen.findings)

    chains.add("db-d", 10)
    base = verify.verify(store, store=True, in_archive=False, after=verify.Progress())
    marker = base.progress.marker
    assert marker == "db-d/10"
    chains.add("db-d", 3)
    chains.events.delete_one({"_id": marker})  # also db-d's anchor
    gone = verify.verify(store, store=True, in_archive=False, after=base.progress)
    assert not gone.incremental and ("deleted", "db-d", 10, None) in kinds(gone), gone.findings


def test_the_watch_keeps_its_place_and_runs_a_full_pass_when_due(store, monkeypatch):
    chains = Chains(store)
    chains.events.database.drop_collection(chains.events.name)
    chains.heads.delete_many({})
    chains.events.database.create_collection(chains.events.name, capped=True, size=64 << 20)
    chains.add("db-e", 10)
    monkeypatch.setattr(verification, "raise_alerts", lambda cfg, alerts: len(alerts))  # no Kafka here
    r = verification.run_pass(store)
    assert (r.kind, r.error, r.findings, r.servers) == ("full", "", 0, {"db-e": 10})
    chains.add("db-e", 5)
    chains.events.insert_one({"_id": "db-e/forged", "server": "db-e"})
    r = verification.run_pass(store)
    assert (r.kind, r.findings, r.servers) == ("incremental", 1, {"db-e": 15}), r
    r = verification.run_pass(store)
    assert (r.kind, r.findings) == ("incremental", 1), "an open finding stays open until a full pass"
    saved = verification.last_pass(store)
    assert saved["progress"]["anchors"]["db-e"][0] == 15 and saved["full"]["seconds"] >= 0
    monkeypatch.setattr(verification, "COST_FACTOR", 0)
    store.data["chain"]["full_verify_interval"] = "0s"
    try:
        r = verification.run_pass(store)
    finally:
        store.data["chain"]["full_verify_interval"] = "1h"
    assert (r.kind, r.findings) == ("full", 1), r


def test_a_batch_stored_after_the_one_above_it_while_a_pass_reads_is_no_deletion(store, monkeypatch):
    """The events' writer has two batches in flight on the local FerretDB, committed in either order: a
    pass whose walk begins between the two finds the older one's links missing where it has read. They
    are looked for again (verify._late_links) and verified there, and the next pass, which finds them
    stored after its marker, does not take them for inserts."""
    chains = Chains(store)
    chains.events.database.drop_collection(chains.events.name)
    chains.heads.delete_many({})
    chains.events.database.create_collection(chains.events.name, capped=True, size=64 << 20)
    monkeypatch.setattr(verification, "raise_alerts", lambda cfg, alerts: len(alerts))  # no Kafka here
    chains.add("db-g", 10)
    assert verification.run_pass(store).findings == 0
    real = verify._newest_first

    def racing(older: list[dict]):
        def walk(cfg, events, *at):
            rows = real(cfg, events, *at)
            yield next(rows)  # the walk has read its first page: it is past where ``older`` belongs
            chains.events.insert_many(older)
            yield from rows
        return walk

    older, newer = chains.link("db-g", 20), chains.link("db-g", 20)
    chains.store(newer)
    monkeypatch.setattr(verify, "_newest_first", racing(older))
    r = verification.run_pass(store)
    assert (r.kind, r.error, r.findings, r.servers) == ("incremental", "", 0, {"db-g": 50}), r
    assert sorted(verification.last_pass(store)["progress"]["seen"]) == sorted(d["_id"] for d in older)

    older, newer = chains.link("db-g", 20), chains.link("db-g", 20)
    chains.store(newer)
    monkeypatch.setattr(verify, "_newest_first", racing(older))
    v = verify.verify(store, store=True, in_archive=False)
    assert kinds(v) == [] and any("stored while the pass read" in n for n in v.notes), (v.findings, v.notes)

    monkeypatch.setattr(verify, "_newest_first", real)
    chains.add("db-g", 5)
    r = verification.run_pass(store)
    assert (r.kind, r.findings, r.servers) == ("incremental", 0, {"db-g": 95}), r
    chains.events.delete_one({"_id": "db-g/93"})
    chains.add("db-g", 2)
    r = verification.run_pass(store)
    assert (r.kind, r.findings) == ("incremental", 0), "link 93 was verified: an incremental pass does not look back"
    chains.events.delete_one({"_id": "db-g/96"})
    chains.add("db-g", 2)
    started = time.monotonic()
    v = verify.verify(store, store=True, in_archive=False, after=verify.Progress())
    assert ("deleted", "db-g", 93, None) in kinds(v) and ("deleted", "db-g", 96, None) in kinds(v), v.findings
    assert time.monotonic() - started < verify.LATE_WAIT_S, "a quiet store is not waited for"
