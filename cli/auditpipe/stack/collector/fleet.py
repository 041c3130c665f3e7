"""The status row of the sources' servers: one line for a fleet, the silent ones by name.

A server is silent when the store holds no event of it newer than ``collector.silent_after``, read
from the servers collection (one document per server with the newest event a chain head covers:
schemas/server.schema.json), so it lags the newest stored event by up to a chain head interval.
The servers that send are counted, not listed: fifty sources make one line."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from auditpipe.config import Config, duration_seconds
from auditpipe.stack.components.base import StatusRow

# silent servers named in the row at most; the rest are counted
LISTED = 10


def expected_servers(cfg: Config) -> list[str]:
    """The servers the configuration names: each file source's, and each syslog receiver's with a name
    (not the demo's own log, which only `demo` writes)."""
    named = {s["server"] for s in cfg.data["sources"] if "path" in s}
    named |= {s["server"] for s in cfg.listen_sources() if s.get("server", "from-host") != "from-host"}
    return sorted(named)


def summary(expected: list[str], last_seen: dict[str, datetime], now: datetime,
            silent_after: float) -> tuple[str, str]:
    """(health, detail) for the servers row: ``last_seen`` maps a server to its newest event's time
    (UTC); ``silent_after`` seconds, 0 for never silent."""
    from auditpipe.terminal import shown

    def ago(t: datetime) -> str:
        s = max(0, int((now - t).total_seconds()))
        return f"{s // 86400}d ago" if s >= 86400 else f"{s // 3600}h ago" if s >= 3600 else f"{s // 60}m ago"

    others = sorted(set(last_seen) - set(expected))  # syslog senders named by their host, imports
    if not expected:
        return "ok", "none named in sources" + (f"; {len(others)} by their own name (syslog hosts, imports)"
                                                if others else "")
    silent = []
    for server in expected:
        t = last_seen.get(server)
        if t is None:
            silent.append((server, "no event stored"))
        elif silent_after and now - t > timedelta(seconds=silent_after):
            silent.append((server, f"last event {t:%Y-%m-%d %H:%M} UTC, {ago(t)}"))
    window = f"in the last {_span(silent_after)}" if silent_after else "stored"
    detail = f"{len(expected)} configured: {len(expected) - len(silent)} with events {window}"
    if others:
        detail += f"; {len(others)} more by their own name (syslog hosts, imports)"
    if not silent:
        return "ok", detail
    named = ", ".join(f"{shown(s)} ({why})" for s, why in silent[:LISTED])
    more = f" and {len(silent) - LISTED} more" if len(silent) > LISTED else ""
    return "warning", f"{detail}; {len(silent)} silent: {named}{more}"


def _span(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"


def servers_row(cfg: Config) -> StatusRow:
    """The row: configured servers with events lately, and the silent ones."""
    from auditpipe.store.client import mongo_client

    s = cfg.store
    try:
        db = mongo_client(cfg, 2000, socket_timeout_ms=5000)[s["database"]]
        last_seen = {}
        for d in db[s["servers_collection"]].find({}, {"last_event_time": 1}):
            t = d.get("last_event_time")
            if isinstance(d.get("_id"), str) and isinstance(t, datetime):
                last_seen[d["_id"]] = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    except Exception as e:  # noqa: BLE001 (the store's own row says what is wrong with it)
        return StatusRow("servers", None, s["servers_collection"], "unknown", str(e)[:80])
    health, detail = summary(expected_servers(cfg), last_seen, datetime.now(timezone.utc),
                             duration_seconds(cfg.data["collector"]["silent_after"]))
    return StatusRow("servers", None, s["servers_collection"], health, detail)
