"""The archive and the tamper-evidence chain end to end (docs/archive.md): every stored event is also
in the archive, once, with the same chain link; saved queries give the same answers over both; the
chain verifies clean, also with the oldest events trimmed from the store; and `auditpipe verify`
finds an edited, a deleted and a forged document in the store, the newest links deleted, a
backdated document without a link, and an edited row in the archive,
naming each event and exiting non-zero; a damaged archive file is named, never a traceback. An
insider with the store's credentials who edits an event and recomputes every link and head after it
in the store is named too: the heads are signed with a key the store never sees (docs/security.md). So is
a correctly linked append (each link carries a MAC of a key the store never sees), and a chain emptied
from the store while its signed heads name its links."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest

from auditpipe.archive import mongo_sql, reader
from auditpipe.evidence import chain, query
from auditpipe.tools.simulate import simulate

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]


def normalized(rows: list[dict]) -> list[str]:
    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    return sorted(json.dumps(clean(r), sort_keys=True, default=str) for r in rows)


def test_the_archive_holds_the_stored_events_and_verify_finds_each_tampering(stack):
    server = "e2e-archive"
    m = simulate(stack.log_path(server), rate=100, duration=60, speedup=10, seed=21, rotate_on_size=128 * 1024,
                 rotations=3, failed_login_burst=6, incidents=True)
    stack.assert_stored_and_counted_exactly_once(server, m)  # and the store's chain is 1..n, intact
    rows = stack.assert_archived_exactly(server)
    assert len(rows) == m.records

    db = stack.db()
    events = db[stack.cfg.store["events_collection"]]
    stack.wait_for_heads_at(server, m.records, archive=True)

    alerts = db[stack.cfg.store["alerts_collection"]]
    # (raised once the watermark passes the missing record plus the rule's 30 s grace: hence a minute of traffic)
    stack.wait_for("the record_gap alerts of the record deleted from the log and of the sequence's start", lambda: (
        (n := alerts.count_documents({"server": server, "rule": "record_gap"})) == 2, n), timeout=120)
    clean = stack.cli("verify", "--server", server, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "RESULT: the chains verify" in clean.stdout
    assert f"links 1 to {m.records} ({m.records} present), confirmed by" in clean.stdout, clean.stdout
    # the record deleted from the log (an incident) is a gap in the server's sequence, told apart
    assert f"SOURCE GAP {server} (unexplained, high): record {m.deleted_records[0]} is missing" in clean.stdout, \
        clean.stdout
    assert f"SOURCE GAP {server} (restart, low): The audit record numbering" in clean.stdout, clean.stdout
    assert "(2, alert record_gap: 1 restart, 1 unexplained)" in clean.stdout, clean.stdout
    by_time = sorted(events.find({"server": server}, {"event_time": 1, "chain_seq": 1}), key=lambda d: d["event_time"])
    lo, hi = by_time[len(by_time) // 3]["event_time"], by_time[2 * len(by_time) // 3]["event_time"]
    inside = [d["chain_seq"] for d in by_time if lo <= d["event_time"] < hi]
    window = stack.cli("verify", "--server", server, "--where", "store", "--from", lo.isoformat() + "Z",
                       "--to", hi.isoformat() + "Z", check=False)
    assert window.returncode == 0, window.stdout
    assert f"links {min(inside)} to {max(inside)} " in window.stdout, window.stdout

    # status shows both tiers
    tiers = {r["component"]: r for r in json.loads(stack.cli("status", "--json").stdout)}
    assert tiers["hot tier"]["health"] == "ok" and "oldest event" in tiers["hot tier"]["detail"], tiers["hot tier"]
    assert tiers["archive"]["health"] == "ok" and "of 400 days kept" in tiers["archive"]["detail"], tiers["archive"]
    shown = stack.cli("archive", "status").stdout
    assert f"{reader.span(stack.cfg.archive_path).events} events" in shown and "keeps 400 days" in shown, shown

    # the same saved queries over the store and the archive: the same answers
    compared = compared_with_rows = 0
    for name, q in query.saved_queries().items():
        if q["collection"] != "events":
            continue
        pipeline = query.bind(q["pipeline"], {"since": query.EPOCH, "until": query.FAR_FUTURE, "servers": [server],
                                              "control": "PCI-DSS-10.2.1.4",
                                              "controls": ["PCI-DSS-10.2.1.4", "PCI-DSS-10.2.1.2"]})
        from_store = query.run_pipeline(stack.cfg, "events", pipeline)
        from_archive = mongo_sql.run_pipeline(stack.cfg.archive_path, "events", pipeline, None, None)
        compared_with_rows += bool(from_store)  # some find nothing in this scenario (classified-ddl): equal still
        assert normalized(from_archive) == normalized(from_store), name
        compared += 1
    assert compared >= 8 and compared_with_rows >= 8
    times = sorted(d["event_time"] for d in events.find({"server": server}, {"event_time": 1}))
    window = ["--from", times[len(times) // 4].isoformat() + "Z", "--to", times[3 * len(times) // 4].isoformat() + "Z"]
    window += ["--server", server]  # the archive keeps the session's earlier modules' events too
    on_store = json.loads(stack.cli("query", "failed-logins", "--store", "--json", *window).stdout)
    on_archive = json.loads(stack.cli("query", "failed-logins", "--archive", "--json", *window).stdout)
    assert normalized(on_archive) == normalized(on_store)

    # the capped collection trims the oldest events: not an alarm
    by_link = sorted(events.find({"server": server}), key=lambda d: d["chain_seq"])
    for d in by_link[:50]:
        events.delete_one({"_id": d["_id"]})
    trimmed = stack.cli("verify", "--server", server, "--where", "store", check=False)
    assert trimmed.returncode == 0, trimmed.stdout
    assert "links 1 to 50 are not here" in trimmed.stdout

    # now tamper: edit, delete and forge in the store; edit a row of the archive
    edited, deleted, archived_edit = by_link[100], by_link[200], by_link[300]
    events.update_one({"_id": edited["_id"]}, {"$set": {"user": "mallory"}})
    events.delete_one({"_id": deleted["_id"]})
    forged = {k: v for k, v in by_link[400].items() if k != "_id"}
    forged.update(_id=f"{server}/forged", sqltext="SELECT 'all is well'")
    events.insert_one(forged)
    # the newest links deleted (the archive and the heads still name them), and a GRANT forged without a
    # link, backdated to before the chain's first event
    for d in by_link[-3:]:
        events.delete_one({"_id": d["_id"]})
    backdated = {k: v for k, v in by_link[400].items() if k not in ("chain_seq", "chain_digest")}
    backdated.update(_id=f"{server}/backdated", sqltext="GRANT ALL ON *.* TO 'mallory'@'%'",
                     ingest={**by_link[0]["ingest"], "timestamp": by_link[0]["ingest"]["timestamp"] - timedelta(days=1)})
    events.insert_one(backdated)
    con = reader.connect()
    files = reader.files_for(stack.cfg.archive_path, server=server)
    source = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "], filename = true, hive_partitioning = false)"
    target = con.execute(f"SELECT filename FROM {source} WHERE _id = ?", [archived_edit["_id"]]).fetchone()[0]
    rewritten = target + ".tmp"
    con.execute(f"""COPY (SELECT * REPLACE (CASE WHEN _id = ? THEN 'mallory' ELSE "user" END AS "user")
                    FROM read_parquet('{target}', hive_partitioning = false)) TO '{rewritten}' (FORMAT parquet)""",
                [archived_edit["_id"]])
    os.replace(rewritten, target)

    found = stack.cli("verify", "--server", server, check=False)
    out = found.stdout
    assert found.returncode == 1, out
    assert "TAMPERING OR LOSS DETECTED" in out

    def finding(where, kind, text):
        return finding_in(out, where, kind, text)

    assert finding("store", "EDITED", edited["_id"]), out
    assert finding("store", "DELETED", by_link[199]["_id"]) and finding("store", "DELETED", by_link[201]["_id"]), out
    assert finding("store", "INSERTED", f"{server}/forged"), out
    assert finding("store", "DELETED", f"links {m.records - 2} to {m.records} missing at the end, after event "
                   f"{by_link[-4]['_id']}"), out
    assert finding("store", "INSERTED", f"{server}/backdated"), out
    assert finding("archive", "EDITED", archived_edit["_id"]), out
    assert not finding("archive", "DELETED", ""), "the archive lost nothing"
    # what a pass reads again by id (chain.Kept.refresh: documents judged stale): as stored now, a deleted one not
    from auditpipe.evidence.verify import _stored_by_id

    again = _stored_by_id(stack.cfg, events, [edited["_id"], deleted["_id"]])
    assert list(again) == [edited["_id"]] and again[edited["_id"]]["user"] == "mallory", again

    # an archive file damaged (cut short): named by verify, query and status, never a traceback; put
    # back after (the session's later modules read the archive)
    damaged = files[0]
    whole = damaged.read_bytes()
    damaged.write_bytes(whole[:-64])
    try:
        found = stack.cli("verify", "--server", server, "--where", "archive", check=False)
        assert found.returncode == 1, found.stdout + found.stderr
        assert finding_in(found.stdout, "archive", "UNREADABLE", str(damaged)), found.stdout
        for tier in ("--archive", "--from=30d"):
            asked = stack.cli("query", "failed-logins", tier, check=False)
            assert asked.returncode != 0 and str(damaged) in asked.stderr and "Traceback" not in asked.stderr, asked.stderr
        tiers = {r["component"]: r for r in json.loads(stack.cli("status", "--json", check=False).stdout)}
        assert tiers["archive"]["health"] == "warning" and str(damaged) in tiers["archive"]["detail"], tiers["archive"]
    finally:
        damaged.write_bytes(whole)


def test_an_edit_with_every_link_and_head_after_it_recomputed_in_the_store_is_named(stack):
    server = "e2e-insider"
    m = simulate(stack.log_path(server), rate=50, duration=20, speedup=10, seed=27)
    stack.assert_stored_and_counted_exactly_once(server, m)
    db = stack.db()
    events = db[stack.cfg.store["events_collection"]]
    heads = db[stack.cfg.store["chain_heads_collection"]]
    stack.wait_for_heads_at(server, m.records, archive=True, signed=True)
    clean = stack.cli("verify", "--server", server, check=False)
    assert clean.returncode == 0 and "RESULT: the chains verify" in clean.stdout, clean.stdout

    # the insider: one event's user changed, then every link after it and every head in the store made to match
    by_link = sorted(events.find({"server": server}), key=lambda d: d["chain_seq"])
    k = len(by_link) // 2
    previous = by_link[k - 1]["chain_digest"]
    digests = {}
    for i, d in enumerate(by_link[k:]):
        if i == 0:
            d["user"] = "mallory"
        previous = digests[d["chain_seq"]] = chain.link(previous, d)
        events.update_one({"_id": d["_id"]}, {"$set": {"user": d["user"], "chain_digest": previous}})
    rewritten = 0
    for h in heads.find({"server": server, "seq": {"$gte": by_link[k]["chain_seq"]}}):
        heads.update_one({"_id": h["_id"]}, {"$set": {"digest": digests[h["seq"]]}})
        rewritten += 1
    assert rewritten
    store_only = stack.cli("verify", "--server", server, "--where", "store", check=False)
    assert store_only.returncode == 1, store_only.stdout
    forged = finding_in(store_only.stdout, "chain_heads", "FORGED_HEAD", "did not sign")
    assert len(forged) == rewritten, store_only.stdout
    # the rewritten links carry the MACs of the old digests: the link key is not the store's to use
    assert finding_in(store_only.stdout, "store", "UNAUTHENTICATED",
                      f"links {by_link[k]['chain_seq']} to {by_link[-1]['chain_seq']} carry a MAC the link key does "
                      "not give"), store_only.stdout
    both = stack.cli("verify", "--server", server, check=False)
    assert both.returncode == 1, both.stdout
    assert finding_in(both.stdout, "store", "HEAD_MISMATCH", "rewritten"), both.stdout

    # the heads removed instead: the archive's manifest still anchors the chain (its heads are signed)
    heads.delete_many({"server": server, "seq": {"$gte": by_link[k]["chain_seq"]}})
    removed = stack.cli("verify", "--server", server, check=False)
    assert removed.returncode == 1, removed.stdout
    assert finding_in(removed.stdout, "store", "HEAD_MISMATCH", "rewritten"), removed.stdout


def test_a_correctly_linked_append_and_an_emptied_chain_are_named(stack):
    """Whoever holds the store's credentials appends the next link of a quiet server's chain, its digest
    right and its event time ahead of the clock (so that no head is due yet): the link key it lacks names
    it. Then it removes the server's every event: the signed heads name links the store should hold."""
    server = "e2e-appender"
    m = simulate(stack.log_path(server), rate=50, duration=10, speedup=10, seed=31)
    stack.assert_stored_and_counted_exactly_once(server, m)
    db = stack.db()
    events = db[stack.cfg.store["events_collection"]]
    stack.wait_for_heads_at(server, m.records, signed=True)
    last = max(events.find({"server": server}), key=lambda d: d["chain_seq"])
    assert isinstance(last.get("chain_mac"), str) and len(last["chain_mac"]) == 32, last
    forged = {k: v for k, v in last.items() if k not in ("_id", "chain_mac")}
    forged.update(_id=f"{server}/appended", chain_seq=last["chain_seq"] + 1,
                  sqltext="GRANT ALL ON *.* TO 'mallory'@'%'", event_time=last["event_time"] + timedelta(days=1))
    forged["chain_digest"] = chain.link(last["chain_digest"], forged)
    events.insert_one(forged)
    found = stack.cli("verify", "--server", server, "--where", "store", check=False)
    assert found.returncode == 1, found.stdout
    assert finding_in(found.stdout, "store", "UNAUTHENTICATED", f"link {forged['chain_seq']} event {server}/appended"), \
        found.stdout
    # timed a day ahead of its shipping without the flag the job sets on such an event
    assert finding_in(found.stdout, "store", "TIME_AHEAD", f"link {forged['chain_seq']} event {server}/appended"), \
        found.stdout

    # the chain emptied: the archive (committed after the store had the events) holds links the store
    # lacks, and the store holds nothing older that the capped collection would have trimmed first
    stack.wait_for("the archive holding every link", lambda: (
        (n := len(reader.chain_rows(stack.cfg.archive_path, server))) == m.records, n), timeout=60)
    events.delete_many({"server": server})
    emptied = stack.cli("verify", "--server", server, check=False)
    assert emptied.returncode == 1, emptied.stdout
    assert finding_in(emptied.stdout, "store", "DELETED", f"none of its links are in the store, though the archive "
                      f"holds links up to {m.records}"), emptied.stdout


def finding_in(out: str, where: str, kind: str, text: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"{where}:") and f": {kind}:" in line and text in line]
