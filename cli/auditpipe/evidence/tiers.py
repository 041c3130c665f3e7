"""Which tier answers a question about events, so that a report or a query covers any period the
retention keeps without the user choosing (docs/queries.md "Tiers").

Two tiers hold events: the archive (Parquet per server and day, every event the job stored, kept
``archive.retention_days``; DuckDB reads it in under a second) and the store's capped collection
(the newest events, minutes to hours of them, written seconds before the archive commits them).
An events query runs over the union of

- the archive's events in the range, and
- the store's events in the range that the archive does not hold yet: for each server, those with
  a chain link above the newest link of its live chain the archive holds (imported history is in
  the archive alone, in chains of its own).

That second part is exact because the archive commits a prefix of each server's chain: the job
links a server's events in order and the archive's file sink commits, at each checkpoint, every
event the chain emitted before it, so an event with a link at or below the newest archived one is
archived itself, in the day of its event time. Read once per report (one request on MongoDB; on the
local FerretDB, which reads the whole capped collection for any filtered request, its SQLite file
newest rows first), the store's part is loaded into DuckDB beside the Parquet files, and every
query then runs there. With the archive disabled or empty, the store answers alone: the evidence
collection for the queries that only ever match evidence (auditpipe.evidence.query.evidence_kind),
the capped collection for the others.

Collections other than events (stats, alerts, dead letters, servers, Kafka lag) are only in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from auditpipe.archive import mongo_sql, reader
from auditpipe.config import Config, redact_uri
from auditpipe.errors import UserError
from auditpipe.evidence import query

# fields of the stored events that no catalog query reads, left out of the store's part: the largest
# ones (the original line, unknown fields, the chain's digest and the record's)
NOT_QUERIED = ("original", "extra", "ingest", "chain_digest", "line_sha256")


def utc(t: datetime | None) -> datetime | None:
    """A time as an aware UTC datetime (a naive one is UTC, as pymongo and DuckDB give them)."""
    if t is None:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


@dataclass
class TierRead:
    """What one tier gave for the range: its events there, the first and last of them, and how it was read."""
    tier: str  # "archive" or "store"
    events: int | None  # None: not counted (the store alone answers each query itself)
    first: datetime | None
    last: datetime | None
    detail: str = ""

    def describe(self) -> str:
        if not self.events:
            return f"{self.tier}: no events in the range{(' (' + self.detail + ')') if self.detail else ''}"
        span = f"{self.first:%Y-%m-%d %H:%M:%S} to {self.last:%Y-%m-%d %H:%M:%S} UTC"
        return f"{self.tier}: {self.events:,} events, {span}{(' (' + self.detail + ')') if self.detail else ''}"


@dataclass
class EventTiers:
    """The events of a range and servers, from the archive and the store (module docstring)."""
    cfg: Config
    since: datetime
    until: datetime
    servers: list[str] | None
    reads: list[TierRead] = field(default_factory=list)
    _files: list = field(default_factory=list)
    _con: Any = None  # the DuckDB connection that holds the store's part
    _has_store_part: bool = False
    _store_only: bool = False
    _evidence_too: bool = False  # with the store alone: the evidence queries read the evidence collection

    @classmethod
    def open(cls, cfg: Config, since: datetime, until: datetime, servers: list[str] | None = None,
             tier: str = "auto") -> EventTiers:
        """``tier``: auto (the archive and the store's newest), archive (the archive alone), store (the store alone)."""
        t = cls(cfg, utc(since), utc(until), list(servers) if servers else None)
        archive_files = cfg.archive["enabled"] and tier != "store" and _any_file(cfg.archive_path)
        if tier == "archive" or (archive_files and tier == "auto"):
            t._read_archive(with_store=tier == "auto")
        else:
            t._store_only = True
            t._evidence_too = tier == "auto"
            why = ("the capped collection alone, as asked" if tier == "store" else
                   ("the archive is disabled (archive.enabled)" if not cfg.archive["enabled"] else
                    "the archive holds nothing yet") + "; the evidence queries read the evidence collection")
            t.reads.append(TierRead("store", None, None, None, why))
        return t

    @property
    def reads_archive(self) -> bool:
        return not self._store_only

    # --- reading -------------------------------------------------------------------------------

    def _partitions(self) -> list[reader.Partition]:
        first, last = self.since.date(), self.until.date()
        wanted = set(self.servers) if self.servers else None
        return [p for p in reader.partitions(self.cfg.archive_path, first=first, last=last)
                if wanted is None or p.server in wanted]

    def _read_archive(self, with_store: bool) -> None:
        self._files = [f for p in self._partitions() for f in p.files()]
        if self._files:
            n, first, last = reader.connect().execute(
                f"""SELECT count(*), min(event_time), max(event_time) FROM {reader.parquet_source(self._files)}
                    WHERE event_time >= ? AND event_time < ?""", [self.since, self.until]).fetchone()
            self.reads.append(TierRead("archive", n, reader.mongo_like(first), reader.mongo_like(last),
                                       f"{len(self._files)} files"))
        else:
            self.reads.append(TierRead("archive", 0, None, None, "no files for the range's days"))
        if with_store:
            self._read_store(self._archived_links())

    def _archived_links(self) -> dict[str, int]:
        """The newest live link the archive holds of each of the range's servers (``newest_live_links``)."""
        return reader.newest_live_links(self.cfg.archive_path, self.servers)

    def store_part_filter(self, newest: dict[str, int]) -> dict:
        """The store's events in the range that the archive does not hold: per archived server, links
        above its newest archived one (``newest``); every event of a server the archive has none of."""
        either: list[dict] = [{"server": s, "chain_seq": {"$gt": n}} for s, n in sorted(newest.items())]
        others = [s for s in self.servers or [] if s not in newest]
        if self.servers is None:
            either.append({"server": {"$nin": sorted(newest)}})
        elif others:
            either.append({"server": {"$in": others}})
        match: dict = {"event_time": {"$gte": self.since, "$lt": self.until}}
        if len(either) == 1:
            match.update(either[0])
        else:
            match["$or"] = either
        return match

    def _read_store(self, archived: dict[str, int]) -> None:
        """The store's events in the range above the archive's newest link of their server (``archived``):
        one request on MongoDB; on the local FerretDB, which would read the whole capped collection for
        it, its SQLite file newest first (``newest_unarchived``)."""
        import sqlite3

        from pymongo.errors import PyMongoError

        try:
            if self.cfg.store_uses_local_ferretdb:
                from auditpipe.store.ferretdb import newest_unarchived
                from auditpipe.store.trimming import TRIM_CHAIN_WINDOW

                found = newest_unarchived(self.cfg, self.cfg.store["events_collection"], archived, TRIM_CHAIN_WINDOW)
                lo, hi = self.since.replace(tzinfo=None), self.until.replace(tzinfo=None)
                docs = [d for d in found if (self.servers is None or d.get("server") in self.servers)
                        and isinstance(d.get("event_time"), datetime) and lo <= d["event_time"] < hi]
            else:
                from auditpipe.store.client import mongo_client

                db = mongo_client(self.cfg)[self.cfg.store["database"]]
                docs = list(db[self.cfg.store["events_collection"]].find(
                    self.store_part_filter(archived), {f: 0 for f in NOT_QUERIED}))
        except (sqlite3.Error, PyMongoError) as e:
            raise UserError(f"the store's events not archived yet cannot be read: {redact_uri(str(e))} "
                            "(`auditpipe status` shows the store; --archive reads the archive alone)") from None
        times = [d["event_time"] for d in docs if isinstance(d.get("event_time"), datetime)]
        self.reads.append(TierRead("store", len(docs), min(times, default=None), max(times, default=None),
                                   "not archived yet"))
        if docs:
            self._load_store_part(docs)

    def _load_store_part(self, docs: list[dict]) -> None:
        """The store's documents as a DuckDB table with the archive's columns (less NOT_QUERIED), by way
        of a JSON-lines file DuckDB reads with those columns' types."""
        import json
        import tempfile

        con = self._connection()
        sample = reader.parquet_source([self._files[0] if self._files else _any_file(self.cfg.archive_path)])
        con.execute(f"CREATE TEMP TABLE store_not_archived AS SELECT * EXCLUDE ({', '.join(NOT_QUERIED)}) "
                    f"FROM {sample} LIMIT 0")
        columns = {name: kind for name, kind, *_ in con.execute("DESCRIBE store_not_archived").fetchall()}
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({k: v for k, v in d.items() if k in columns}, default=_json_value) + "\n")
            f.flush()
            spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
            con.execute(f"INSERT INTO store_not_archived BY NAME SELECT * FROM read_json('{f.name}', "
                        f"format = 'newline_delimited', columns = {spec})")
        self._has_store_part = True

    def _connection(self):
        if self._con is None:
            self._con = reader.connect()
        return self._con

    # --- answering -------------------------------------------------------------------------------

    def run(self, pipeline: list[dict], name: str | None = None) -> list[dict]:
        """An events pipeline (the catalog's language, bound) over the tiers. With the store alone, the
        saved query ``name`` reads the evidence collection if it is an evidence query (it holds the
        evidence retention, the capped collection minutes), unless the capped collection alone was
        asked for; else the capped collection."""
        if self._store_only:
            where = "evidence" if self._evidence_too and name and query.evidence_kind(name) else "events"
            return query.run_pipeline(self.cfg, where, pipeline)
        parts = []
        if self._files:
            parts.append(f"SELECT * FROM {reader.parquet_source(self._files)}")
        if self._has_store_part:
            parts.append("SELECT * FROM store_not_archived")
        if not parts:
            return []
        return mongo_sql.run_on(self._connection(), "(" + " UNION ALL BY NAME ".join(parts) + ")", pipeline)

    def describe(self) -> list[str]:
        """One line per tier read: what it gave for the range (``store`` alone: not counted here)."""
        return [f"{r.tier}: {r.detail}" if r.events is None else r.describe() for r in self.reads]


TIERS = ("auto", "store", "archive")  # who answers an events query: docs/queries.md "Tiers"


def run_saved(cfg: Config, name: str, since: str | None = None, until: str | None = None,
              servers: list[str] | None = None, params: dict[str, Any] | None = None, tier: str = "auto",
              tiers_read: list[str] | None = None) -> list[dict]:
    """A saved query. Events queries: ``tier`` auto reads the archive and the store's events not archived
    yet (the module docstring), store or archive that one alone; other collections are in the store
    only. ``tiers_read``, when given, gets a line per tier read saying what it held for the range."""
    q = query.saved(name)
    if servers and "servers" not in query.params_used(q["pipeline"]):
        raise UserError(f"'{name}' is not per server (its {q['collection']} collection has no server field): "
                        "leave out --server")
    if tier not in TIERS:
        raise UserError(f"no tier '{tier}'; one of: {', '.join(TIERS)}")
    if tier == "archive" and q["collection"] != "events":
        raise UserError(f"the archive holds events only; '{name}' reads '{q['collection']}' (run it without --archive)")
    lo, hi = query.parse_time(since, query.EPOCH), query.parse_time(until, query.FAR_FUTURE)
    bound = {**(params or {}), "since": lo, "until": hi, "servers": servers or None}
    # a query of another collection with an events form reads the tiers unless --store asks for its own
    events = (EventTiers.open(cfg, lo, hi, servers, tier)
              if q["collection"] == "events" or (opens_tiers(name) and tier == "auto") else None)
    rows = answer(cfg, name, bound, events)
    if tiers_read is not None:
        tiers_read.extend(read_from(name, events))
    return rows


def opens_tiers(name: str) -> bool:
    """Whether the saved query ``name`` may read the event tiers: an events query, or one with an
    ``events`` form (``form``)."""
    q = query.saved_queries()[name]
    return q["collection"] == "events" or "events" in q


def form(name: str, events: EventTiers | None) -> tuple[str, list]:
    """(collection, pipeline) of what the saved query ``name`` runs: an events query over the tiers;
    a query with an ``events`` form (the same rows counted from the events: docs/queries.md "Tiers")
    over the tiers when they read the archive, where DuckDB reads a quarter in a second; else the
    query on its own collection."""
    q = query.saved_queries()[name]
    if q["collection"] != "events" and "events" in q and events is not None and events.reads_archive:
        return "events", q["events"]
    return q["collection"], q["pipeline"]


def answer(cfg: Config, name: str, params: dict, events: EventTiers | None) -> list[dict]:
    """The rows of the saved query ``name`` with ``params`` (``form``: over the tiers, or on its store
    collection); in the order ``query.stable_order`` gives, the same from every tier."""
    collection, pipeline = form(name, events)
    pipeline = query.bind(pipeline, params)
    rows = events.run(pipeline, name) if collection == "events" else query.run_pipeline(cfg, collection, pipeline)
    return query.stable_order(rows, pipeline)


def read_from(name: str, events: EventTiers | None) -> list[str]:
    """What the saved query ``name`` reads: the event tiers with what each held, or its store collection."""
    collection, _ = form(name, events)
    return events.describe() if collection == "events" else [f"store: the {collection} collection"]


def _json_value(v: Any) -> Any:
    if isinstance(v, datetime):
        return utc(v).isoformat()
    return str(v)


def _any_file(root) -> Any:
    """A committed Parquet file of the archive (the newest day's first), or None."""
    for p in reversed(reader.partitions(root)):
        files = p.files()
        if files:
            return files[0]
    return None
