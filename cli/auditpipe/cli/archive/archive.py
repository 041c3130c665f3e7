"""`auditpipe archive`: the archive's span; compact closed days; prune days older than the retention."""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import at_least_one, command


def cmd_status(app: Application) -> int:
    from auditpipe.archive import reader

    cfg = app.config
    root = cfg.archive_path
    sp = reader.span(root)
    if not sp.files:
        app.out(f"archive {root}: empty")
        return 0
    app.out(f"archive {root}: {sp.events} events of {sp.servers} servers in {sp.files} files over {sp.days} days, "
            f"{sp.first:%Y-%m-%d %H:%M:%S} to {sp.last:%Y-%m-%d %H:%M:%S} UTC; keeps {cfg.archive['retention_days']} days")
    return 0


def cmd_compact(app: Application) -> int:
    from auditpipe.archive import retention

    root = app.config.archive_path
    done = retention.compact(root)
    for e in done:
        app.out(f"compacted {e['server']} {e['date']}: {e['files']} files, {e['events']} events, into {e['into']}")
    app.out(f"compacted {len(done)} server-days" + (f"; recorded in {root / 'manifest' / 'compaction.jsonl'}"
                                                   if done else " (none had more than one file)"))
    return 0


def cmd_prune(app: Application) -> int:
    from auditpipe.archive import retention

    cfg, a = app.config, app.args
    root = cfg.archive_path
    days = a.retention_days or cfg.archive["retention_days"]
    removed = retention.prune(root, days, dry_run=a.dry_run)
    verb = "would remove" if a.dry_run else "removed"
    for e in removed:
        app.out(f"{verb} {e['server']} {e['date']}: {e['events']} events in {e['files']} files ({e['bytes']} bytes)")
    app.out(f"{verb} {len(removed)} server-days older than {days} days"
            + ("" if a.dry_run or not removed else f"; recorded in {root / 'manifest' / 'retention.jsonl'}"))
    return 0


def register(sub) -> None:
    p = sub.add_parser("archive", help="the archive's span; compact closed days; prune days older than the retention",
                       description="The archive (Parquet per server and day, docs/archive.md). Run compact and prune "
                                   "daily (cron).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    command(actions, "status", "events, servers and days the archive holds",
            "Events, servers and days the archive holds, and its first and last event.",
            ("./auditpipe archive status",), cmd_status)
    command(actions, "compact", "merge each closed day's files into one",
            "Merges each closed day's files (the job writes one per checkpoint) into one, and records it in "
            "manifest/compaction.jsonl.",
            ("./auditpipe archive compact",), cmd_compact)
    s = command(actions, "prune", "remove the days older than archive.retention_days",
                "Removes the days older than archive.retention_days (400) and appends what it removed, and when, "
                "to manifest/retention.jsonl.",
                ("./auditpipe archive prune --dry-run", "./auditpipe archive prune --retention-days 366"), cmd_prune)
    s.add_argument("--retention-days", type=at_least_one, help="override archive.retention_days")
    s.add_argument("--dry-run", action="store_true", help="only say what would be removed")
