"""The archive's upkeep: merging each closed day's files into one, and removing the days past the
retention, each recorded in the archive's manifest (docs/archive.md)."""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from auditpipe.archive.reader import connect, parquet_source, partitions
from auditpipe.errors import UserError


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
                 "events": (connect().execute(f"SELECT count(*) FROM {parquet_source(files)}").fetchone()[0] if files else 0)}
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
        expected = con.execute(f"SELECT count(*) FROM {parquet_source(files)}").fetchone()[0]
        con.execute(f"COPY (SELECT * FROM {parquet_source(files)} ORDER BY chain_seq) TO '{hidden}' "
                    "(FORMAT parquet, COMPRESSION snappy)")
        got = con.execute(f"SELECT count(*) FROM {parquet_source([hidden])}").fetchone()[0]
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
