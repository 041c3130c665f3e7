"""The archive (docs/archive.md): the job's Parquet copy of every stored event, read with DuckDB.

Layout (written by the job's FileSink, pipelines/flink-job/.../archive/EventArchive.java):

    <archive>/events/server=<server>/date=<yyyy-mm-dd>/part-*.parquet   committed files only
    <archive>/manifest/chain-heads/server=<server>/part-*.jsonl           chain heads, one JSON per line
    <archive>/manifest/retention.jsonl                                    what `archive prune` removed, and when

Files that start with a dot are in progress (not yet committed by a checkpoint) and never read.
Saved queries (schemas/queries.yaml) over the events run here too: ``to_sql`` translates the
aggregation stages they use into one DuckDB statement, so the archive answers the same question.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from auditpipe.config import Config
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


def _source(files: list[Path]) -> str:
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    return f"read_parquet([{listed}], union_by_name = true, hive_partitioning = false)"


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
        FROM {_source(files)}""")
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


# --- saved queries over the archive ---------------------------------------------------------------

class Unsupported(UserError):
    pass


def _column(path: str) -> str:
    """A field path ($-less) as a DuckDB expression: a.b is field b of struct a; x.0 the list's first item."""
    parts = path.split(".")
    expr = '"' + parts[0].replace('"', '""') + '"'
    for p in parts[1:]:
        expr = f"({expr})[{int(p) + 1}]" if p.isdigit() else f"struct_extract({expr}, '{p}')"
    return expr


def _literal(value: Any, params: list) -> str:
    params.append(value)
    return "?"


# the event fields that are lists: a condition on one is about its items, as in MongoDB
LIST_COLUMNS = frozenset({"tables", "data_classes", "access_violations", "controls"})


def _condition(field: str, spec: Any, params: list) -> str:
    col = _column(field)
    if field in LIST_COLUMNS and not (isinstance(spec, dict) and set(spec) <= {"$exists"}):
        if isinstance(spec, dict) and set(spec) == {"$in"}:
            return ("(" + " OR ".join(f"coalesce(list_contains({col}, {_literal(x, params)}), false)"
                                      for x in spec["$in"]) + ")") if spec["$in"] else "false"
        if isinstance(spec, dict):
            raise Unsupported(f"the archive cannot run {', '.join(spec)} on the list {field}")
        return f"coalesce(list_contains({col}, {_literal(spec, params)}), false)"
    if isinstance(spec, dict) and spec and all(k.startswith("$") for k in spec):
        parts = []
        for op, v in spec.items():
            if op == "$exists":
                if field.split(".")[-1].isdigit():  # an item of a list exists: the list is that long
                    base = _column(".".join(field.split(".")[:-1]))
                    n = int(field.split(".")[-1]) + 1
                    parts.append(f"coalesce(len({base}) >= {n}, false)" if v else f"coalesce(len({base}) < {n}, true)")
                else:
                    parts.append(f"{col} IS NOT NULL" if v else f"{col} IS NULL")
            elif op in ("$gte", "$gt", "$lt", "$lte"):
                sql = {"$gte": ">=", "$gt": ">", "$lt": "<", "$lte": "<="}[op]
                parts.append(f"{col} {sql} {_literal(v, params)}")
            elif op == "$ne":
                parts.append(f"{col} IS DISTINCT FROM {_literal(v, params)}")
            elif op == "$in":
                parts.append("(" + " OR ".join(f"{col} = {_literal(x, params)}" for x in v) + ")" if v else "false")
            else:
                raise Unsupported(f"the archive cannot run {op} (in $match on {field})")
        return " AND ".join(parts)
    return f"{col} = {_literal(spec, params)}"


def _value(expr: Any) -> str:
    if isinstance(expr, str) and expr.startswith("$"):
        return _column(expr[1:])
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        return repr(expr)
    raise Unsupported(f"the archive cannot compute {expr!r}")


def to_sql(pipeline: list[dict], source: str) -> tuple[str, list]:
    """One DuckDB statement for an aggregation pipeline of the stages the saved queries use."""
    params: list = []
    ctes = [f"s0 AS (SELECT * FROM {source})"]
    for i, stage in enumerate(pipeline, start=1):
        if len(stage) != 1:
            raise Unsupported(f"stage {i} has more than one operator")
        (op, spec), = stage.items()
        prev = f"s{i - 1}"
        if op == "$match":
            where = " AND ".join(_condition(f, s, params) for f, s in spec.items()) or "true"
            sql = f"SELECT * FROM {prev} WHERE {where}"
        elif op == "$group":
            key = spec["_id"]
            if isinstance(key, dict):
                key_sql = "struct_pack(" + ", ".join(f'"{k}" := {_value(v)}' for k, v in key.items()) + ")"
            elif key is None:
                key_sql = "NULL"
            else:
                key_sql = _value(key)
            accs = []
            for name, acc in spec.items():
                if name == "_id":
                    continue
                (aop, arg), = acc.items()
                if aop == "$sum" and arg == 1 or aop == "$count":
                    accs.append(f'count(*) AS "{name}"')
                elif aop == "$sum":
                    accs.append(f'coalesce(sum({_value(arg)}), 0) AS "{name}"')
                else:
                    raise Unsupported(f"the archive cannot run {aop} in $group")
            sql = f'SELECT {key_sql} AS "_id", {", ".join(accs)} FROM {prev} GROUP BY 1'
        elif op == "$sort":
            order = ", ".join(f"{_column(f)} {'ASC' if d == 1 else 'DESC'} NULLS FIRST" for f, d in spec.items())
            sql = f"SELECT * FROM {prev} ORDER BY {order}"
        elif op == "$limit":
            sql = f"SELECT * FROM {prev} LIMIT {int(spec)}"
        elif op == "$skip":
            sql = f"SELECT * FROM {prev} OFFSET {int(spec)}"
        elif op == "$unwind":
            if not isinstance(spec, str) or not spec.startswith("$") or "." in spec:
                raise Unsupported("the archive runs $unwind in its short form on a top-level field only")
            f = spec[1:]
            sql = f'SELECT * REPLACE (unnest("{f}") AS "{f}") FROM {prev}'
        elif op == "$count":
            sql = f'SELECT count(*) AS "{spec}" FROM {prev}'
        elif op == "$project":
            keep = [f for f, v in spec.items() if v in (1, True) and f != "_id"]
            drop = [f for f, v in spec.items() if v in (0, False)]
            if keep:
                cols = ([] if spec.get("_id", 1) in (0, False) else ['"_id"']) + [f'"{f}"' for f in keep]
                sql = f"SELECT {', '.join(cols)} FROM {prev}"
            else:
                sql = f"SELECT * EXCLUDE ({', '.join(chr(34) + f + chr(34) for f in drop)}) FROM {prev}"
        else:
            raise Unsupported(f"the archive cannot run {op}")
        ctes.append(f"s{i} AS ({sql})")
    last = len(ctes) - 1
    return "WITH " + ",\n".join(ctes) + f"\nSELECT * FROM s{last}", params


def run_pipeline(root: Path, collection: str, pipeline: list[dict], since: datetime | None,
                 until: datetime | None) -> list[dict]:
    if collection != "events":
        raise UserError(f"the archive holds events only; this query reads '{collection}' (run it without --archive)")
    files = files_for(root, since, until)
    if not files:
        return []
    # DuckDB keeps the order of a sorted CTE through the projections and limits after it
    # (preserve_insertion_order, on by default)
    sql, params = to_sql(pipeline, _source(files))
    cur = connect().execute(sql, params)
    names = [d[0] for d in cur.description]
    return [{n: _mongo_like(v) for n, v in zip(names, row) if v is not None} for row in cur.fetchall()]


def _mongo_like(value: Any) -> Any:
    """DuckDB values as pymongo gives them: naive UTC datetimes; struct fields that are NULL left out."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    if isinstance(value, dict):
        return {k: _mongo_like(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_mongo_like(v) for v in value]
    return value


# --- span and retention ---------------------------------------------------------------------------

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
    lo, hi = con.execute(f"SELECT min(event_time), max(event_time) FROM {_source(edge_files)}").fetchone()
    all_files = [f for _, fs in with_files for f in fs]
    events = con.execute(f"SELECT count(*) FROM {_source(all_files)}").fetchone()[0] if count_events else None
    return Span(len({p.server for p, _ in with_files}), len({p.day for p, _ in with_files}), _mongo_like(lo),
                _mongo_like(hi), events, len(all_files))


def prune(root: Path, retention_days: int, today: date | None = None, dry_run: bool = False) -> list[dict]:
    """Removes the days older than ``retention_days`` and records each removal in manifest/retention.jsonl."""
    today = today or datetime.now(timezone.utc).date()
    cutoff = today - timedelta(days=retention_days)
    removed = []
    log = root / "manifest" / "retention.jsonl"
    for p in partitions(root, last=cutoff - timedelta(days=1)):
        files = p.files()
        entry = {"removed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "server": p.server,
                 "date": p.day.isoformat(), "files": len(files),
                 "bytes": sum(f.stat().st_size for f in files), "retention_days": retention_days,
                 "events": (connect().execute(f"SELECT count(*) FROM {_source(files)}").fetchone()[0] if files else 0)}
        if not dry_run:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as out:  # recorded before the files go
                out.write(json.dumps(entry) + "\n")
            shutil.rmtree(p.path)
        removed.append(entry)
    return removed


def compact(root: Path, closed_after_days: int = 2, today: date | None = None) -> list[dict]:
    """Merges each closed day's files (one per checkpoint) into one, ordered by chain link.

    A day is closed ``closed_after_days`` after it ended: events that late are rare (a late one
    lands in a new file of that day, harmless). The merged file is written hidden, its row count
    checked against the files it replaces, then moved into place before they are removed: a
    reader at that moment may see a row twice, never miss one. Recorded in manifest/compaction.jsonl.
    """
    import uuid

    today = today or datetime.now(timezone.utc).date()
    done = []
    log = root / "manifest" / "compaction.jsonl"
    for p in partitions(root, last=today - timedelta(days=closed_after_days)):
        files = p.files()
        if len(files) < 2:
            continue
        name = f"part-compacted-{uuid.uuid4()}.parquet"
        hidden = p.path / f".{name}.inprogress"
        con = connect()
        expected = con.execute(f"SELECT count(*) FROM {_source(files)}").fetchone()[0]
        con.execute(f"COPY (SELECT * FROM {_source(files)} ORDER BY chain_seq) TO '{hidden}' "
                    "(FORMAT parquet, COMPRESSION snappy)")
        got = con.execute(f"SELECT count(*) FROM {_source([hidden])}").fetchone()[0]
        if got != expected:
            hidden.unlink()
            raise UserError(f"compacting {p.path}: wrote {got} rows for {expected}; nothing changed")
        hidden.rename(p.path / name)
        for f in files:
            f.unlink()
        entry = {"compacted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "server": p.server,
                 "date": p.day.isoformat(), "files": len(files), "events": expected, "into": name}
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        done.append(entry)
    return done


# --- the tiers, for `auditpipe status` ------------------------------------------------------------

def hot_tier(oldest: datetime, used: int, cap: int, wanted_hours: float, now: datetime) -> tuple[str, str]:
    """(health, detail) of the capped collection: a warning when it is full (90% of its size: the
    store trims in the background) and its oldest event is younger than the hours it should hold."""
    t = oldest.replace(tzinfo=timezone.utc) if oldest.tzinfo is None else oldest
    hours = (now - t).total_seconds() / 3600
    detail = f"oldest event {t:%Y-%m-%d %H:%M:%S} UTC ({hours:.1f} h); {used / 1048576:.0f} of {cap / 1048576:.0f} MiB used"
    if used >= 0.9 * cap and hours < wanted_hours:
        needed = int(cap / 1048576 * wanted_hours / max(hours, 0.01)) + 1
        return "warning", (f"{detail}: full, and holds less than store.events_hot_hours ({wanted_hours:g} h); "
                           f"raise store.events_capped_size_mb to about {needed} (docs/archive.md)")
    return "ok", detail


def oldest_insert(events) -> dict | None:
    """The capped collection's oldest insert (natural order, no sort: cheap on a store of any size),
    with its event_time: where the hot tier begins, since a capped collection trims by insertion."""
    return next(iter(events.find({}, {"event_time": 1}).limit(1)), None)


def tier_rows(cfg: Config) -> list:
    """Status rows for the hot tier (the capped collection) and the archive, with warnings."""
    from auditpipe.components.base import StatusRow
    from auditpipe.components.store import mongo_client

    rows = []
    s = cfg.store
    now = datetime.now(timezone.utc)
    oldest = None
    try:
        db = mongo_client(cfg, 2000, socket_timeout_ms=5000)[s["database"]]
        events = db[s["events_collection"]]
        oldest = oldest_insert(events)
        stats = db.command("collStats", s["events_collection"])
        used = int(stats.get("size", 0))
        cap = s["events_capped_size_mb"] * 1024 * 1024
        wanted = float(s["events_hot_hours"])
        if oldest is None or "event_time" not in oldest:
            rows.append(StatusRow("hot tier", None, s["events_collection"], "ok", "empty"))
        else:
            health, detail = hot_tier(oldest["event_time"], used, cap, wanted, now)
            rows.append(StatusRow("hot tier", None, s["events_collection"], health, detail))
    except Exception as e:  # noqa: BLE001 (the store's own row says what is wrong with it)
        rows.append(StatusRow("hot tier", None, s["events_collection"], "unknown", str(e)[:80]))
    root = cfg.archive_path
    if not cfg.archive["enabled"]:
        rows.append(StatusRow("archive", None, str(root), "warning", "disabled (archive.enabled): events leave "
                              "for good when the capped collection trims them"))
        return rows
    try:
        sp = span(root, count_events=False)
    except Unreadable as e:
        rows.append(StatusRow("archive", None, str(root), "warning", str(e)))
        return rows
    keep = cfg.archive["retention_days"]
    if not sp.files:
        rows.append(StatusRow("archive", None, str(root), "ok", "empty (nothing committed yet)"))
        return rows
    days = (now.replace(tzinfo=None) - sp.first).total_seconds() / 86400
    detail = (f"{sp.files} files, {sp.servers} servers, {sp.first:%Y-%m-%d %H:%M} to {sp.last:%Y-%m-%d %H:%M} UTC "
              f"({days:.1f} of {keep} days kept)")
    health = "ok"
    if oldest is not None and "event_time" in oldest and oldest["event_time"] < sp.first:
        health = "warning"
        detail += ": the store holds events older than the archive's oldest; the archive began later"
    rows.append(StatusRow("archive", None, str(root), health, detail))
    return rows
