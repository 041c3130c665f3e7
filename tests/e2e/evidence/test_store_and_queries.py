"""The store as set up by `auditpipe up`, and every saved query, on the real FerretDB."""

from __future__ import annotations

import json

import pytest

from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.evidence import query, tiers
from auditpipe.store.client import is_ferretdb
from auditpipe.store.collections import BASE_INDEXES, EXPIRING, QUERY_INDEXES, ensure_collections
from auditpipe.store.ferretdb import ID_LOOKUP_INDEX_SUFFIX
from auditpipe.store.trimming import TRIM_CHAIN_WINDOW, trim_capped_collections
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e


def scratch_database(stack, name: str):
    """The stack's configuration with ``name`` as the store's database, and that database, emptied."""
    data = json.loads(json.dumps(stack.cfg.data))
    data["store"]["database"] = name
    db = stack.db().client[name]
    db.client.drop_database(name)
    return Config(data=data, file=stack.cfg.file), db


def test_events_collection_is_capped_with_the_configured_size(stack):
    options = stack.db()[stack.cfg.store["events_collection"]].options()
    assert options.get("capped") is True
    assert options.get("size") == stack.cfg.store["events_capped_size_mb"] * 1024 * 1024


def test_setup_creates_the_indexes_this_store_uses(stack):
    """FerretDB: the base indexes only, none on events (it uses none for filters, so the query indexes
    would only slow inserts); MongoDB: the query catalog's indexes too (docs/queries.md "Indexes")."""
    db = stack.db()
    ferretdb = is_ferretdb(db)
    wanted = BASE_INDEXES if ferretdb else BASE_INDEXES + QUERY_INDEXES

    def check():
        for role in {r for r, _, _ in BASE_INDEXES + QUERY_INDEXES}:
            collection = stack.cfg.store[role]
            have = {i["name"]: list(i["key"].items()) for i in db[collection].list_indexes() if i["name"] != "_id_"}
            ttl = {} if ferretdb else {f"{field}_ttl": [(field, 1)] for r, field in EXPIRING if r == role}
            assert have == {name: key for r, key, name in wanted if r == role} | ttl, collection

    check()
    if ferretdb:  # a store set up by an older auditpipe: its events indexes go, an index of the user's stays
        events = db[stack.cfg.store["events_collection"]]
        events.create_index([("event_time", 1)], name="event_time")
        events.create_index([("user", 1)], name="users_own")
        try:
            notes = ensure_collections(stack.cfg)
            assert [n for n in notes if n.startswith("dropped index")] == [
                f"dropped index event_time of {events.name}: FerretDB uses no index but _id for a query, and each "
                'other one slows every insert (docs/queries.md "Indexes")'], notes
            assert "users_own" in {i["name"] for i in events.list_indexes()}
        finally:
            events.drop_index("users_own")
        check()


UNCAPPED_ROLES = ["evidence_collection", "rollups_collection", "stats_collection", "dead_letter_collection",
                  "alerts_collection", "chain_heads_collection", "servers_collection"]


def _id_lookup_plan(db, collection: str) -> str:
    """FerretDB's explain of a find by _id: SQLite's query plan of the very statement it runs.

    An EXPLAIN is planned with the schema its pooled connection last read, and a connection reads a
    changed schema on its next real statement: so a find first, and again (the pool has several
    connections) until the plan names an index or 20 tries have passed."""
    for _ in range(20):
        db[collection].find_one({"_id": "any-id"})
        plan = " ".join(db.command("explain", {"find": collection, "filter": {"_id": "any-id"}})["queryPlanner"]["Plan"])
        if "USING INDEX" in plan:
            break
    return plan


def test_lookups_by_id_on_the_local_store_search_an_index(stack):
    """FerretDB 1.24 compares _id through an expression its own _id index is not on, so without the index
    setup adds, every upsert of the stats writer reads the whole collection (cli/auditpipe/store/,
    docs/store.md). Checked in a scratch database: set up, filled, a collection dropped and set up again."""
    if not stack.cfg.store_uses_local_ferretdb:
        pytest.skip("only the local FerretDB needs it: MongoDB answers lookups by _id from its _id index")
    cfg, db = scratch_database(stack, "auditpipe_id_lookups")
    try:
        ensure_collections(cfg)
        stats = db[cfg.store["stats_collection"]]
        stats.insert_many([{"_id": f"key-{i}", "n": 1} for i in range(20_000)])
        for role in UNCAPPED_ROLES:
            plan = _id_lookup_plan(db, cfg.store[role])
            assert "SEARCH" in plan and ID_LOOKUP_INDEX_SUFFIX in plan, (role, plan)
        # the capped collections are only appended to: no such index
        assert "SCAN" in _id_lookup_plan(db, cfg.store["events_collection"])
        db.drop_collection(cfg.store["stats_collection"])
        ensure_collections(cfg)
        stats.insert_one({"_id": "after-recreation", "n": 1})
        plan = _id_lookup_plan(db, cfg.store["stats_collection"])
        assert "SEARCH" in plan and ID_LOOKUP_INDEX_SUFFIX in plan, plan
        # upserts by _id still do what they did: update the one, insert the missing
        from pymongo import UpdateOne
        stats.bulk_write([UpdateOne({"_id": "after-recreation"}, {"$inc": {"n": 1}}, upsert=True),
                          UpdateOne({"_id": "new"}, {"$inc": {"n": 1}}, upsert=True)])
        assert {d["_id"]: d["n"] for d in stats.find()} == {"after-recreation": 2, "new": 1}
    finally:
        db.client.drop_database("auditpipe_id_lookups")
    # and the stack's own collections, set up by `auditpipe up`
    own = stack.db()
    for role in UNCAPPED_ROLES:
        plan = _id_lookup_plan(own, stack.cfg.store[role])
        assert "SEARCH" in plan and ID_LOOKUP_INDEX_SUFFIX in plan, (role, plan)


def test_trimming_removes_a_prefix_of_each_servers_chain_when_batches_arrived_out_of_order(stack):
    """The events' writer has two batches in flight on FerretDB, so a server's newer links can reach the
    store before older ones (and a retried batch always does). Trimming removes the oldest inserts; cut
    between two such batches, it would leave a hole that verify reports as a deletion. Here one server's
    links 201-300 are inserted before 101-200, another server's in order, and the cap (250 documents of
    450) would cut inside 201-300: the trim keeps all of them and removes fewer."""
    if not stack.cfg.store_uses_local_ferretdb:
        pytest.skip("the supervisor trims only the local FerretDB; MongoDB trims its capped collections itself")
    cfg, db = scratch_database(stack, "auditpipe_trim_order")
    try:
        events = db.create_collection("events", capped=True, size=64 * 1024 * 1024, max=250)

        def links(server, first, last, chain=1):
            return [{"_id": f"{server}/{chain}/{n}", "server": server, "chain_seq": n} for n in range(first, last + 1)]

        for batch in (links("a", 1, 100), links("a", 201, 300), links("a", 101, 200), links("b", 1, 50),
                      links("a", 301, 400)):
            events.insert_many(batch)
        trimmed = {t.collection: t for t in trim_capped_collections(cfg)}
        kept = sorted(d["chain_seq"] for d in events.find({"server": "a"}))
        assert kept == list(range(101, 401)), f"kept links {kept[:3]}...: not the newest, unbroken"
        assert sorted(d["chain_seq"] for d in events.find({"server": "b"})) == list(range(1, 51))
        assert trimmed["events"].removed == 100, trimmed
        # once the links out of order are not at the edge, the cap removes what it asks for
        events.insert_many(links("a", 401, 600))
        trimmed = {t.collection: t for t in trim_capped_collections(cfg)}
        assert trimmed["events"].removed == 300, trimmed
        assert sorted(d["chain_seq"] for d in events.find({"server": "a"})) == list(range(351, 601))
        assert events.count_documents({"server": "b"}) == 0
        # a chain that started over (links 1-300 again, a job started without its state): every old link
        # is newer than a kept one; the trim holds them back, at most TRIM_CHAIN_WINDOW past the cap
        events.insert_many(links("a", 1, 300, chain=2))
        trimmed = {t.collection: t for t in trim_capped_collections(cfg)}
        assert trimmed["events"].removed == 0 and events.count_documents({}) == 550, trimmed
        # and once more than that is over the cap, the rows below the window go
        events.insert_many(links("a", 301, 301 + TRIM_CHAIN_WINDOW, chain=2))
        trimmed = {t.collection: t for t in trim_capped_collections(cfg)}
        assert trimmed["events"].removed > 0, trimmed
        assert events.count_documents({}) <= 250 + TRIM_CHAIN_WINDOW, trimmed
    finally:
        db.client.drop_database("auditpipe_trim_order")


def test_the_local_stores_file_reads_back_what_ferretdb_answers_a_page_at_a_time(stack):
    """Verification walks the local store's capped events in its SQLite file (``capped_rows``, a short
    read per page, so that a long walk holds no snapshot that keeps the write-ahead log from being
    checkpointed). Each document decoded from the file is the one FerretDB returns, for every type a
    stored document can hold (an insider can write any), and its canonical form, which the chain's
    digests cover, is the same; the pages meet without a row missing or read twice, in both orders."""
    if not stack.cfg.store_uses_local_ferretdb:
        pytest.skip("only the local FerretDB's SQLite file is read directly")
    from datetime import datetime

    from bson.binary import Binary
    from bson.int64 import Int64
    from bson.objectid import ObjectId
    from bson.regex import Regex
    from bson.timestamp import Timestamp

    from auditpipe.evidence.chain import canonical
    from auditpipe.store.ferretdb import capped_document, capped_rows, from_sjson_document

    cfg, db = scratch_database(stack, "auditpipe_file_reads")
    try:
        events = db.create_collection("events", capped=True, size=64 * 1024 * 1024)
        odd = {"_id": ObjectId(), "server": "a", "when": datetime(2026, 11, 27, 15, 4, 5, 123000), "n32": 7,
               "n64": Int64(2**40), "x": 1.0, "neg": -0.0, "big": 1e300, "text": "é\x00<b>", "yes": True, "none": None,
               "bytes": b"\x00\xff", "uuid": Binary(b"0123456789abcdef", 4), "ts": Timestamp(1795000000, 3),
               "re": Regex("^a.b$", "im"), "nested": {"list": [1, "two", {"three": [datetime(2026, 1, 1)]}], "empty": {}},
               "empty_list": []}
        events.insert_one(odd)
        events.insert_many([{"_id": f"a/{n}", "server": "a", "chain_seq": n} for n in range(1, 12)])
        answered = list(events.find({}))
        for newest_first in (False, True):
            read = [from_sjson_document(doc) for _, doc in capped_rows(cfg, "events", newest_first=newest_first, page=4)]
            assert read == (answered[::-1] if newest_first else answered)
            for mine, ferretdbs in zip(read, answered[::-1] if newest_first else answered):
                assert canonical(mine) == canonical(ferretdbs)
            assert [type(v) for v in read[-1 if newest_first else 0].values()] == [type(v) for v in answered[0].values()]
        assert list(capped_rows(cfg, "no_such_collection")) == []
        # a lookup by _id through FerretDB's own index in the file: the document FerretDB answers
        assert capped_document(cfg, "events", "a/7") == events.find_one({"_id": "a/7"})
        assert capped_document(cfg, "events", "a/99") is None and capped_document(cfg, "no_such_collection", "a/7") is None
    finally:
        db.client.drop_database("auditpipe_file_reads")


def test_setup_makes_what_ferretdbs_pooled_connections_or_a_leftover_say_exists(stack):
    """`empty_events` can fail for good with "index audit_events_..._event_time already exists": one of
    FerretDB's pooled SQLite connections still has the schema from before the drop (SQLite checks it when
    a statement runs, not when a CREATE INDEX is parsed). And FerretDB makes an index
    before its own record of it, so a failed record leaves the index unlisted. These states made here by
    hand, in a scratch database: the file changed straight, behind FerretDB's connections' backs."""
    if not stack.cfg.store_uses_local_ferretdb:
        pytest.skip("FerretDB's SQLite states: MongoDB has none of them")
    import sqlite3

    from auditpipe.store.ferretdb import ferretdb_sqlite_file, ferretdb_table, refresh_ferretdb_connections

    cfg, db = scratch_database(stack, "auditpipe_schema_states")
    stats = db[cfg.store["stats_collection"]]  # a collection that has a base index on FerretDB

    def in_ferretdbs_file(statement):
        con = sqlite3.connect(ferretdb_sqlite_file(cfg))
        con.execute(statement)
        con.commit()
        con.close()

    def listed():
        return {i["name"] for i in stats.list_indexes()}

    try:
        ensure_collections(cfg)
        con = sqlite3.connect(ferretdb_sqlite_file(cfg))
        table, _ = ferretdb_table(con, stats.name)
        con.close()
        make_index = f'CREATE INDEX "{table}_window_start" ON "{table}" (_ferretdb_sjson->"window_start")'
        # stale: FerretDB's connections read a schema with the index, then it goes
        stats.drop_index("window_start")
        in_ferretdbs_file(make_index)
        refresh_ferretdb_connections(db)
        in_ferretdbs_file(f'DROP INDEX "{table}_window_start"')
        assert "window_start" not in listed()
        assert ensure_collections(cfg) == []
        assert "window_start" in listed()
        # a leftover: the index is in the file, FerretDB does not list it
        stats.drop_index("window_start")
        in_ferretdbs_file(make_index)
        notes = ensure_collections(cfg)
        assert any(n.startswith(f"index window_start of {stats.name} was left") for n in notes), notes
        assert "window_start" in listed()
        stats.insert_one({"_id": "after", "window_start": "2026-11-24T00:00:00Z"})
        assert stats.count_documents({}) == 1
        assert ensure_collections(cfg) == [], "a second setup finds nothing to do"
    finally:
        db.client.drop_database("auditpipe_schema_states")


def test_topics_have_the_configured_partitions_and_settings(stack):
    from confluent_kafka.admin import ConfigResource

    from auditpipe.stack.kafka import topics

    client = topics.admin(stack.cfg.kafka_client)
    existing = client.list_topics(timeout=10).topics
    for t in topics.definitions().values():
        wanted = stack.cfg.kafka["raw_partitions"] if t.role == "raw" else t.partitions
        assert len(existing[t.name].partitions) == wanted, t.name
        resource = ConfigResource(ConfigResource.Type.TOPIC, t.name)
        settings = client.describe_configs([resource])[resource].result()
        assert settings["min.insync.replicas"].value == str(stack.cfg.kafka["min_insync_replicas"]), t.name
        assert settings["retention.ms"].value == str(t.retention_ms), t.name
        if t.segment_ms:
            assert settings["segment.ms"].value == str(t.segment_ms), t.name
    assert topics.definitions()["raw"].segment_ms, "the unmasked lines' segments close, so their retention holds"


def test_the_evidence_and_rollups_keep_the_retention_and_no_more(stack):
    """store.evidence_retention_days: on the local FerretDB (no TTL indexes) the supervisor's deletion
    removes the evidence older than it by event time and the rollups by their day's end, nothing newer."""
    from datetime import datetime, timedelta, timezone

    from auditpipe.store.trimming import delete_expired_evidence

    cfg, db = scratch_database(stack, "auditpipe_expiry")
    try:
        ensure_collections(cfg)
        now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
        keep = timedelta(days=cfg.store["evidence_retention_days"])
        evidence, rollups = db[cfg.store["evidence_collection"]], db[cfg.store["rollups_collection"]]
        evidence.insert_many([{"_id": "old", "event_time": now - keep - timedelta(minutes=1)},
                              {"_id": "kept", "event_time": now - keep + timedelta(minutes=1)}])
        rollups.insert_many([{"_id": "old-day", "day_end": now - keep - timedelta(hours=1)},
                             {"_id": "kept-day", "day_end": now - keep + timedelta(hours=1)}])
        assert delete_expired_evidence(cfg, now) == 2
        assert [d["_id"] for d in evidence.find()] == ["kept"] and [d["_id"] for d in rollups.find()] == ["kept-day"]
    finally:
        db.client.drop_database("auditpipe_expiry")


def test_an_uncapped_events_collection_stops_startup(stack):
    cfg, db = scratch_database(stack, "auditpipe_uncapped_check")
    db[cfg.store["events_collection"]].insert_one({"_id": "lazy insert created me"})
    with pytest.raises(UserError, match="exists but is not capped"):
        ensure_collections(cfg)
    db.client.drop_database("auditpipe_uncapped_check")


def test_every_saved_query_runs_and_failed_logins_match_what_was_generated(stack):
    server = "e2e-queries"
    m = simulate(stack.log_path(server), rate=300, duration=6, speedup=50, seed=21, rotate_on_size=0,
                 failed_login_burst=12, incidents=True, malformed=2)
    stack.stored_documents(server, m.records)
    for name in query.saved_queries():
        try:
            rows = tiers.run_saved(stack.cfg, name, params={"control": "PCI-DSS-10.2.1.4",
                                                            "controls": ["PCI-DSS-10.2.1.4", "SOX-ITGC-ACCESS"]})
        except UserError as e:
            raise AssertionError(f"saved query {name}: {e}") from None
        assert isinstance(rows, list), name
    # narrowed to this run's server: exact
    mine = tiers.run_saved(stack.cfg, "failed-logins", servers=[server])
    assert sum(r["attempts"] for r in mine) == m.failed_logins
    assert tiers.run_saved(stack.cfg, "failed-logins", servers=["no-such-server"]) == []
    evidence = tiers.run_saved(stack.cfg, "events-for-control", servers=[server],
                               params={"control": "PCI-DSS-10.2.1.4"})
    failed_logins = sum(r["events"] for r in evidence if r["_id"].get("category") == "authentication")
    assert failed_logins == m.failed_logins, evidence
    failed = query.run_pipeline(stack.cfg, "events", [
        {"$match": {"server": server, "auth_outcome": "failure"}},
        {"$group": {"_id": "$user", "n": {"$sum": 1}}}])
    assert {r["_id"]: r["n"] for r in failed} == m.failed_logins_by_user
    saved = tiers.run_saved(stack.cfg, "failed-logins")
    scanner = [r for r in saved if r["_id"].get("ip") == "203.0.113.66"]
    assert scanner and scanner[0]["attempts"] >= 12
    attempts = tiers.run_saved(stack.cfg, "failed-login-attempts")
    times = [a["event_time"] for a in attempts]
    assert times == sorted(times) and all(a["status"] != 0 for a in attempts)
    by_name = {(r["_id"]["event_name"], r["_id"].get("command_class")): r["events"]
               for r in tiers.run_saved(stack.cfg, "events-by-name")}
    assert by_name[("Connect", None)] >= m.events_by_name["Connect"]
    # the compliance queries (other tests' servers are in the store too: at least this run's)
    by_category = {(r["_id"]["category"], r["_id"]["action"]): r["events"]
                   for r in tiers.run_saved(stack.cfg, "events-by-category")}
    assert by_category[("authentication", "login_failed")] >= m.failed_logins
    assert by_category[("account_management", "grant")] >= 1
    by_control = {r["_id"]["control"]: r["events"] for r in tiers.run_saved(stack.cfg, "events-by-control")}
    assert by_control["PCI-DSS-10.2.1.4"] >= m.failed_logins and by_control["PCI-DSS-10.2.1.1"] >= 3
    classified = {(tuple(r["_id"]["data_classes"]), r["_id"]["user"])
                  for r in tiers.run_saved(stack.cfg, "classified-data-access")}
    assert {(("pci_cardholder",), "svc_payments"), (("hipaa_ephi",), "batch")} <= classified
    violations = {(tuple(r["_id"]["access_violations"]), r["_id"]["user"])
                  for r in tiers.run_saved(stack.cfg, "access-violations")}
    assert (("hipaa_ephi",), "batch") in violations and not any(u == "svc_payments" for _, u in violations)

    def brute_force_counted():
        rows = tiers.run_saved(stack.cfg, "alerts-by-rule")
        return any(r["_id"]["rule"] == "brute_force" for r in rows), rows

    stack.wait_for("the run's brute force alert", brute_force_counted)


def test_cli_query_prints_a_table_and_json(stack):
    out = stack.cli("query", "failed-statements").stdout
    assert "command_class" in out.splitlines()[0], out  # the queries run wrote failed statements
    rows = json.loads(stack.cli("query", "--json", "--collection", "stats",
                                "--pipeline", '[{"$group": {"_id": null, "n": {"$sum": "$count"}}}]').stdout)
    assert rows and rows[0]["n"] > 0


def test_an_adhoc_pipeline_is_stopped_at_its_time_limit(stack, monkeypatch):
    cfg, db = scratch_database(stack, "auditpipe_e2e_time_limit")
    try:
        db[cfg.store["events_collection"]].insert_many([{"_id": f"x/{i}", "s": "x" * 200} for i in range(50_000)])
        slow = [{"$match": {"s": {"$regex": "y"}}}, {"$group": {"_id": "$_id", "n": {"$sum": 1}}}]
        assert query.run_pipeline(cfg, "events", slow) == [], "within the limit: the store's answer"
        monkeypatch.setattr(query, "PIPELINE_TIME_LIMIT_S", 0.001)
        with pytest.raises(UserError, match="ran longer than 0.001 s in the store and was stopped"):
            query.run_pipeline(cfg, "events", slow)
    finally:
        db.client.drop_database("auditpipe_e2e_time_limit")


def test_status_shows_every_part_healthy(stack):
    rows = {r["component"]: r for r in stack.status()}
    tiers = {name: rows.pop(name) for name in ("hot tier", "archive")}  # docs/archive.md
    verification = rows.pop("verification")  # off in the test stack (its tests tamper): said so
    assert verification["health"] == "ok" and "off (chain.watch_interval 0s)" in verification["detail"], verification
    servers = rows.pop("servers")  # the configured sources' servers in one line, the silent ones named
    configured = len({s["server"] for s in stack.cfg.data["sources"]
                      if s.get("server", "from-host") != "from-host"})  # files, and receivers with a name
    assert servers["detail"].startswith(f"{configured} configured: "), servers
    assert servers["health"] in ("ok", "warning") and (servers["health"] == "ok") == (" silent: " not in servers["detail"])
    assert set(rows) == {"kafka", "store", "flink", "collector", "supervisor"}
    for name, r in rows.items():
        assert r["health"] == "ok", r
        assert r["pid"], name
    for r in tiers.values():
        assert r["health"] in ("ok", "warning") and r["detail"], r
    assert "RUNNING" in rows["flink"]["detail"]


def test_stored_documents_follow_their_schemas(stack):
    """Every kind of stored document, as the job wrote it, against schemas/*.schema.json (dates as
    ISO-8601 strings, the JSON view the schemas describe)."""
    from datetime import datetime

    import jsonschema

    from auditpipe import paths

    def as_json(doc):
        return json.loads(json.dumps(doc, default=lambda v: v.isoformat() if isinstance(v, datetime) else str(v)))

    server = "e2e-queries"
    stack.stored_documents(server, 1)
    db = stack.db()
    # the queries run wrote two malformed lines: this test needs no other test's dead letters
    stack.wait_for("the queries run's dead letters", lambda: (
        (n := db[stack.cfg.store["dead_letter_collection"]].count_documents({})) > 0, n))
    # a server's entry comes with its first chain head (chain.head-interval, a minute)
    stack.wait_for("the queries run's server entry", lambda: (
        (d := db[stack.cfg.store["servers_collection"]].find_one({"_id": server})) is not None, d))
    samples = {
        "audit-event": list(db[stack.cfg.store["events_collection"]].find({"server": server}).limit(500)),
        "stats": list(db[stack.cfg.store["stats_collection"]].find({"server": server})),
        "stats-hourly": list(db[stack.cfg.store["stats_hourly_collection"]].find({"server": server})),
        "dead-letter": list(db[stack.cfg.store["dead_letter_collection"]].find()),
        "alert": list(db[stack.cfg.store["alerts_collection"]].find()),
        "chain-head": list(db[stack.cfg.store["chain_heads_collection"]].find({"server": server})),
        "server": list(db[stack.cfg.store["servers_collection"]].find({"_id": server})),
    }
    for name, docs in samples.items():
        assert docs, f"no {name} documents to check"
        schema = json.loads((paths.SCHEMAS / f"{name}.schema.json").read_text())
        validator = jsonschema.Draft202012Validator(schema)
        for doc in docs:
            errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(as_json(doc))]
            assert not errors, f"{name} {doc['_id']}: {errors}"
