"""``auditpipe sessions`` and ``auditpipe session``: the sessions the job builds (schemas/session.schema.json),
from the store's sessions collection, and one session's records in order from the events collection."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from auditpipe import paths
from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.evidence.query import EPOCH, FAR_FUTURE, format_json, parse_time
from auditpipe.store.client import mongo_client
from auditpipe.terminal import shown

# open, or how a session ended: the schema's (the job's Session.END_* names them, SessionDocumentTest)
STATES = tuple(json.loads((paths.SCHEMAS / "session.schema.json").read_text())["properties"]["state"]["enum"])
STATEMENTS_SHOWN = 200  # of a session's records, by default: the first ones, in order
STATEMENT_CHARS = 300  # of each statement on a line (the store keeps it masked and whole)


def list_sessions(cfg: Config, since: str | None = None, until: str | None = None, servers: list[str] | None = None,
                  users: list[str] | None = None, state: str | None = None, data_class: str | None = None,
                  limit: int = 100) -> list[dict]:
    """Sessions that started in [since, until), newest first."""
    query: dict = {"start_time": {"$gte": parse_time(since, EPOCH), "$lt": parse_time(until, FAR_FUTURE)}}
    if servers:
        query["server"] = {"$in": list(servers)}
    if users:
        query["user"] = {"$in": list(users)}
    if state:
        query["state"] = state
    if data_class:
        query["data_classes"] = data_class
    with mongo_client(cfg) as client:
        coll = client[cfg.store["database"]][cfg.store["sessions_collection"]]
        return list(coll.find(query).sort([("start_time", -1), ("_id", 1)]).limit(limit))


def find_session(cfg: Config, server: str, which: str) -> dict:
    """A session by its id, or by its connection id on ``server`` (the newest one of that id)."""
    with mongo_client(cfg) as client:
        coll = client[cfg.store["database"]][cfg.store["sessions_collection"]]
        if "/" in which:
            found = coll.find_one({"_id": which, "server": server})
        else:
            try:
                connection = int(which)
            except ValueError:
                raise UserError(f"session: {which!r} is neither a session id (<server>/<connection>/<start ms>) "
                                "nor a connection id (a number)") from None
            found = next(iter(coll.find({"server": server, "connection_id": connection})
                              .sort([("start_time", -1)]).limit(1)), None)
    if found is None:
        raise UserError(f"no session {which} of server {server} in {cfg.store['sessions_collection']} "
                        "(list them with: auditpipe sessions --server " + server + ")")
    return found


def session_records(cfg: Config, session: dict, limit: int = STATEMENTS_SHOWN) -> list[dict]:
    """The session's records in order: its server's events of its connection id between its first and last
    record. From the events collection, which holds the newest events (capped): an older session's
    records may be trimmed from it; the archive holds them all (docs/archive.md)."""
    query = {"server": session["server"], "connection_id": session["connection_id"],
             "event_time": {"$gte": session["first_event_time"], "$lte": session["last_event_time"]}}
    fields = {"event_time": 1, "event_name": 1, "command_class": 1, "action": 1, "status": 1, "outcome": 1,
              "sqltext": 1, "tables": 1, "data_classes": 1, "record_id": 1}
    with mongo_client(cfg) as client:
        coll = client[cfg.store["database"]][cfg.store["events_collection"]]
        return list(coll.find(query, fields).sort([("event_time", 1), ("_id", 1)]).limit(limit))


def _utc(t: datetime | None) -> str:
    if t is None:
        return "-"
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    s = ms // 1000
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def format_sessions(rows: list[dict]) -> str:
    """One line per session: start, server, connection, user and origin, state, duration, records, failures, data classes."""
    if not rows:
        return "(no sessions)"
    table = [("start (UTC)", "server", "conn", "user", "from", "state", "duration", "records", "failed", "data classes")]
    for r in rows:
        table.append((_utc(r.get("start_time")), shown(r.get("server")), str(r.get("connection_id")),
                      shown(r.get("user")), shown(r.get("ip") or r.get("host")), shown(r.get("state")),
                      _duration(r.get("duration_ms")), str(r.get("records", 0)), str(r.get("failures", 0)),
                      shown(",".join(r.get("data_classes") or [])) or "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table)


def format_session(session: dict, records: list[dict]) -> str:
    """The session's fields, then its records in order (statements masked as stored, escaped, cut)."""
    s = session
    lines = [f"session {shown(s['_id'])}",
             f"  server {shown(s['server'])}, connection {s['connection_id']}, user {shown(s.get('user'))}"
             f" from {shown(s.get('ip') or s.get('host'))}, database {shown(s.get('db'))}",
             f"  login {_utc(s.get('login_time'))} ({shown(s.get('login_outcome') or 'not among the records')}),"
             f" last record {_utc(s.get('last_event_time'))}, logout {_utc(s.get('logout_time'))},"
             f" state {shown(s.get('state'))}, duration {_duration(s.get('duration_ms'))}",
             f"  {s.get('records', 0)} records, {s.get('failures', 0)} refused; by category: "
             + (", ".join(f"{shown(k)} {v}" for k, v in sorted((s.get('categories') or {}).items())) or "-"),
             "  tables: " + (shown(", ".join(s.get("tables") or [])) or "-")
             + (f" and {s['more_tables']} more" if s.get("more_tables") else "")
             + "; data classes: " + (shown(", ".join(s.get("data_classes") or [])) or "-")]
    lines.append("")
    if not records:
        lines.append("(none of its records is in the events collection any more: the archive holds them)")
    for r in records:
        text = r.get("sqltext") or r.get("action") or r.get("event_name") or ""
        text = text if len(text) <= STATEMENT_CHARS else text[:STATEMENT_CHARS] + "..."
        outcome = "" if r.get("outcome") in (None, "success") else f" [{shown(r.get('outcome'))} {r.get('status')}]"
        lines.append(f"{_utc(r.get('event_time'))}  {shown(r.get('action') or r.get('event_name')):<16} {shown(text)}{outcome}")
    if len(records) < s.get("records", 0):
        lines.append(f"({len(records)} of its {s.get('records')} records shown)")
    return "\n".join(lines)


__all__ = ["STATES", "find_session", "format_json", "format_session", "format_sessions", "list_sessions",
           "session_records"]
