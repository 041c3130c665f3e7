"""``auditpipe alerts``: the alerts the job's rules raised (docs/alerts.md), from the store."""

from __future__ import annotations

from datetime import datetime, timezone

from auditpipe.config import Config
from auditpipe.evidence.query import EPOCH, FAR_FUTURE, format_json, parse_time
from auditpipe.store.client import mongo_client
from auditpipe.terminal import shown


def list_alerts(cfg: Config, since: str | None = None, until: str | None = None, rule: str | None = None,
                severity: str | None = None, servers: list[str] | None = None, limit: int = 100) -> list[dict]:
    """Alerts whose first evidence falls in [since, until), newest first."""
    query: dict = {"first_event_time": {"$gte": parse_time(since, EPOCH), "$lt": parse_time(until, FAR_FUTURE)}}
    if rule:
        query["rule"] = rule
    if severity:
        query["severity"] = severity
    if servers:
        query["server"] = {"$in": list(servers)}
    with mongo_client(cfg) as client:
        coll = client[cfg.store["database"]][cfg.store["alerts_collection"]]
        return list(coll.find(query).sort([("first_event_time", -1), ("_id", 1)]).limit(limit))


def _utc(t: datetime) -> str:
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def format_alerts(rows: list[dict]) -> str:
    """One line per alert: when its first evidence happened, severity, rule, server, then the summary."""
    if not rows:
        return "(no alerts)"
    rule_w = max(len(shown(r["rule"])) for r in rows)
    server_w = max(len(shown(r.get("server"))) for r in rows)
    lines = [f"{'first event (UTC)':<19}  {'severity':<8}  {'rule':<{rule_w}}  {'server':<{server_w}}  summary"]
    for r in rows:
        lines.append(f"{_utc(r['first_event_time'])}  {shown(r['severity']):<8}  {shown(r['rule']):<{rule_w}}  "
                     f"{shown(r.get('server')):<{server_w}}  {shown(r['summary'])}")
    return "\n".join(lines)


def format_alerts_json(rows: list[dict]) -> str:
    return format_json(rows)
