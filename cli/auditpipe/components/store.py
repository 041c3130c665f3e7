"""The store: FerretDB v1.24 (SQLite backend) as the local MongoDB-compatible server, and the
collections every store needs (local or a configured MongoDB).

The events collection is capped and is created here, with the configured size, before anything
writes to it: an insert into a missing collection would create it uncapped, the classic failure
of this design. An existing uncapped events collection stops startup with a clear message.

Indexes, two sets (decision in docs/queries.md "Indexes"): BASE_INDEXES on every store (none on
events), and QUERY_INDEXES, which serve the query catalog's filters, only on MongoDB. FerretDB
1.24's SQLite backend uses no index for a filter or a sort (it pushes down only `_id` equality and
`$natural`, so every aggregation reads the whole collection), so there they would only slow the
job's inserts, and `up` drops those an older auditpipe made there. Feature-detected with
`buildInfo`, as the job's sink does.

Lookups by `_id` on the local FerretDB (`index_id_lookups`): FerretDB 1.24 pushes an `_id` equality
down to SQLite as `_ferretdb_sjson->'$._id' = ?` while its unique `_id` index is on
`_ferretdb_sjson->"_id"`, an expression SQLite does not take for the same one; so every find,
update, upsert and delete by `_id` read the whole table, and the stats writer's upserts slowed down
as `audit_stats_1m` grew (25 upserts: 0.02 s empty, 17 s at 150,000 rows; docs/store.md). An index
on the pushdown's own expression, made in FerretDB's SQLite file, turns that into an index search
(0.03-0.06 s at 150,000 rows). Made on the collections that are updated by `_id`, the uncapped ones;
the capped ones are only appended to (and trimmed by record id), where an index would only cost
inserts.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from auditpipe import paths, prereqs, progress
from auditpipe.components.base import Component, StatusRow
from auditpipe.config import Config, redact_uri
from auditpipe.errors import ComponentError, UserError
from auditpipe.process import refuse_taken_port, wait_until

FERRETDB_VERSION = "v1.24.0"
# FerretDB writes an insert command in transactions of at most this many documents (its default
# 100, v1.24's internal/handler/msg_insert.go), each taking SQLite's one write lock and ending in a
# commit (an fsync of the WAL): a batch of 1,000 events was ten of each, and a second writer that
# finds the lock taken sleeps in SQLite's busy handler (1, 2, 5, 10 ms, ...) at each of them. In one
# transaction a batch, two writers stored a third more documents per second, one writer the same
# (docs/store.md "insert batches"). The cost: when a transaction fails (a duplicate _id, as a replay
# after a restart brings), FerretDB inserts its documents again one by one, now up to 1,000.
FERRETDB_INSERT_STATEMENT_ROWS = 1000
# Go's collector ran on 12% of FerretDB's CPU while it inserted events (a CPU profile), and more with
# two writers at once. Collecting when the heap has grown by 4 times what is live (not once) takes
# less of the CPU the store shares with the job on a small machine (docs/store.md "insert
# batches"); the soft limit keeps the heap from growing past it on a large insert.
FERRETDB_GO_RUNTIME = {"GOGC": "400", "GOMEMLIMIT": "512MiB"}

# (collection role in store config, key, name) for every store. None on the events collection: on
# FerretDB 1.24 no index but `_id` serves a query (docs/queries.md "Indexes"), and every other index
# of the collection the pipeline writes at its full rate is work of each insert (FerretDB's two on
# events, `event_time` and `(auth_outcome, event_time)`, took 13% of its CPU a document and 10-15%
# of its bulk rate: docs/store.md "indexes on events"); the other collections take a few writes a second.
BASE_INDEXES = [
    ("stats_collection", [("window_start", 1)], "window_start"),
    ("dead_letter_collection", [("detected_at", 1)], "detected_at"),
    ("alerts_collection", [("raised_at", 1)], "raised_at"),
    ("alerts_collection", [("first_event_time", 1)], "first_event_time"),
    ("chain_heads_collection", [("server", 1), ("seq", 1)], "server_seq"),
    ("kafka_lag_collection", [("at", 1)], "at"),
]
KAFKA_LAG_CAPPED_MB = 16  # samples of about 250 bytes every 15 s: about 60 days
# only on MongoDB: every catalog query on events matches a time range and, from a dashboard's
# server variable or --server, servers; the narrower ones also a control, a data class or a
# category (equality first, then the range: each is a prefix the planner can use); the time range
# alone and failed logins (auth_outcome) by time
QUERY_INDEXES = [
    ("events_collection", [("event_time", 1)], "event_time"),
    ("events_collection", [("auth_outcome", 1), ("event_time", 1)], "auth_outcome_event_time"),
    ("events_collection", [("server", 1), ("event_time", 1)], "server_event_time"),
    ("events_collection", [("controls", 1), ("event_time", 1)], "controls_event_time"),
    ("events_collection", [("data_classes", 1), ("event_time", 1)], "data_classes_event_time"),
    ("events_collection", [("category", 1), ("event_time", 1)], "category_event_time"),
    ("stats_collection", [("server", 1), ("window_start", 1)], "server_window_start"),
    ("alerts_collection", [("server", 1), ("first_event_time", 1)], "server_first_event_time"),
    ("dead_letter_collection", [("server", 1), ("detected_at", 1)], "server_detected_at"),
]


def is_ferretdb(db) -> bool:
    """Feature detection: buildInfo of FerretDB 1.x has "ferretdbVersion", of 2.x "ferretdb"."""
    info = db.command("buildInfo")
    return "ferretdbVersion" in info or "ferretdb" in info


def mongo_client(cfg: Config, timeout_ms: int = 5000, socket_timeout_ms: int | None = None):
    """A client of the store; ``socket_timeout_ms`` bounds each request too (status must not hang on a frozen store)."""
    from pymongo import MongoClient

    return MongoClient(cfg.store_uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
                       socketTimeoutMS=socket_timeout_ms)


def document_count(collection) -> int:
    """The number of documents, cheaply: the {$collStats: {count: {}}} stage (MongoDB and FerretDB).

    Not estimated_document_count: FerretDB 1.24 answers that with a full scan (6-11 s at 50-90k
    events here), and polling with it loads the very store being watched.
    """
    rows = list(collection.aggregate([{"$collStats": {"count": {}}}]))
    return int(rows[0]["count"]) if rows else 0


def wait_for_documents(collection, target: int, timeout: float, exact=None, on_sample=None,
                       every: float = 0.1, stale_after: float = 5.0) -> tuple[int, float]:
    """Polls ``document_count`` until it reaches ``target``; returns (count, monotonic time reached).

    The $collStats count was seen lagging on FerretDB (198,309 while a find returned all 200,000),
    so a count that stops moving short of the target is checked with ``exact()`` (default: a full
    count_documents) every ``stale_after`` seconds: a stale count can neither end a wait early nor
    hang it. Returns the last count if ``timeout`` passes first.
    """
    exact = exact or (lambda: collection.count_documents({}))
    start = time.monotonic()
    last, last_change = -1, start
    while True:
        c = document_count(collection)
        now = time.monotonic()
        if c != last:
            last, last_change = c, now
        elif now - last_change >= stale_after:
            c = max(c, exact())
            last_change = time.monotonic()
        if on_sample is not None:
            on_sample(now, c)
        if c >= target or now - start >= timeout:
            return c, now
        time.sleep(every)


def ensure_collections(cfg: Config) -> list[str]:
    """Creates the collections (events capped) and indexes; returns notes for the user."""
    s = cfg.store
    db = mongo_client(cfg)[s["database"]]
    notes = []
    events = s["events_collection"]
    wanted = s["events_capped_size_mb"] * 1024 * 1024
    if cfg.store_uses_local_ferretdb and wanted > FERRETDB_MAX_CAPPED_SIZE:
        notes.append(f"store.events_capped_size_mb is {s['events_capped_size_mb']}, but FerretDB 1.24 keeps a capped "
                     f"size of at most {FERRETDB_MAX_CAPPED_SIZE // 1048576} MiB: the local events collection holds "
                     "that much (MongoDB takes the configured size)")
        wanted = FERRETDB_MAX_CAPPED_SIZE
    existing = set(db.list_collection_names())
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
    for name in (s["stats_collection"], s["dead_letter_collection"], s["alerts_collection"], s["chain_heads_collection"],
                 s["servers_collection"]):
        if name not in existing:
            create_collection(cfg, db, name)
    if s["kafka_lag_collection"] not in existing:
        create_collection(cfg, db, s["kafka_lag_collection"], capped=True, size=KAFKA_LAG_CAPPED_MB * 1024 * 1024)
    ferretdb = is_ferretdb(db)
    for role, key, name in BASE_INDEXES if ferretdb else BASE_INDEXES + QUERY_INDEXES:
        notes += create_index(cfg, db[s[role]], key, name)
    if ferretdb:
        notes += drop_indexes_that_serve_no_query(cfg, db)
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
ID_LOOKUP_INDEX_SUFFIX = "_auditpipe_id_lookup"
# FerretDB 1.24's metadata.IDColumn: the expression its SQLite backend compares an _id with
FERRETDB_ID_EXPRESSION = "_ferretdb_sjson->'$._id'"


def ferretdb_sqlite_file(cfg: Config) -> Path:
    """The local FerretDB's SQLite file of the configured database (FerretDB keeps one per database)."""
    return cfg.state_dir / LocalStore.name / "data" / f"{cfg.store['database']}.sqlite"


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
    before a collection was dropped still "sees" the old table's indexes (seen in CI: the tests'
    `empty_events` drops and re-creates the events collection; reproduced with two sqlite3
    connections). Any read on that connection refreshes it, so the action is tried again after reads
    on several connections at once (in the e2e test a second try already found a fresh connection;
    the reads are for a pool under load, where a stale one comes back)."""
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


def refresh_ferretdb_connections(db, readers: int = 8) -> None:
    """Makes FerretDB run a read on several of its pooled SQLite connections at once: each reloads its
    connection's schema if the file's changed (``retry_on_stale_ferretdb_schema``). Any table will do
    (the schema is the whole file's); a database without one has nothing stale."""
    from concurrent.futures import ThreadPoolExecutor

    names = db.list_collection_names()
    if not names:
        return
    collection = db[names[0]]
    with ThreadPoolExecutor(readers) as pool:
        list(pool.map(lambda _: collection.find_one({"_id": "refresh-the-schema"}), range(readers * 2)))


def ferretdb_table(con: sqlite3.Connection, collection: str) -> tuple[str, dict] | None:
    """The SQLite table of ``collection`` in a connection to the local FerretDB's file, and FerretDB's
    settings of it (its indexes, its cap); None if FerretDB has no such collection."""
    row = con.execute("SELECT table_name, settings FROM _ferretdb_collections WHERE name = ?", (collection,)).fetchone()
    return None if row is None else (row[0], json.loads(row[1] or "{}"))


def drop_unlisted_ferretdb_index(cfg: Config, collection: str, index: str) -> bool:
    """Drops the SQLite index FerretDB would name for ``index`` of ``collection`` if it exists while
    FerretDB's metadata does not list it; True if it did."""
    con = sqlite3.connect(ferretdb_sqlite_file(cfg).as_uri() + "?mode=rw", uri=True, timeout=60)
    try:
        found = ferretdb_table(con, collection)
        if found is None:
            return False
        table, settings = found
        listed = {i.get("name") for i in settings.get("indexes") or []}
        sqlite_name = f"{table}_{index}"
        present = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ? AND tbl_name = ?",
                              (sqlite_name, table)).fetchone()
        if index in listed or present is None:
            return False
        con.execute(f'DROP INDEX "{sqlite_name}"')
        con.commit()
        return True
    finally:
        con.close()


def index_id_lookups(cfg: Config) -> list[str]:
    """Gives every uncapped collection of the local FerretDB an index on the expression FerretDB
    compares `_id` with (module header); returns the tables that got one now.

    Written straight into FerretDB's SQLite file while FerretDB runs (WAL: readers go on; FerretDB's
    statements see the new schema on their next run). FerretDB does not list this index (it is not in
    its metadata) and drops it with the table; a re-created collection gets it again here.
    """
    made = []
    # mode=rw: never create the file (a wrong path is an error, not an empty database beside FerretDB's)
    con = sqlite3.connect(ferretdb_sqlite_file(cfg).as_uri() + "?mode=rw", uri=True, timeout=60)
    try:
        rows = con.execute("SELECT table_name, settings FROM _ferretdb_collections").fetchall()
        existing = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        for table, settings in rows:
            if int(json.loads(settings or "{}").get("cappedSize") or 0) > 0:
                continue
            index = table + ID_LOOKUP_INDEX_SUFFIX
            if index in existing:
                continue
            con.execute(f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ({FERRETDB_ID_EXPRESSION})')
            made.append(table)
        con.commit()
    finally:
        con.close()
    return made


# Trimming the local FerretDB's capped collections (decision in docs/store.md, "Capped trimming").
# FerretDB 1.24's own cleanup cannot hold a cap under load: every pass runs ANALYZE and two dbstat
# walks over the whole table (about 1 s of CPU per 100,000 events, measured, even when nothing is
# over), deletes at most --test-capped-cleanup-percentage (10%) of the documents per pass whatever
# the excess, and fails for good ("too many SQL variables") once that 10% passes SQLite's 32,766
# bound variables, about 330,000 events (a cap of ~1.3 GiB): the collection then grows until the
# disk is full. So FerretDB's cleanup is switched off and `trim_capped_collections` does it.
TRIM_CHUNK_ROWS = 5_000      # rows per delete transaction: FerretDB's writers (busy_timeout 10 s) wait a few ms
TRIM_TO = 0.9                # once over its cap, a collection is trimmed to this share of it


def sqlite_row_page_bytes(text_bytes: int, page_size: int) -> float:
    """Bytes of table pages one row with this much stored text takes, as SQLite's file format lays
    it out: a cell on a leaf page (rows packed whole, so a 3 KiB row has a 4 KiB page to itself),
    spilling past maxLocal into overflow pages. FerretDB's collStats `size` counts these pages
    (dbstat), and its rows are about 3x the BSON (docs/store.md): events of ~4 KiB sit right at the
    page size, where text length alone would be off by up to 2x. Internal pages: TRIM_INTERNAL_PAGES."""
    payload = text_bytes + 4  # the record's header: its size, the record id's column (stored as NULL), the text's type
    usable = page_size
    max_local = usable - 35
    min_local = (usable - 12) * 32 // 255 - 23
    cell_overhead = 2 + 3 + 9  # cell pointer, payload size and record id varints (record ids are large)
    if payload <= max_local:
        local, overflow_pages = payload, 0
    else:
        k = min_local + (payload - min_local) % (usable - 4)
        local = k if k <= max_local else min_local
        overflow_pages = -(-(payload - local) // (usable - 4))
        cell_overhead += 4  # the first overflow page's number
    per_leaf = max(1, (usable - 8) // (local + cell_overhead))
    return page_size / per_leaf + overflow_pages * page_size


TRIM_INTERNAL_PAGES = 1.02   # interior pages of the table's b-tree over its leaves (measured 3 per 282 leaves)


@dataclass
class Trimmed:
    """One pass over one capped collection: what it held, what was removed."""

    collection: str
    held: int
    removed: int
    estimated_bytes: int
    cap_bytes: int


# Rows each side of a cut looked at for a server's links out of insertion order: two batches in
# flight of 1,000 (sink.batch-size) and a partial one. Less than TRIM_CHUNK_ROWS, so that the rule
# holds at most this many rows past the cap, whatever it finds (a chain that started over, its new
# links older than the old ones kept, would otherwise stop the trimming for good).
TRIM_CHAIN_WINDOW = 2_500


def chain_prefix_bound(con: sqlite3.Connection, table: str, cut: int) -> int:
    """The record id below which rows may be removed when the oldest up to ``cut`` are to be: ``cut +
    1``, or lower, so that what is removed is a prefix of each server's chain (docs/archive.md:
    verify takes a missing link among those kept for a deletion). A server's events are inserted in
    link order batch by batch, but two batches in flight (the events' writer on FerretDB) or a batch
    retried after a store failure can reach the store in the other order; such rows lie close
    together, so TRIM_CHAIN_WINDOW rows each side of the cut are enough to look at, and rows further
    below are removed whatever they hold. Going down from the
    cut, a row whose link is newer than one kept of the same server is kept, and with it every row
    above it."""
    def rows(where: str, order: str):
        return con.execute(
            f"SELECT _ferretdb_record_id, json_extract(_ferretdb_sjson, '$.server'), "
            f"json_extract(_ferretdb_sjson, '$.chain_seq') FROM \"{table}\" WHERE _ferretdb_record_id {where} ? "
            f"ORDER BY _ferretdb_record_id {order} LIMIT ?", (cut, TRIM_CHAIN_WINDOW)).fetchall()

    oldest_kept: dict = {}
    for _, server, seq in rows(">", "ASC"):
        if isinstance(seq, int) and seq < oldest_kept.get(server, seq + 1):
            oldest_kept[server] = seq
    below = cut + 1
    passed = []  # rows between the bound and the cut not yet known to be kept, newest first
    for record_id, server, seq in rows("<=", "DESC"):
        passed.append((server, seq))
        if isinstance(seq, int) and server in oldest_kept and seq > oldest_kept[server]:
            below = record_id  # keep this row and every one above it
            for kept_server, kept_seq in passed:
                if isinstance(kept_seq, int) and kept_seq < oldest_kept.get(kept_server, kept_seq + 1):
                    oldest_kept[kept_server] = kept_seq
            passed = []
    return below


def trim_capped_collections(cfg: Config) -> list[Trimmed]:
    """Removes the oldest documents of each capped collection of the local FerretDB that is over
    its cap, in insertion order (FerretDB's record id), as FerretDB's own cleanup would.

    The size, as FerretDB's collStats counts it (table pages), is estimated from the row count and
    the pages the newest 1,000 rows take (``sqlite_row_page_bytes``); one pass counts the rows and
    reads 1,000 of them, not every page (the cost that made FerretDB's cleanup unusable). The cap is FerretDB's own setting of the collection
    (what `create_collection(size=...)` stored), so MongoDB and the local store trim to the same
    `store.events_capped_size_mb`. Deletes run in transactions of TRIM_CHUNK_ROWS rows, written
    into FerretDB's SQLite file while it runs, as `index_id_lookups` does.
    """
    path = ferretdb_sqlite_file(cfg)
    if not path.exists():
        return []
    out = []
    con = sqlite3.connect(path.as_uri() + "?mode=rw", uri=True, timeout=10)
    try:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        for name, table, settings in con.execute(
                "SELECT name, table_name, settings FROM _ferretdb_collections").fetchall():
            meta = json.loads(settings or "{}")
            cap_bytes, cap_docs = int(meta.get("cappedSize") or 0), int(meta.get("cappedDocuments") or 0)
            if cap_bytes <= 0 and cap_docs <= 0:
                continue
            try:
                held = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
                if held == 0:
                    continue
                sizes = [r[0] for r in con.execute(
                    f'SELECT length(CAST(_ferretdb_sjson AS BLOB)) FROM "{table}" '
                    f'ORDER BY _ferretdb_record_id DESC LIMIT 1000')]
                if not sizes:
                    continue  # emptied between the two reads
                mean = TRIM_INTERNAL_PAGES * sum(sqlite_row_page_bytes(n, page_size) for n in sizes) / len(sizes)
                estimated = int(held * mean)
                keep = held
                if 0 < cap_bytes < estimated:
                    keep = int(cap_bytes * TRIM_TO / mean)
                if 0 < cap_docs < held:
                    keep = min(keep, cap_docs)
                removed = 0
                while removed < held - keep:
                    k = min(TRIM_CHUNK_ROWS, held - keep - removed)
                    with con:  # one transaction
                        cut = con.execute(f'SELECT _ferretdb_record_id FROM "{table}" ORDER BY _ferretdb_record_id '
                                          f'LIMIT 1 OFFSET ?', (k - 1,)).fetchone()
                        if cut is None:
                            break
                        below = chain_prefix_bound(con, table, cut[0])
                        chunk = con.execute(f'DELETE FROM "{table}" WHERE _ferretdb_record_id < ?', (below,)).rowcount
                    if chunk == 0:
                        break  # every row to remove holds a link newer than one kept: at most TRIM_CHAIN_WINDOW
                    removed += chunk
            except sqlite3.OperationalError as e:
                if "no such table" in str(e):
                    continue  # dropped while we looked: nothing to trim
                raise
            out.append(Trimmed(name, held, removed, estimated, cap_bytes))
    finally:
        con.close()
    return out


class LocalStore(Component):
    name = "store"

    @property
    def binary(self):
        return self.cfg.tools_dir / "bin" / f"ferretdb-{FERRETDB_VERSION}"

    def is_managed(self) -> bool:
        return self.cfg.store_uses_local_ferretdb

    def install(self) -> None:
        if not self.is_managed() or self.binary.exists():
            return
        go = prereqs.require_go()
        build = self.cfg.tools_dir / "build" / "ferretdb"
        if build.exists():
            shutil.rmtree(build)
        build.mkdir(parents=True)
        for f in ("go.mod", "go.sum", "tools.go"):
            shutil.copy(paths.DEPLOY_LOCAL / "ferretdb" / f, build / f)
        log = self.cfg.tools_dir / "install.log"
        env = {"GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        with progress.step(f"download FerretDB {FERRETDB_VERSION} from the Go module proxy"):
            progress.run_logged([go, "mod", "vendor"], log, "vendoring FerretDB", cwd=build, env=env)
        version_file = build / "vendor" / "github.com" / "FerretDB" / "FerretDB" / "build" / "version" / "version.txt"
        version_file.write_text(FERRETDB_VERSION + "\n")
        with progress.step(f"build FerretDB {FERRETDB_VERSION}"):
            progress.run_logged([go, "build", "-mod=vendor", "-trimpath", "-o", str(self.binary),
                                 "github.com/FerretDB/FerretDB/cmd/ferretdb"], log, "building FerretDB",
                                cwd=build, env={"CGO_ENABLED": "0"})
        shutil.rmtree(build, ignore_errors=True)

    def start(self) -> None:
        if self.is_managed() and not self.proc.running():
            s = self.cfg.store
            refuse_taken_port(s["host"], s["port"], "store.port", self.cfg.file)
            data = self.home / "data"
            data.mkdir(exist_ok=True)
            # its own capped cleanup off: the supervisor trims (trim_capped_collections, above)
            self.proc.start([str(self.binary), "--handler=sqlite", f"--sqlite-url=file:{data}/",
                             f"--listen-addr={s['host']}:{s['port']}", f"--state-dir={self.home}",
                             "--telemetry=disable", "--debug-addr=-", "--log-level=warn",
                             "--test-capped-cleanup-interval=0s",
                             f"--test-batch-size={FERRETDB_INSERT_STATEMENT_ROWS}"], env=FERRETDB_GO_RUNTIME)
            wait_until(self._ping, 60, "waiting for FerretDB to answer", self.proc)
        elif not self.is_managed():
            try:
                self._ping()
            except Exception as e:  # noqa: BLE001
                raise ComponentError(f"the store at {self.cfg.store_uri_for_display} does not answer: "
                                     f"{redact_uri(str(e))}") from None
        for note in ensure_collections(self.cfg):
            progress.info(f"  ! {note}")

    def _ping(self) -> bool:
        mongo_client(self.cfg, 2000).admin.command("ping")
        return True

    def healthy(self) -> bool:
        try:
            return self._ping()
        except Exception:  # noqa: BLE001
            return False

    def stop(self) -> bool:
        return self.proc.stop() if self.is_managed() else False

    def status(self) -> StatusRow:
        s = self.cfg.store
        endpoint = f"{s['host']}:{s['port']}" if self.is_managed() else self.cfg.store_uri_for_display
        pid = self.proc.pid() if self.is_managed() else None
        if self.is_managed() and pid is None:
            return StatusRow(self.name, None, endpoint, "stopped", "")
        try:
            db = mongo_client(self.cfg, 2000)[s["database"]]
            n = document_count(db[s["events_collection"]])
            d = document_count(db[s["dead_letter_collection"]])
            capped = db[s["events_collection"]].options().get("capped", False)
            return StatusRow(self.name, pid, endpoint, "ok",
                             f"{s['events_collection']}: {n} docs ({'capped' if capped else 'NOT CAPPED'}), "
                             f"{s['dead_letter_collection']}: {d}")
        except Exception as e:  # noqa: BLE001
            return StatusRow(self.name, pid, endpoint, "unhealthy", redact_uri(str(e))[:80])
