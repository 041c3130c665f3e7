"""`auditpipe import`: servers' existing audit logs (their rotated history, gzip files too) through
the job's own graph (io.auditpipe.flink.ImportJob, one server after another) into the archive, the
evidence collection, the stats and the rollups (docs/archive.md "Imported history").

Nothing is imported twice: the ids of the server's events the archive and the store already hold
are handed to the job, which leaves those records out (counted as already present). What is
imported is linked in a chain of its own, ``import-<UTC time of the run>``, beside the server's
live chain; ``verify`` checks each.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from auditpipe import formats, paths
from auditpipe.archive import reader
from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.terminal import shown

#: A server name, as the configuration's sources name them (schemas/config.schema.json $defs.name).
SERVER_NAME = json.loads((paths.SCHEMAS / "config.schema.json").read_text())["$defs"]["name"]["pattern"]

#: The import's summary line on the job's stdout, and what each field means to a person.
SUMMARY_FIELDS = (("records", "records read"), ("already_present", "already present (not imported again)"),
                  ("dead_letters", "dead letters (kept in the store's dead-letter collection, with the reason)"),
                  ("framing", "pieces of the files' own framing skipped"))


@dataclass
class Imported:
    chain: str
    files: list[Path]
    summary: dict
    events: int  # what the archive holds of the chain: the events imported
    ok: bool

    @property
    def exit_code(self) -> int:
        """0 imported; 1 the import failed; 3 imported, with dead letters to look at."""
        if not self.ok:
            return 1
        return 3 if self.summary.get("dead_letters") else 0


def chain_name(now: datetime | None = None) -> str:
    return "import-" + (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def detect(files: list[Path]) -> tuple[str | None, str]:
    """The files' format from the first lines of the first file that tells (gzip files too)."""
    reasons = []
    for f in files:
        fmt, how = formats.detect_file(f)
        if fmt:
            return fmt, how
        reasons.append(how)
    return None, "; ".join(reasons[:3])


def server_groups(servers: list[list[str]], files: list[str]) -> list[tuple[str, list[Path]]]:
    """Each server with its files, from ``--server NAME [FILE...]`` (repeated) and the command's own
    FILEs (which belong to a single --server given without files)."""
    if files:
        if len(servers) != 1 or len(servers[0]) > 1:
            raise UserError("files after the command belong to a single --server NAME; for several servers give "
                            "each one's files after its name: --server NAME FILE... --server NAME FILE...")
        servers = [[servers[0][0], *files]]
    groups = []
    for name, *named in servers:
        if not named:
            raise UserError(f"--server {name}: no files (give them after its name: --server {name} FILE...)")
        if name in (g[0] for g in groups):
            raise UserError(f"--server {name} is given twice")
        groups.append((name, [Path(f) for f in named]))
    every = [f.resolve() for _, fs in groups for f in fs if f.exists()]
    if len(set(every)) < len(every):
        raise UserError("a file is named twice")
    return groups


def configured_source(cfg: Config, server: str) -> dict | None:
    return next((s for s in cfg.collector_sources() if s["server"] == server), None)


def check_arguments(cfg: Config, files: list[Path], server: str, fmt: str | None, tz: str | None) -> tuple[str, str]:
    """(format, time zone) for the import, or a UserError that says what is wrong."""
    from zoneinfo import available_timezones

    if not re.fullmatch(SERVER_NAME, server):
        raise UserError(f"--server: '{server}' is not a server name (letters, digits, '.', '_', '-'; up to 63)")
    if not cfg.archive["enabled"]:
        raise UserError("import writes the archive, and archive.enabled is false in the configuration")
    for f in files:
        if not f.is_file():
            raise UserError(f"{f} is not a file")
        try:
            with open(f, "rb") as fh:
                fh.read(1)
        except OSError as e:
            raise UserError(f"cannot read {f}: {e.strerror}") from None
    source = configured_source(cfg, server)
    if source is not None:
        shipped_as = source.get("format", "percona-json")
        if fmt is not None and shipped_as not in ("auto", fmt):
            raise UserError(f"server {server} is shipped as {shipped_as} (sources in {cfg.file}); its history in "
                            f"{fmt} would mix two formats under one name: import it under a server name of its own")
        fmt = fmt or (None if shipped_as == "auto" else shipped_as)
        tz = tz or source.get("timezone", "UTC")
    if fmt is None:
        fmt, how = detect(files)
        if fmt is None:
            raise UserError(f"cannot tell the format: {how}; give --format")
    tz = tz or "UTC"
    if tz not in available_timezones():
        raise UserError(f"--timezone: '{tz}' is not an IANA time zone name (e.g. UTC, Europe/Berlin)")
    return fmt, tz


def require_store(cfg: Config) -> None:
    """The store answers: import writes to it (and reads what it holds), so it must be running."""
    from pymongo.errors import PyMongoError

    from auditpipe.config import redact_uri
    from auditpipe.store.client import mongo_client

    try:
        mongo_client(cfg, 3000).admin.command("ping")
    except PyMongoError as e:
        raise UserError(f"the store at {redact_uri(cfg.store_uri)} does not answer ({e.__class__.__name__}); "
                        f"import writes to it: start the stack ({paths.COMMAND} up)") from None


def known_id_line(event_id: str) -> str:
    """An id as a line of the known-ids file: a JSON string, every control character escaped, so an id
    holding a line break is one line too (KnownIds reads it back)."""
    return json.dumps(event_id) + "\n"


def write_known_ids(cfg: Config, server: str, out: Path) -> int:
    """The ids of ``server``'s events the archive holds (every chain) and the store holds above the
    archive's newest live link (the newest seconds, not committed to the archive yet), one per line
    (``known_id_line``)."""
    from pymongo.errors import PyMongoError

    n = 0
    with open(out, "w", encoding="utf-8") as f:
        files = [x for p in reader.partitions(cfg.archive_path, server=server) for x in p.files()]
        if files:
            cur = reader.connect().execute(f"SELECT _id FROM {reader.parquet_source(files)}")
            while rows := cur.fetchmany(100_000):
                for (i,) in rows:
                    if isinstance(i, str):
                        f.write(known_id_line(i))
                        n += 1
        archived = reader.newest_live_links(cfg.archive_path)
        try:
            if cfg.store_uses_local_ferretdb:
                from auditpipe.store.ferretdb import newest_unarchived
                from auditpipe.store.trimming import TRIM_CHAIN_WINDOW

                docs = newest_unarchived(cfg, cfg.store["events_collection"], archived, TRIM_CHAIN_WINDOW,
                                         fields={"_id", "server", "chain_seq"})
            else:
                from auditpipe.store.client import mongo_client

                docs = mongo_client(cfg)[cfg.store["database"]][cfg.store["events_collection"]].find(
                    {"server": server, "chain_seq": {"$gt": archived.get(server, 0)}}, {"_id": 1, "server": 1})
            for d in docs:
                if d.get("server") == server and isinstance(d.get("_id"), str):
                    f.write(known_id_line(d["_id"]))
                    n += 1
        except PyMongoError as e:
            raise UserError(f"the store does not answer ({e.__class__.__name__}); import writes to it: "
                            f"start the stack ({paths.COMMAND} up) or check store.uri") from None
    return n


def archived_events(cfg: Config, server: str, chain: str) -> int:
    files = [x for p in reader.partitions(cfg.archive_path, server=server) for x in p.files()]
    if not files:
        return 0
    source = reader.parquet_source(files)
    con = reader.connect()
    if not reader.has_chains(con, source):
        return 0
    return con.execute(f"SELECT count(*) FROM {source} WHERE chain = ?", [chain]).fetchone()[0]


def by_stage(summary: dict) -> str:
    """The summary's dead letters by stage (schemas/dead-letter.schema.json), as "parse 4, stats 2"."""
    return ", ".join(f"{stage} {n:,}" for stage, n in sorted((summary.get("dead_letter_stages") or {}).items()))


def run_line(done: list[Imported], servers: int, seconds: float) -> str:
    """The last line of a run of several servers: its events, servers and rate, and every dead letter it made."""
    events = sum(i.events for i in done)
    stages: dict[str, int] = {}
    for i in done:
        for stage, n in (i.summary.get("dead_letter_stages") or {}).items():
            stages[stage] = stages.get(stage, 0) + n
    dead = sum(i.summary.get("dead_letters") or 0 for i in done)
    return (f"{events:,} events of {len(done)} of {servers} servers in {seconds:.1f} s "
            f"({events / max(seconds, 1e-3):,.0f} events/s); {dead:,} dead letters"
            + (f" ({by_stage({'dead_letter_stages': stages})})" if dead else ""))


def describe(i: Imported, server: str) -> list[str]:
    s = i.summary
    seconds = float(s.get("seconds") or 0)
    rate = f", {i.events / seconds:,.0f} events/s" if seconds > 0 else ""
    lines = [f"{'imported' if i.ok else 'IMPORT FAILED after'} {i.events:,} events of server {server} into the "
             f"archive, the evidence collection, the hourly counts and the rollups, in chain {i.chain} "
             f"({len(i.files)} file(s), {seconds:.1f} s{rate})"]
    for key, what in SUMMARY_FIELDS:
        if key in s:
            stages = by_stage(s) if key == "dead_letters" and s[key] else ""
            lines.append(f"  {s[key]:>12,}  {what}" + (f", by stage: {stages}" if stages else ""))
    for reason, n in sorted((s.get("dead_letter_reasons") or {}).items(), key=lambda x: -x[1])[:10]:
        lines.append(f"  {n:>12,}  dead letter: {shown(reason)}")  # a reason can quote the record
    if not i.ok:
        lines.append("what was committed stays, and importing the same files again adds only the rest")
    return lines
