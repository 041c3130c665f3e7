"""Trimming the local FerretDB's capped collections (decision in docs/store.md, "Capped trimming").

FerretDB 1.24's own cleanup cannot hold a cap under load: every pass runs ANALYZE and two dbstat
walks over the whole table (about 1 s of CPU per 100,000 events, measured, even when nothing is
over), deletes at most --test-capped-cleanup-percentage (10%) of the documents per pass whatever
the excess, and fails for good ("too many SQL variables") once that 10% passes SQLite's 32,766
bound variables, about 330,000 events (a cap of ~1.3 GiB): the collection then grows until the
disk is full. So FerretDB's cleanup is switched off and the supervisor calls
`trim_capped_collections`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from auditpipe.config import Config
from auditpipe.store.ferretdb import ferretdb_sqlite_file

TRIM_CHUNK_ROWS = 5_000      # rows per delete transaction: FerretDB's writers (busy_timeout 10 s) wait a few ms
# Once over its cap, a collection is trimmed to this share of it: each pass then removes about what
# arrived since the one before, a transaction or two. Down to 90% of a 2 GiB cap a pass removed
# 52,000-55,000 rows, 5,000 a transaction, back to back for 3.5-7 s, while the store's writers waited
# for SQLite's write lock and the job's checkpoints stalled (bench/README.md "The long run": latency
# p99 1.92 s around those passes against 0.89 s between them, 2026-12-04, be3255a).
TRIM_TO = 0.99


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
# holds at most this many rows past the cap, and removes at most this many more than asked, whatever
# it finds (a chain that started over, its new links older than the old ones kept, would otherwise
# stop the trimming for good).
TRIM_CHAIN_WINDOW = 2_500


def chain_prefix_bound(con: sqlite3.Connection, table: str, cut: int, may_raise: bool = True) -> int:
    """The record id below which rows may be removed when the oldest up to ``cut`` are to be: ``cut +
    1``, or near it, so that what is removed is a prefix of each server's chain (docs/archive.md:
    verify takes a missing link among those kept for a deletion). A server's events are inserted in
    link order batch by batch, but two batches in flight (the events' writer on FerretDB) or a batch
    retried after a store failure can reach the store in the other order; such rows lie close
    together, so TRIM_CHAIN_WINDOW rows each side of the cut are enough to look at, and rows further
    below are removed whatever they hold.

    Going down from the cut, a row whose link is newer than one kept of the same server is kept, and
    with it every row above it. When that keeps every row (the rows up to the cut all newer than a
    link above it: a whole batch that arrived after newer links, with nothing older below), the cut
    goes up instead, to the first row after which every removed link of each server is older than
    every kept one, within the window: removing a little more than asked, rather than nothing while
    the collection stays over its cap until a later insert moves the edge (none may come). Only when
    ``may_raise``: the first cut of a pass; once a pass has removed something, what it holds back
    waits for the next inserts, at most TRIM_CHAIN_WINDOW rows past the cap."""
    def rows(where: str, order: str):
        return con.execute(
            f"SELECT _ferretdb_record_id, json_extract(_ferretdb_sjson, '$.server'), "
            f"json_extract(_ferretdb_sjson, '$.chain_seq') FROM \"{table}\" WHERE _ferretdb_record_id {where} ? "
            f"ORDER BY _ferretdb_record_id {order} LIMIT ?", (cut, TRIM_CHAIN_WINDOW)).fetchall()

    above, under = rows(">", "ASC"), rows("<=", "DESC")
    oldest_kept: dict = {}
    for _, server, seq in above:
        if isinstance(seq, int) and seq < oldest_kept.get(server, seq + 1):
            oldest_kept[server] = seq
    below = cut + 1
    passed = []  # rows between the bound and the cut not yet known to be kept, newest first
    for record_id, server, seq in under:
        passed.append((server, seq))
        if isinstance(seq, int) and server in oldest_kept and seq > oldest_kept[server]:
            below = record_id  # keep this row and every one above it
            for kept_server, kept_seq in passed:
                if isinstance(kept_seq, int) and kept_seq < oldest_kept.get(kept_server, kept_seq + 1):
                    oldest_kept[kept_server] = kept_seq
            passed = []
    if not may_raise or len(under) == TRIM_CHAIN_WINDOW or not under or below > under[-1][0]:
        return below  # something goes, or the pass has removed some already
    return _raised(under, above) or below


def _raised(under: list, above: list) -> int | None:
    """The bound just above the first row of ``above`` (ascending) up to which every link removed
    (``under``, and ``above`` up to it) of each server is older than every one kept, with rows kept
    after it (never the newest rows, as it would be for a chain that started over: every link of it
    older than those removed); None if no row of ``above`` is such."""
    newest_removed: dict = {}
    for _, server, seq in under:
        if isinstance(seq, int) and seq > newest_removed.get(server, seq - 1):
            newest_removed[server] = seq
    oldest_after: list[dict] = [{}] * len(above)  # per row: each server's oldest link in the rows after it
    later: dict = {}
    for i in range(len(above) - 1, -1, -1):
        oldest_after[i] = later
        _, server, seq = above[i]
        if isinstance(seq, int) and seq < later.get(server, seq + 1):
            later = {**later, server: seq}
    for i, (record_id, server, seq) in enumerate(above):
        if isinstance(seq, int) and seq > newest_removed.get(server, seq - 1):
            newest_removed[server] = seq
        if oldest_after[i] and all(n < oldest_after[i].get(s, n + 1) for s, n in newest_removed.items()):
            return record_id + 1
    return None


def trim_capped_collections(cfg: Config) -> list[Trimmed]:
    """Removes the oldest documents of each capped collection of the local FerretDB that is over
    its cap, in insertion order (FerretDB's record id), as FerretDB's own cleanup would.

    The size, as FerretDB's collStats counts it (table pages), is estimated from the row count and
    the pages the newest 1,000 rows take (``sqlite_row_page_bytes``); one pass counts the rows and
    reads 1,000 of them, not every page (the cost that made FerretDB's cleanup unusable). The cap is
    FerretDB's own setting of the collection (what `create_collection(size=...)` stored), so MongoDB
    and the local store trim to the same `store.events_capped_size_mb`. Deletes run in transactions
    of TRIM_CHUNK_ROWS rows, written into FerretDB's SQLite file while it runs, as
    `index_id_lookups` does.
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
                        below = chain_prefix_bound(con, table, cut[0], may_raise=removed == 0)
                        chunk = con.execute(f'DELETE FROM "{table}" WHERE _ferretdb_record_id < ?', (below,)).rowcount
                    if chunk == 0:
                        break  # no cut within TRIM_CHAIN_WINDOW removes a prefix of each chain
                    removed += chunk
            except sqlite3.OperationalError as e:
                if "no such table" in str(e):
                    continue  # dropped while we looked: nothing to trim
                raise
            out.append(Trimmed(name, held, removed, estimated, cap_bytes))
    finally:
        con.close()
    return out


def delete_expired_evidence(cfg: Config, now=None) -> int:
    """The local FerretDB's part of store.evidence_retention_days (it has no TTL indexes; MongoDB's TTL
    indexes do this there, ``expire_after``): deletes the evidence whose event time and the rollups
    whose day ended longer ago. One request each, which FerretDB answers by reading the whole
    collection; the supervisor runs it hourly. Returns how many documents it deleted."""
    from datetime import datetime, timedelta, timezone

    from auditpipe.store.client import mongo_client
    from auditpipe.store.collections import EXPIRING

    now = now or datetime.now(timezone.utc)
    cutoff = now - timedelta(days=int(cfg.store["evidence_retention_days"]))
    db = mongo_client(cfg, socket_timeout_ms=600_000)[cfg.store["database"]]
    return sum(db[cfg.store[role]].delete_many({field: {"$lt": cutoff}}).deleted_count for role, field in EXPIRING)
