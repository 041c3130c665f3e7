"""The local FerretDB's SQLite file, read and written beside FerretDB where its own handling falls short.

Lookups by `_id` (`index_id_lookups`): FerretDB 1.24 pushes an `_id` equality down to SQLite as
`_ferretdb_sjson->'$._id' = ?` while its unique `_id` index is on `_ferretdb_sjson->"_id"`, an
expression SQLite does not take for the same one; so every find, update, upsert and delete by `_id`
reads the whole table, and the stats writer's upserts slow down as `audit_stats_1m` grows (25
upserts: 0.02 s empty, 17 s at 150,000 rows; docs/store.md). An index on the pushdown's own
expression, made in FerretDB's SQLite file, turns that into an index search (0.03-0.06 s at 150,000
rows). Made on the collections that are updated by `_id`, the uncapped ones; the capped ones are
only appended to (and trimmed by record id), where an index would only cost inserts.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from auditpipe.config import Config

# the local store's part name: its process, log and data live under <state_dir>/store
STORE_PART = "store"

ID_LOOKUP_INDEX_SUFFIX = "_auditpipe_id_lookup"
# FerretDB 1.24's metadata.IDColumn: the expression its SQLite backend compares an _id with
FERRETDB_ID_EXPRESSION = "_ferretdb_sjson->'$._id'"


def ferretdb_data_dir(cfg: Config) -> Path:
    """Where the local FerretDB keeps its SQLite files."""
    return cfg.state_dir / STORE_PART / "data"


def ferretdb_sqlite_file(cfg: Config) -> Path:
    """The local FerretDB's SQLite file of the configured database (FerretDB keeps one per database)."""
    return ferretdb_data_dir(cfg) / f"{cfg.store['database']}.sqlite"


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


def from_sjson(value, schema: dict):
    """A value of FerretDB 1.24's stored JSON ("sjson") as pymongo gives it, by its schema entry
    (FerretDB's `internal/handler/sjson`): dates are stored as epoch milliseconds, object ids as hex,
    binary data as base64 with its subtype in the schema (s), timestamps as one unsigned 64-bit number,
    regular expressions as the pattern with the options in the schema (o); objects carry their own
    schema ($s), arrays one per item (i). Naive UTC datetimes, as pymongo returns them. A type the
    schema names that FerretDB 1.24 does not write is a ValueError."""
    from datetime import datetime, timedelta

    kind = schema.get("t")
    if value is None or kind == "null":
        return None
    if kind == "date":
        return datetime(1970, 1, 1) + timedelta(milliseconds=value)
    if kind == "object":
        return from_sjson_document(value, schema=schema.get("$s", {}))
    if kind == "array":
        return [from_sjson(v, s) for v, s in zip(value, schema.get("i", []))]
    if kind == "int":
        return int(value)
    if kind == "long":
        from bson.int64 import Int64

        return Int64(value)
    if kind == "double":
        return float(value)
    if kind in ("string", "bool"):
        return value
    if kind == "objectId":
        from bson.objectid import ObjectId

        return ObjectId(value)
    if kind == "binData":
        import base64

        from bson.binary import Binary

        data, subtype = base64.b64decode(value), int(schema.get("s", 0))
        return data if subtype == 0 else Binary(data, subtype)
    if kind == "timestamp":
        from bson.timestamp import Timestamp

        return Timestamp(int(value) >> 32, int(value) & 0xFFFFFFFF)
    if kind == "regex":
        from bson.regex import Regex, str_flags_to_int

        return Regex(value, int(str_flags_to_int(schema.get("o") or "")))  # the flags as the number pymongo gives
    raise ValueError(f"a stored value of type {kind!r}, which FerretDB 1.24 does not write")


def from_sjson_document(doc: dict, fields: set[str] | None = None, schema: dict | None = None) -> dict:
    """A stored document (its sjson) as a dict of the values pymongo gives; ``fields``: only those. The
    top-level document carries its schema ($s); a nested one's is in its parent's (``schema``)."""
    props = (doc.get("$s", {}) if schema is None else schema).get("p", {})
    return {k: from_sjson(v, props.get(k, {})) for k, v in doc.items()
            if k != "$s" and (fields is None or k in fields)}


def _sjson_int(text: str) -> int | float:
    # Go writes the double -0.0 as "-0", which reads as the integer 0: kept a negative zero here (an
    # integer is never written so), which a double's schema entry then keeps
    return -0.0 if text == "-0" else int(text)


def capped_rows(cfg: Config, collection: str, newest_first: bool = False,
                page: int = 5000) -> Iterator[tuple[int, dict]]:
    """The rows of a capped collection of the local FerretDB as (record id, its sjson as parsed JSON),
    in insertion order or newest first, read straight from FerretDB's SQLite file one page of rows
    after another by record id, each page a read of its own. FerretDB answers a `find` with one SQLite
    statement that stays open until the last batch is fetched, and SQLite cannot checkpoint its
    write-ahead log past a reader's snapshot: a walk over a whole busy collection through FerretDB lets
    the log grow with every write for as long as the walk takes. Here no snapshot lives longer than a
    page. Between pages the collection goes on changing: rows inserted later are read by a walk in
    insertion order only, and the capped trim removes the oldest rows, so a walk that must see each
    server's links without a hole goes newest first (it stops where the trim has been)."""
    con = sqlite3.connect(f"file:{ferretdb_sqlite_file(cfg)}?mode=ro", uri=True, timeout=10)
    try:
        found = ferretdb_table(con, collection)
        if found is None:
            return
        table = found[0]
        order, beyond = ("DESC", "<") if newest_first else ("ASC", ">")
        last = None
        while True:
            rows = con.execute(
                f'SELECT _ferretdb_record_id, _ferretdb_sjson FROM "{table}"'
                + (f" WHERE _ferretdb_record_id {beyond} ?" if last is not None else "")
                + f" ORDER BY _ferretdb_record_id {order} LIMIT ?", ((last, page) if last is not None else (page,))
            ).fetchall()
            if not rows:
                return
            for record_id, text in rows:
                yield record_id, json.loads(text, parse_int=_sjson_int)
            last = rows[-1][0]
    finally:
        con.close()


def capped_links(cfg: Config, collection: str, from_record: int, server: str, low: int,
                 high: int) -> tuple[list[dict], int | None]:
    """The documents of ``server`` with a chain link from ``low`` to ``high`` among the rows of a capped
    collection of the local FerretDB from record id ``from_record`` on, decoded as pymongo decodes them,
    and the newest record id (None: no such collection). Read from FerretDB's SQLite file, the fields
    matched by SQLite's JSON functions (about 27 us a row of 2.7 KB, 2026-12-03): a range of the newest
    rows, not the collection, which FerretDB would read whole for any filter."""
    con = sqlite3.connect(f"file:{ferretdb_sqlite_file(cfg)}?mode=ro", uri=True, timeout=10)
    try:
        found = ferretdb_table(con, collection)
        if found is None:
            return [], None
        table = found[0]
        newest = con.execute(f'SELECT MAX(_ferretdb_record_id) FROM "{table}"').fetchone()[0]
        rows = con.execute(
            f'SELECT _ferretdb_sjson FROM "{table}" WHERE _ferretdb_record_id >= ?'
            " AND json_extract(_ferretdb_sjson, '$.server') = ?"
            " AND json_extract(_ferretdb_sjson, '$.chain_seq') BETWEEN ? AND ?", (from_record, server, low, high)
        ).fetchall()
        return [from_sjson_document(json.loads(text, parse_int=_sjson_int)) for (text,) in rows], newest
    finally:
        con.close()


def capped_document(cfg: Config, collection: str, doc_id: str) -> dict | None | bool:
    """The document of a capped collection of the local FerretDB whose ``_id`` is the string
    ``doc_id``, read from its SQLite file by FerretDB's own unique `_id` index (its expression, as
    the index's SQL has it: SQLite searches an index on an expression only for that same
    expression), decoded as pymongo decodes it; None when there is none; False when the file has no
    such index (then ask FerretDB, which reads the whole collection for it)."""
    con = sqlite3.connect(f"file:{ferretdb_sqlite_file(cfg)}?mode=ro", uri=True, timeout=10)
    try:
        found = ferretdb_table(con, collection)
        if found is None:
            return None
        table = found[0]
        row = con.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?",
                          (table, f"{table}__id_")).fetchone()
        if row is None or not row[0] or f'"{table}" (' not in row[0] or not row[0].endswith(")"):
            return False
        expression = row[0].split(f'"{table}" (', 1)[1][:-1]
        if "_ferretdb_sjson" not in expression:
            return False
        # the -> operator gives a string as its JSON text: compact, non-ASCII as it is
        key = json.dumps(doc_id, ensure_ascii=False, separators=(",", ":"))
        hit = con.execute(f'SELECT _ferretdb_sjson FROM "{table}" WHERE {expression} = ?', (key,)).fetchone()
        return None if hit is None else from_sjson_document(json.loads(hit[0], parse_int=_sjson_int))
    finally:
        con.close()


def newest_unarchived(cfg: Config, collection: str, archived: dict[str, int], slack: int,
                      fields: set[str] | None = None, page: int = 5000) -> list[dict]:
    """The documents of a capped collection of the local FerretDB whose chain link is above the newest
    link the archive holds of their server (``archived``; a server missing from it has none there),
    read newest first straight from FerretDB's SQLite file: one page of rows after another by record
    id (insertion order), until every server met has shown a link at least ``slack`` below its
    archived one (the writer's batches in flight can be inserted out of order, by up to ``slack``
    links), so that what lies further back is archived. A server the archive has nothing of is read
    to the oldest row. FerretDB answers any filtered request by reading every document (docs/store.md);
    this reads the newest pages only. ``fields``: only these of each document."""
    lowest: dict[str, int] = {}
    out: list[dict] = []
    rows = capped_rows(cfg, collection, newest_first=True, page=page)
    try:
        for n, (_, doc) in enumerate(rows, 1):
            server, seq = doc.get("server"), doc.get("chain_seq")
            if isinstance(seq, int):
                lowest[server] = min(lowest.get(server, seq), seq)
                if seq > archived.get(server, 0):
                    out.append(from_sjson_document(doc, fields))
            # at the end of each page: stop once what lies further back is archived
            if n % page == 0 and all(archived.get(s, 0) > 0 and low <= archived[s] - slack for s, low in lowest.items()):
                break
        return out
    finally:
        rows.close()
