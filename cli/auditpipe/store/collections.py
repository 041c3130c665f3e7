"""The collections every store needs (local or a configured MongoDB), and their indexes.

The events collection is capped and is created here, with the configured size, before anything
writes to it: an insert into a missing collection would create it uncapped, the classic failure
of this design. An existing uncapped events collection stops startup with a clear message.

Indexes, two sets (decision in docs/queries.md "Indexes"): BASE_INDEXES on every store (none on
events), and QUERY_INDEXES, which serve the query catalog's filters, only on MongoDB. FerretDB
1.24's SQLite backend uses no index for a filter or a sort (it pushes down only `_id` equality and
`$natural`, so every aggregation reads the whole collection), so there they would only slow the
job's inserts, and `up` drops those an older auditpipe made there. Feature-detected with
`buildInfo`, as the job's sink does.
"""

from __future__ import annotations

import sqlite3

from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.store import layout
from auditpipe.store.client import is_ferretdb, mongo_client
from auditpipe.store.ferretdb import (
    drop_unlisted_ferretdb_index,
    ferretdb_sqlite_file,
    index_id_lookups,
    refresh_ferretdb_connections,
)

# (collection role in store config, key, name) for every store. None on the events collection: on
# FerretDB 1.24 no index but `_id` serves a query (docs/queries.md "Indexes"), and every other index
# of the collection the pipeline writes at its full rate is work of each insert (FerretDB's two on
# events, `event_time` and `(auth_outcome, event_time)`, took 13% of its CPU a document and 10-15%
# of its bulk rate: docs/store.md "indexes on events"); the other collections take a few writes a second.
BASE_INDEXES = [
    ("stats_collection", [("window_start", 1)], "window_start"),
    ("stats_hourly_collection", [("window_start", 1)], "window_start"),
    ("dead_letter_collection", [("detected_at", 1)], "detected_at"),
    ("alerts_collection", [("raised_at", 1)], "raised_at"),
    ("alerts_collection", [("first_event_time", 1)], "first_event_time"),
    ("chain_heads_collection", [("server", 1), ("seq", 1)], "server_seq"),
    ("kafka_lag_collection", [("at", 1)], "at"),
    ("sessions_collection", [("last_event_time", 1)], "last_event_time"),
]
KAFKA_LAG_CAPPED_MB = 16  # samples of about 250 bytes every 15 s: about 60 days
# only on MongoDB: every catalog query on events matches a time range and, from a dashboard's
# server variable or --server, servers; the narrower ones also a control, a data class or a
# category (equality first, then the range: each is a prefix the planner can use); the time range
# alone and failed logins (auth_outcome) by time
QUERY_INDEXES = [
    ("events_collection", [("event_time", 1)], "event_time"),
    ("evidence_collection", [("server", 1), ("event_time", 1)], "server_event_time"),
    ("rollups_collection", [("server", 1), ("day", 1)], "server_day"),
    ("rollups_collection", [("controls", 1), ("day", 1)], "controls_day"),
    ("rollups_collection", [("principal_class", 1), ("day", 1)], "principal_class_day"),
    ("evidence_collection", [("auth_outcome", 1), ("event_time", 1)], "auth_outcome_event_time"),
    ("evidence_collection", [("category", 1), ("event_time", 1)], "category_event_time"),
    ("evidence_collection", [("data_classes", 1), ("event_time", 1)], "data_classes_event_time"),
    ("events_collection", [("auth_outcome", 1), ("event_time", 1)], "auth_outcome_event_time"),
    ("events_collection", [("server", 1), ("event_time", 1)], "server_event_time"),
    ("events_collection", [("controls", 1), ("event_time", 1)], "controls_event_time"),
    ("events_collection", [("data_classes", 1), ("event_time", 1)], "data_classes_event_time"),
    ("events_collection", [("category", 1), ("event_time", 1)], "category_event_time"),
    ("stats_collection", [("server", 1), ("window_start", 1)], "server_window_start"),
    ("stats_hourly_collection", [("server", 1), ("window_start", 1)], "server_window_start"),
    ("alerts_collection", [("server", 1), ("first_event_time", 1)], "server_first_event_time"),
    ("dead_letter_collection", [("server", 1), ("detected_at", 1)], "server_detected_at"),
    ("sessions_collection", [("server", 1), ("start_time", 1)], "server_start_time"),
    ("sessions_collection", [("user", 1), ("start_time", 1)], "user_start_time"),
    ("reviews_collection", [("item_time", 1)], "item_time"),
    ("review_queue_collection", [("day", 1)], "day"),
]


def ensure_collections(cfg: Config) -> list[str]:
    """Creates the collections (events capped) and indexes; returns notes for the user."""
    s = cfg.store
    db = mongo_client(cfg)[s["database"]]
    existing = set(db.list_collection_names())
    # first: a store of a newer release's layout is refused with nothing else touched
    if s["layout_collection"] not in existing:
        create_collection(cfg, db, s["layout_collection"])
    notes = layout.carry_forward(cfg, db, existing)
    events = s["events_collection"]
    wanted = s["events_capped_size_mb"] * 1024 * 1024
    if cfg.store_uses_local_ferretdb and wanted > FERRETDB_MAX_CAPPED_SIZE:
        notes.append(f"store.events_capped_size_mb is {s['events_capped_size_mb']}, but FerretDB 1.24 keeps a capped "
                     f"size of at most {FERRETDB_MAX_CAPPED_SIZE // 1048576} MiB: the local events collection holds "
                     "that much (MongoDB takes the configured size)")
        wanted = FERRETDB_MAX_CAPPED_SIZE
    if events in existing:
        options = db[events].options()
        if not options.get("capped"):
            raise UserError(
                f"collection {s['database']}.{events} exists but is not capped. The events collection must be "
                f"capped ({s['events_capped_size_mb']} MiB, store.events_capped_size_mb). Keep its data with "
                f"db.{events}.renameCollection('{events}_uncapped'), or drop it, then run this again.")
        if int(options.get("size", 0)) != wanted:
            notes.append(f"capped collection {events} has size {int(options.get('size', 0)) // 1048576} MiB, the "
                         f"configuration says {s['events_capped_size_mb']} MiB; a capped size cannot change in "
                         "place (re-create the collection to apply it)")
    else:
        create_collection(cfg, db, events, capped=True, size=wanted)
    for name in (s["evidence_collection"], s["rollups_collection"], s["stats_collection"], s["stats_hourly_collection"],
                 s["dead_letter_collection"], s["alerts_collection"], s["chain_heads_collection"], s["servers_collection"],
                 s["sessions_collection"], s["baselines_collection"], s["reviews_collection"], s["review_queue_collection"]):
        if name not in existing:
            create_collection(cfg, db, name)
    if s["kafka_lag_collection"] not in existing:
        create_collection(cfg, db, s["kafka_lag_collection"], capped=True, size=KAFKA_LAG_CAPPED_MB * 1024 * 1024)
    ferretdb = is_ferretdb(db)
    for role, key, name in BASE_INDEXES if ferretdb else BASE_INDEXES + QUERY_INDEXES:
        notes += create_index(cfg, db[s[role]], key, name)
    if ferretdb:
        notes += drop_indexes_that_serve_no_query(cfg, db)
    else:
        for role, field in EXPIRING:
            notes += expire_after(db[s[role]], field, s["evidence_retention_days"])
    if cfg.store_uses_local_ferretdb:
        try:
            index_id_lookups(cfg)
        except sqlite3.Error as e:  # e.g. the file locked longer than the wait: the store still works, slower
            notes.append(f"could not index lookups by _id in {ferretdb_sqlite_file(cfg)} ({e}): upserts of the "
                         "stats will slow down as the collection grows (docs/store.md); `auditpipe up` tries again")
    return notes


# FerretDB 1.24 stores a capped size as a 32-bit integer: a larger one is kept as this (observed: a
# 4 GiB request read back as 2147483647 from its metadata)
FERRETDB_MAX_CAPPED_SIZE = 2**31 - 1


STALE_SCHEMA_RETRIES = 10   # rounds of refreshing FerretDB's pooled connections before an error stands


def create_collection(cfg: Config, db, name: str, **options) -> None:
    """Creates a collection (through ``retry_on_stale_ferretdb_schema``: FerretDB makes the new table's
    `_id` index with a CREATE INDEX too, which a stale pooled connection refuses the same way; the
    e2e test makes that state for ``create_index``, the same retry)."""
    retry_on_stale_ferretdb_schema(cfg, db, lambda: db.create_collection(name, **options),
                                   lambda: name in db.list_collection_names())


def create_index(cfg: Config, collection, key: list[tuple[str, int]], name: str) -> list[str]:
    """Creates one index (through ``retry_on_stale_ferretdb_schema``); on the local FerretDB, also
    drops a leftover of it: FerretDB makes the SQLite index before its own record of it, and when the
    record fails the index stays in the file unlisted. Returns notes for the user."""
    notes = []

    def drop_a_leftover():
        if not notes and drop_unlisted_ferretdb_index(cfg, collection.name, name):
            notes.append(f"index {name} of {collection.name} was left in FerretDB's SQLite file without FerretDB's "
                         "record of it (an interrupted index creation): dropped and created again")

    retry_on_stale_ferretdb_schema(cfg, collection.database, lambda: collection.create_index(key, name=name),
                                   lambda: name in {i["name"] for i in collection.list_indexes()}, drop_a_leftover)
    return notes


# what store.evidence_retention_days removes: the evidence by its event time, a rollup by its day's end,
# a session by its last record's time, a review decision by when it was made
EXPIRING = (("evidence_collection", "event_time"), ("rollups_collection", "day_end"),
            ("sessions_collection", "last_event_time"), ("reviews_collection", "decided_at"))


def expire_after(collection, field: str, days: int) -> list[str]:
    """MongoDB: a TTL index on ``field``, removing each document ``days`` after that time
    (store.evidence_retention_days); a changed retention is applied to the index in place (collMod).
    FerretDB 1.24 has no TTL indexes: the supervisor deletes instead (``delete_expired_evidence``)."""
    name = f"{field}_ttl"
    seconds = days * 86400
    current = {i["name"]: i for i in collection.list_indexes()}.get(name)
    if current is None:
        collection.create_index([(field, 1)], name=name, expireAfterSeconds=seconds)
        return []
    if current.get("expireAfterSeconds") != seconds:
        collection.database.command("collMod", collection.name, index={"name": name, "expireAfterSeconds": seconds})
        return [f"{collection.name} keeps {days} days now (store.evidence_retention_days; it kept "
                f"{int(current.get('expireAfterSeconds', 0)) // 86400})"]
    return []


def drop_indexes_that_serve_no_query(cfg: Config, db) -> list[str]:
    """On FerretDB: drops the indexes of QUERY_INDEXES a store set up by an older auditpipe has (the
    events collection had `event_time` and `(auth_outcome, event_time)` on every store): none serves a
    query there, and each is work of every insert. Only those names; an index of your own stays.
    Returns notes for the user."""
    from pymongo.errors import PyMongoError

    notes = []
    for role, _key, name in QUERY_INDEXES:
        collection = db[cfg.store[role]]
        if name not in {i["name"] for i in collection.list_indexes()}:
            continue
        try:
            collection.drop_index(name)
        except PyMongoError as e:
            notes.append(f"could not drop index {name} of {collection.name} ({e}): it serves no query on FerretDB "
                         "and slows every insert; `auditpipe up` tries again")
            continue
        notes.append(f"dropped index {name} of {collection.name}: FerretDB uses no index but _id for a query, and "
                     "each other one slows every insert (docs/queries.md \"Indexes\")")
    return notes


def retry_on_stale_ferretdb_schema(cfg: Config, db, action, already_there, on_refusal=None) -> None:
    """Runs ``action``; on the local FerretDB, a refusal with "... already exists" while the thing is
    not there (``already_there()`` false) is a stale schema: FerretDB keeps a pool of SQLite
    connections, and SQLite checks a connection's cached schema against the file when a statement
    runs, not when a CREATE INDEX is parsed (a CREATE TABLE does check); a connection last used
    before a collection was dropped still "sees" the old table's indexes (the tests' `empty_events`
    drops and re-creates the events collection; reproduced with two sqlite3 connections). Any read on
    that connection refreshes it, so the action is tried again after reads on several connections at
    once (in the e2e test a second try already found a fresh connection; the reads are for a pool
    under load, where a stale one comes back)."""
    from pymongo.errors import OperationFailure

    for attempt in range(STALE_SCHEMA_RETRIES + 1):
        try:
            action()
            return
        except OperationFailure as e:
            if not (cfg.store_uses_local_ferretdb and "already exists" in str(e)) or attempt == STALE_SCHEMA_RETRIES \
                    or already_there():
                raise
        if on_refusal is not None:
            on_refusal()
        refresh_ferretdb_connections(db)
