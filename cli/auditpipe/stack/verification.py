"""Continuous verification (docs/security.md): the store's chains checked again and again without
anyone running `verify`, each finding raised as a critical `integrity` alert.

A pass is `verify` over the store, anchored by the heads of both the chain-heads collection and
the archive's manifest (signed, docs/security.md); the archive's rows are left to `verify`, as is
imported history. Each finding becomes an alert whose id names what was found (rule, server, kind,
link or event), so a finding that stays is one alert, and an alert someone deletes from the store
comes back at the next pass. Alerts go to the alerts collection and, new ones, to the alerts topic,
where a consumer outside the store sees them. The last pass, its findings and each server's last
verified link are kept in ``<state>/verification/watch.json`` (not in the store), which `status` shows.

The local stack's supervisor runs a pass every ``chain.watch_interval``, and never more often
than every ten times the last pass took, so that verification takes at most about a tenth of the
time whatever the store holds: a pass reads every stored event, which the local FerretDB decodes
whole (with the default interval measured to slow a busy stack's end-to-end rate; bench/README.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from auditpipe import contract
from auditpipe.config import Config
from auditpipe.evidence.chain import Finding

SEVERITY = "critical"
#: a pass starts at least this many times its predecessor's duration after it started
COST_FACTOR = 10


def state_file(cfg: Config) -> Path:
    return cfg.state_dir / "verification" / "watch.json"


@dataclass
class PassResult:
    started: datetime
    seconds: float
    findings: int
    raised: int  # alerts new at this pass
    servers: dict[str, int | None]  # server -> the last link verified in the store
    error: str = ""


def alert_of(where: str, f: Finding, now: datetime) -> dict:
    """The alert document (schemas/alert.schema.json) of one finding."""
    what = f.event_id or (f"link {f.seq}" if f.seq is not None else "")
    summary = f.line(where)
    return {
        "_id": "/".join(str(x) for x in (contract.rule("integrity"), f.server, where, f.kind,
                                           f.seq if f.seq is not None else "-", f.event_id or "-")),
        "rule": contract.rule("integrity"),
        "severity": SEVERITY,
        "server": f.server,
        "subject": what or None,
        "summary": summary if len(summary) <= 300 else summary[:297] + "...",
        "first_event_time": now,
        "last_event_time": now,
        "evidence": [f.event_id] if f.event_id else [],
        "evidence_count": 1 if f.event_id else 0,
        "controls": [],
        "raised_at": now,
    }


def run_pass(cfg: Config) -> PassResult:
    """One pass: verify the store, raise an alert for each finding, record the pass."""
    from auditpipe.evidence import verify
    from auditpipe.stack import job_settings

    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    result = PassResult(started, 0.0, 0, 0, {})
    try:
        v = verify.verify(cfg, store=True, in_archive=False, manifest_heads=cfg.archive["enabled"],
                          head_interval_s=job_settings.head_interval_seconds(cfg))
        result.findings = len(v.findings)
        result.servers = {r.server: r.last_seq for where, r in v.reports if where == "store"}
        now = datetime.now(timezone.utc).replace(microsecond=0)
        result.raised = raise_alerts(cfg, [alert_of(where, f, now) for where, f in v.findings])
    except Exception as e:  # noqa: BLE001 - recorded for status; the next pass tries again
        result.error = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
    result.seconds = time.monotonic() - t0
    save(cfg, result)
    return result


def raise_alerts(cfg: Config, alerts: list[dict]) -> int:
    """Sends the alerts not yet in the alerts collection to the alerts topic, then inserts them there
    (in that order: an alert the store holds is on the topic; one that failed to reach either is new
    again at the next pass); returns how many were new."""
    from pymongo.errors import BulkWriteError

    from auditpipe.store.client import mongo_client

    if not alerts:
        return 0
    coll = mongo_client(cfg)[cfg.store["database"]][cfg.store["alerts_collection"]]
    present = {a["_id"] for a in coll.find({"_id": {"$in": [a["_id"] for a in alerts]}}, {"_id": 1})}
    new = [a for a in alerts if a["_id"] not in present]
    if not new:
        return 0
    _send(cfg, new)
    try:
        coll.insert_many(new, ordered=False)
    except BulkWriteError as e:  # another pass inserted some meanwhile: duplicates are fine
        if any(err.get("code") != 11000 for err in e.details.get("writeErrors", [])):
            raise
    return len(new)


def _send(cfg: Config, alerts: list[dict]) -> None:
    from bson import json_util
    from confluent_kafka import Producer

    from auditpipe.stack import topics

    producer = Producer({**cfg.kafka_client, "enable.idempotence": True, "acks": "all"})
    for a in alerts:
        producer.produce(topics.topic_name("alerts"), key=a["_id"].encode(),
                         value=json_util.dumps(a, json_options=json_util.RELAXED_JSON_OPTIONS).encode())
    if producer.flush(30) != 0:
        raise RuntimeError(f"{len(alerts)} integrity alert(s) could not be sent to the alerts topic (tried again at the next pass)")


def save(cfg: Config, r: PassResult) -> None:
    f = state_file(cfg)
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp")
    tmp.write_text(json.dumps({"started": r.started.isoformat(), "seconds": round(r.seconds, 1),
                               "findings": r.findings, "raised": r.raised, "servers": r.servers,
                               "error": r.error}, indent=1))
    tmp.replace(f)


def last_pass(cfg: Config) -> dict | None:
    try:
        return json.loads(state_file(cfg).read_text())
    except (OSError, ValueError):
        return None


def next_delay(interval: float, last_seconds: float) -> float:
    """Seconds from one pass's start to the next's: the interval, or more when passes are costly."""
    return max(interval, COST_FACTOR * last_seconds)
