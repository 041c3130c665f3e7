"""Which tier answers a question about events, so that a report or a query covers any period the
retention keeps without the user choosing (docs/queries.md "Tiers").

Two tiers hold events: the archive (Parquet per server and day, every event the job stored, kept
``archive.retention_days``; DuckDB reads it in under a second) and the store's capped collection
(the newest events, minutes to hours of them, written seconds before the archive commits them).
An events query runs over the union of

- the archive's events in the range, and
- the store's events in the range that the archive does not hold yet: for each server, those with
  a chain link above the newest link the archive holds in the range's days.

That second part is exact because the archive commits a prefix of each server's chain: the job
links a server's events in order and the archive's file sink commits, at each checkpoint, every
event the chain emitted before it, so an event with a link at or below the newest archived one is
archived itself, in the day of its event time. Read once per report: the store's part is fetched
with one request (FerretDB reads the whole capped collection for any filtered request, so one
request instead of one per query), loaded into DuckDB beside the Parquet files, and every query
then runs there. With the archive disabled or empty, the store answers alone: the evidence
collection for the queries that only ever match evidence (auditpipe.evidence.query.evidence_kind),
the capped collection for the others.

Collections other than events (stats, alerts, dead letters, servers, Kafka lag) are only in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from auditpipe.archive import mongo_sql, reader
from auditpipe.config import Config

# fields of the stored events that no catalog query reads, left out of the store's part: the largest
# ones (the original line, unknown fields, the chain's digest and the record's)
NOT_QUERIED = ("original", "extra", "ingest", "chain_digest", "line_sha256")


def _utc(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


@dataclass
class TierRead:
    """What one tier gave for the range: its events there, the first and last of them, and how it was read."""
    tier: str  # "archive" or "store"
    events: int
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
             tier: str = "auto") -> "EventTiers":
        """``tier``: auto (the archive and the store's newest), archive (the archive alone), store (the store alone)."""
        t = cls(cfg, _utc(since), _utc(until), list(servers) if servers else None)
        archive_files = cfg.archive["enabled"] and tier != "store" and _any_file(cfg.archive_path)
        if tier == "archive" or (archive_files and tier == "auto"):
            t._read_archive(with_store=tier == "auto")
        else:
            t._store_only = True
            t._evidence_too = tier == "auto"
            why = ("the capped collection alone, as asked" if tier == "store" else
                   ("the archive is disabled (archive.enabled)" if not cfg.archive["enabled"] else
                    "the archive holds nothing yet") + "; the evidence queries read the evidence collection")
            t.reads.append(TierRead("store", -1, None, None, why))
        return t

    # --- reading -------------------------------------------------------------------------------

    def _partitions(self) -> list[reader.Partition]:
        first, last = self.since.date(), self.until.date()
        wanted = set(self.servers) if self.servers else None
        return [p for p in reader.partitions(self.cfg.archive_path, first=first, last=last)
                if wanted is None or p.server in wanted]

    def _read_archive(self, with_store: bool) -> None:
        self._files = [f for p in self._partitions() for f in p.files()]
        newest: dict[str, int] = {}
        if self._files:
            cur = reader.connect().execute(
                f"""SELECT server, max(chain_seq),
                           count(*) FILTER (WHERE event_time >= ? AND event_time < ?),
                           min(event_time) FILTER (WHERE event_time >= ? AND event_time < ?),
                           max(event_time) FILTER (WHERE event_time >= ? AND event_time < ?)
                    FROM {reader.parquet_source(self._files)} GROUP BY server""", [self.since, self.until] * 3)
            rows = cur.fetchall()
            newest = {s: int(seq or 0) for s, seq, *_ in rows}
            n = sum(r[2] for r in rows)
            firsts = [reader.mongo_like(r[3]) for r in rows if r[3] is not None]
            lasts = [reader.mongo_like(r[4]) for r in rows if r[4] is not None]
            self.reads.append(TierRead("archive", n, min(firsts, default=None), max(lasts, default=None),
                                       f"{len(self._files)} files"))
        else:
            self.reads.append(TierRead("archive", 0, None, None, "no files for the range's days"))
        if with_store:
            self._read_store(newest)

    def store_part_filter(self, newest: dict[str, int]) -> dict:
        """The store's events in the range that the archive does not hold: per archived server, links
        above its newest archived one; every event of a server the archive has none of in the range."""
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

    def _read_store(self, newest: dict[str, int]) -> None:
        if self.cfg.store_uses_local_ferretdb:
            docs = self._newest_from_ferretdb()
        else:
            from auditpipe.store.client import mongo_client

            db = mongo_client(self.cfg)[self.cfg.store["database"]]
            docs = list(db[self.cfg.store["events_collection"]].find(
                self.store_part_filter(newest), {f: 0 for f in NOT_QUERIED}))
        times = [d["event_time"] for d in docs if isinstance(d.get("event_time"), datetime)]
        self.reads.append(TierRead("store", len(docs), min(times, default=None), max(times, default=None),
                                   "not archived yet"))
        if docs:
            self._load_store_part(docs)

    def _newest_from_ferretdb(self) -> list[dict]:
        """The local FerretDB's events the archive does not hold, read newest first from its SQLite file
        down to the archive's newest link of each server (``newest_unarchived``): FerretDB itself would
        read the whole capped collection for the request. The archive holds a prefix of each chain, so
        those are the events above its newest link anywhere; kept here: those in the range."""
        from auditpipe.store.ferretdb import newest_unarchived
        from auditpipe.store.trimming import TRIM_CHAIN_WINDOW

        everywhere = [f for p in reader.partitions(self.cfg.archive_path)
                      if self.servers is None or p.server in self.servers for f in p.files()]
        archived = {s: int(n or 0) for s, n in reader.connect().execute(
            f"SELECT server, max(chain_seq) FROM {reader.parquet_source(everywhere)} GROUP BY server").fetchall()
        } if everywhere else {}
        docs = newest_unarchived(self.cfg, self.cfg.store["events_collection"], archived, TRIM_CHAIN_WINDOW)
        lo, hi = self.since.replace(tzinfo=None), self.until.replace(tzinfo=None)
        return [d for d in docs if (self.servers is None or d.get("server") in self.servers)
                and isinstance(d.get("event_time"), datetime) and lo <= d["event_time"] < hi]

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
            from auditpipe.evidence import query

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
        return [r.describe() if r.events >= 0 else f"{r.tier}: {r.detail}" for r in self.reads]


def _json_value(v: Any) -> Any:
    if isinstance(v, datetime):
        return _utc(v).isoformat()
    return str(v)


def _any_file(root) -> Any:
    """A committed Parquet file of the archive (the newest day's first), or None."""
    for p in reversed(reader.partitions(root)):
        files = p.files()
        if files:
            return files[0]
    return None

