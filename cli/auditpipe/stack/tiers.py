"""The two tiers as `auditpipe status` shows them: the capped collection (hot) and the archive,
with a warning when the hot tier holds less than it should."""

from __future__ import annotations

from datetime import datetime, timezone

from auditpipe.archive.reader import Unreadable, span
from auditpipe.config import Config
from auditpipe.stack.components.base import StatusRow
from auditpipe.store.client import mongo_client, oldest_insert


def hot_tier(oldest: datetime, used: int, cap: int, wanted_hours: float | None, now: datetime) -> tuple[str, str]:
    """(health, detail) of the capped collection: a warning when it is full (90% of its size: the
    store trims in the background) and its oldest event is younger than the hours it should hold
    (``wanted_hours``, store.events_hot_hours; None: not judged)."""
    t = oldest.replace(tzinfo=timezone.utc) if oldest.tzinfo is None else oldest
    hours = (now - t).total_seconds() / 3600
    detail = f"oldest event {t:%Y-%m-%d %H:%M:%S} UTC ({hours:.1f} h); {used / 1048576:.0f} of {cap / 1048576:.0f} MiB used"
    if wanted_hours is not None and used >= 0.9 * cap and hours < wanted_hours:
        needed = int(cap / 1048576 * wanted_hours / max(hours, 0.01)) + 1
        return "warning", (f"{detail}: full, and holds less than store.events_hot_hours ({wanted_hours:g} h); "
                           f"raise store.events_capped_size_mb to about {needed} (docs/archive.md)")
    return "ok", detail


def tier_rows(cfg: Config) -> list:
    """Status rows for the hot tier (the capped collection) and the archive, with warnings."""
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
        wanted = float(s["events_hot_hours"]) if "events_hot_hours" in s else None
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
