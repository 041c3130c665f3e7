"""The archive (docs/archive.md): the job's Parquet copy of every stored event, read with DuckDB.

Layout (written by the job's FileSink, pipelines/flink-job/.../archive/EventArchive.java):

    <archive>/events/server=<server>/date=<yyyy-mm-dd>/part-*.parquet   committed files only
    <archive>/manifest/chain-heads/server=<server>/part-*.jsonl           chain heads, one JSON per line
    <archive>/manifest/retention.jsonl                                    what `archive prune` removed, and when

Files that start with a dot are in progress (not yet committed by a checkpoint) and never read.
This module finds and reads them; auditpipe.archive.mongo_sql runs saved queries over them,
auditpipe.archive.retention compacts and prunes them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from auditpipe.errors import UserError

# the event document's time fields: Parquet TIMESTAMP(MILLIS, UTC) columns
TIME_COLUMNS = ("event_time",)


def path_safe(server: str) -> str:
    """A server name as a directory name, as the job writes it (EventArchive.pathSafe)."""
    out = []
    for b in server.encode("utf-8"):
        c = chr(b)
        out.append(c if c.isascii() and (c.isalnum() or c in "._-") else f"%{b:02X}")
    return "".join(out)


def server_of(directory: str) -> str:
    raw = directory.split("=", 1)[1]
    out, i = bytearray(), 0
    while i < len(raw):
        if raw[i] == "%":
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out += raw[i].encode()
            i += 1
    return out.decode("utf-8")


def _committed(folder: Path, suffix: str) -> list[Path]:
    return sorted(p for p in folder.glob(f"*{suffix}") if not p.name.startswith("."))


@dataclass
class Partition:
    server: str
    day: date
    path: Path

    def files(self) -> list[Path]:
        return _committed(self.path, ".parquet")


def partitions(root: Path, server: str | None = None, first: date | None = None,
               last: date | None = None) -> list[Partition]:
    events = root / "events"
    out = []
    if not events.is_dir():
        return out
    for sdir in sorted(events.glob("server=*")):
        name = server_of(sdir.name)
        if server is not None and name != server:
            continue
        for ddir in sorted(sdir.glob("date=*")):
            try:
                day = date.fromisoformat(ddir.name.split("=", 1)[1])
            except ValueError:
                continue
            if (first is None or day >= first) and (last is None or day <= last):
                out.append(Partition(name, day, ddir))
    return out


def files_for(root: Path, since: datetime | None = None, until: datetime | None = None,
              server: str | None = None) -> list[Path]:
    first = since.astimezone(timezone.utc).date() if since else None
    last = until.astimezone(timezone.utc).date() if until else None
    return [f for p in partitions(root, server, first, last) for f in p.files()]


class Unreadable(UserError):
    """An archive file that cannot be read: damaged, cut short, or not one the job wrote."""

    ADVICE = ("Move the file aside (or restore it from a copy) and run `auditpipe verify`: the events it held "
              "are then reported missing")

    def __init__(self, reason: str, file: str | None = None):
        super().__init__(f"the archive cannot be read: {reason}. {self.ADVICE}")
        self.reason = reason
        self.file = file


class _Connection:
    """A DuckDB connection whose errors reading a file become ``Unreadable``, naming the file."""

    def __init__(self):
        import duckdb

        self._con = duckdb.connect()
        self._con.execute("SET TimeZone='UTC'")

    def register(self, name: str, table) -> None:
        """A table (pyarrow) the statements can name."""
        self._con.register(name, table)

    def execute(self, sql: str, params: list | None = None):
        import duckdb

        try:
            return self._con.execute(sql, params) if params else self._con.execute(sql)
        except duckdb.Error as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            named = re.search(r"file '([^']+)'", first)
            file = named.group(1) if named else None
            raise Unreadable(first, file) from None


def connect() -> _Connection:
    return _Connection()


def parquet_source(files: list[Path]) -> str:
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    return f"read_parquet([{listed}], union_by_name = true, hive_partitioning = false)"


def has_chains(con, source: str) -> bool:
    """Whether the files of ``source`` have the ``chain`` column (imported history's chains); files
    written before imports existed lack it, and DuckDB refuses a column none of them has."""
    return "chain" in {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}


def newest_live_links(root: Path, servers: list[str] | None = None) -> dict[str, int]:
    """The newest link of each server's live chain the archive holds (of ``servers``, or all), any
    day: every live link at or below it is archived (the archive holds a prefix of each chain).
    Imported history's chains (a ``chain`` column) are not the live one."""
    files = [f for p in partitions(root) if servers is None or p.server in servers for f in p.files()]
    if not files:
        return {}
    con = connect()
    source = parquet_source(files)
    live = " WHERE chain IS NULL" if has_chains(con, source) else ""
    return {s: int(n) for s, n in con.execute(
        f"SELECT server, max(chain_seq) FROM {source}{live} GROUP BY server").fetchall() if n is not None}


# --- rows for verify ------------------------------------------------------------------------------

def chain_rows(root: Path, server: str) -> list[dict]:
    """Every archived event of ``server`` as the store holds it (times as integer milliseconds)."""
    files = files_for(root, server=server)
    if not files:
        return []
    con = connect()
    cur = con.execute(f"""SELECT * REPLACE (epoch_ms(event_time) AS event_time,
        struct_pack(topic := ingest.topic, "partition" := ingest."partition", "offset" := ingest."offset",
                    "timestamp" := epoch_ms(ingest."timestamp")) AS ingest)
        FROM {parquet_source(files)}""")
    names = [d[0] for d in cur.description]
    out = []
    for row in cur.fetchall():
        doc = {}
        for name, value in zip(names, row):
            if value is None:
                continue
            if name == "extra":
                value = json.loads(value)
            elif name == "ingest":
                value = {k: v for k, v in value.items() if v is not None}
            doc[name] = value
        out.append(doc)
    return out


def servers(root: Path) -> list[str]:
    return sorted({p.server for p in partitions(root)})


def chain_heads(root: Path, server: str | None = None) -> list[dict]:
    """The chain heads of the archive's manifest."""
    base = root / "manifest" / "chain-heads"
    out = []
    for sdir in sorted(base.glob("server=*")) if base.is_dir() else []:
        if server is not None and server_of(sdir.name) != server:
            continue
        for f in _committed(sdir, ".jsonl"):
            for number, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    head = json.loads(line)
                except ValueError as e:
                    head = None
                    reason = str(e)
                else:
                    reason = "not a chain head (server, seq, digest)"
                if not (isinstance(head, dict) and isinstance(head.get("server"), str)
                        and isinstance(head.get("seq"), int) and isinstance(head.get("digest"), str)):
                    raise Unreadable(f"{f} line {number}: {reason}", str(f))
                out.append(head)
    return out


@dataclass
class Span:
    servers: int
    days: int
    first: datetime | None
    last: datetime | None
    events: int | None  # None: not counted (status reads only the first and last day)
    files: int


def span(root: Path, count_events: bool = True) -> Span:
    """The archive's servers, days, first and last event; the first and last day are read, the
    rest is known from the directory names (``count_events`` reads every file's footer)."""
    parts = partitions(root)
    with_files = [(p, p.files()) for p in parts]
    with_files = [(p, f) for p, f in with_files if f]
    if not with_files:
        return Span(0, 0, None, None, 0, 0)
    first_day = min(p.day for p, _ in with_files)
    last_day = max(p.day for p, _ in with_files)
    edge_files = [f for p, fs in with_files if p.day in (first_day, last_day) for f in fs]
    con = connect()
    lo, hi = con.execute(f"SELECT min(event_time), max(event_time) FROM {parquet_source(edge_files)}").fetchone()
    all_files = [f for _, fs in with_files for f in fs]
    events = con.execute(f"SELECT count(*) FROM {parquet_source(all_files)}").fetchone()[0] if count_events else None
    return Span(len({p.server for p, _ in with_files}), len({p.day for p, _ in with_files}), mongo_like(lo),
                mongo_like(hi), events, len(all_files))


def mongo_like(value: Any) -> Any:
    """DuckDB values as pymongo gives them: naive UTC datetimes; struct fields that are NULL left out.
    A naive one is a TIMESTAMP, UTC already (the connection's time zone is UTC): kept as it is, not
    taken for this machine's local time."""
    if isinstance(value, datetime):
        return value if value.tzinfo is None else value.astimezone(timezone.utc).replace(tzinfo=None)
    if isinstance(value, dict):
        return {k: mongo_like(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [mongo_like(v) for v in value]
    return value
