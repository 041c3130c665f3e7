"""Continuous verification (docs/security.md): the store's chains checked again and again without
anyone running `verify`, each finding raised as a critical `integrity` alert.

A pass is `verify` over the store, anchored by the heads of both the chain-heads collection and
the archive's manifest (signed, docs/security.md); the archive's rows are left to `verify`, as is
imported history. Most passes are incremental: they read only the events stored since the last
pass (newest first, back to the newest one it read: the events collection is capped, so anything
inserted since, a forged document too, comes after it), go on from each server's last verified
link, which must still be there unchanged, and judge the new links, the heads and any deletion at
the end. A full pass, which reads and judges every stored event, runs every
``chain.full_verify_interval`` (and whenever an incremental one cannot go on: its marker or an
anchor is gone); it alone sees an event verified earlier being edited or deleted. Each finding
becomes an alert whose id names what was found (rule, server, kind, link or event), so a finding
that stays is one alert, and an alert someone deletes from the store comes back at the next full
pass. Alerts go to the alerts collection and, new ones, to the alerts topic,
where a consumer outside the store sees them, and to the webhook when one is configured (signed as
the job's are; docs/alerts.md). The last pass, its findings and each server's last
verified link are kept in ``<state>/verification/watch.json`` (not in the store), which `status` shows.

The local stack's supervisor runs a pass every ``chain.watch_interval`` (``watch``), and so does
`auditpipe verify --watch`, the deployment's verifier service; never more often than every ten times
the last pass took, nor a full pass more often than ten times the last full one took, so that
verification takes at most about a tenth of the time whatever the store holds. On MongoDB an
incremental pass reads what is new; the local FerretDB reads the whole collection for any sorted
query (docs/security.md "Continuous verification" has the figures), so there an incremental pass
saves the decoding and hashing of what was verified before, not FerretDB's own read.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from auditpipe import contract
from auditpipe.config import Config
from auditpipe.evidence import frameworks
from auditpipe.evidence.chain import Finding

SEVERITY = "critical"
#: a pass starts at least this many times its predecessor's duration after it started (a full pass: the last full one's)
COST_FACTOR = 10
#: the part of a pass's time it reads the store in (evidence/verify.py Pacer): the rest it pauses, leaving
#: the store and the cores to the pipeline beside it (bench/README.md "The long run")
WATCH_SHARE = 1 / 3
#: how many open findings' alert ids the state keeps (those raised since the last full pass)
OPEN_KEPT = 1000


def state_file(cfg: Config) -> Path:
    return cfg.state_dir / "verification" / "watch.json"


@dataclass
class PassResult:
    started: datetime
    seconds: float
    findings: int  # open: found by the last full pass or an incremental one since
    raised: int  # alerts new at this pass
    servers: dict[str, int | None]  # server -> the last link verified in the store
    error: str = ""
    kind: str = "full"  # or "incremental"
    full: dict | None = None  # the last full pass: {"started": ISO time, "seconds": ...}
    open: list[str] | None = None  # the alert ids of the open findings
    progress: dict | None = None  # where the next incremental pass goes on (Progress, as JSON)


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
        "frameworks": frameworks.of_subject(contract.rule("integrity")),
        "raised_at": now,
    }


def full_due(cfg: Config, prior: dict | None, now: datetime) -> bool:
    """Whether the next pass reads the whole store: there is no earlier pass to go on from, or the last
    full one started chain.full_verify_interval ago (or ten times its duration, if longer)."""
    from auditpipe.config import duration_seconds

    if not prior or not prior.get("progress") or not prior.get("full"):
        return True
    try:
        last = datetime.fromisoformat(prior["full"]["started"])
        seconds = float(prior["full"]["seconds"])
    except (KeyError, TypeError, ValueError):
        return True
    every = max(duration_seconds(cfg.data["chain"]["full_verify_interval"]), COST_FACTOR * seconds)
    return (now - last).total_seconds() >= every


def run_pass(cfg: Config) -> PassResult:
    """One pass, full or incremental (``full_due``): verify the store, raise an alert for each finding,
    record the pass."""
    from auditpipe.evidence import verify
    from auditpipe.stack.flink import job_settings

    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    prior = last_pass(cfg)
    result = PassResult(started, 0.0, 0, 0, {})
    try:
        full = full_due(cfg, prior, started)
        after = verify.Progress() if full else progress_of(prior["progress"])
        v = verify.verify(cfg, store=True, in_archive=False, manifest_heads=cfg.archive["enabled"],
                          head_interval_s=job_settings.head_interval_seconds(cfg),
                          max_ahead_s=job_settings.max_ahead_seconds(cfg), after=after, share=WATCH_SHARE)
        result.kind = "incremental" if v.incremental else "full"
        result.servers = {r.server: r.last_seq for where, r in v.reports if where == "store"}
        for server, anchor in v.progress.anchors.items():  # nothing new: the link verified before
            if result.servers.get(server) is None:
                result.servers[server] = anchor.seq
        now = datetime.now(timezone.utc).replace(microsecond=0)
        alerts = [alert_of(where, f, now) for where, f in v.findings]
        kept = [] if result.kind == "full" else list((prior or {}).get("open") or [])
        result.open = list(dict.fromkeys(kept + [a["_id"] for a in alerts]))[:OPEN_KEPT]
        result.findings = len(result.open)
        result.progress = progress_json(v.progress)
        result.full = (prior or {}).get("full") if result.kind == "incremental" else None
        result.raised = raise_alerts(cfg, alerts)
    except Exception as e:  # noqa: BLE001 - recorded for status; the next pass tries again
        result.error = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
    result.seconds = time.monotonic() - t0
    if result.kind == "full" and result.full is None and not result.error:
        result.full = {"started": started.isoformat(), "seconds": round(result.seconds, 1)}
    if result.error and prior:  # a failed pass changes nothing: the next goes on from the last good one
        result.full, result.open, result.progress = prior.get("full"), prior.get("open"), prior.get("progress")
        result.findings = len(result.open or [])
    try:
        save(cfg, result)
    except OSError as e:  # the alerts are raised; only status's record of the pass is missing
        result.error = result.error or f"the pass's record {state_file(cfg)} could not be written: {e}"
    return result


def raise_alerts(cfg: Config, alerts: list[dict]) -> int:
    """Sends the alerts not yet in the alerts collection to the alerts topic, then inserts them there
    (in that order: an alert the store holds is on the topic; one that failed to reach either is new
    again at the next pass), then POSTs them to the webhook; returns how many were new."""
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
    _notify(cfg, new)
    return len(new)


def _send(cfg: Config, alerts: list[dict]) -> None:
    from bson import json_util
    from confluent_kafka import Producer

    from auditpipe.stack.kafka import topics

    # as its own Kafka user (kafka.security.principals.verifier), which may only write the alerts topic;
    # without one as the job, the topic's other producer
    part = "verifier" if "verifier" in cfg.kafka["security"].get("principals", {}) else "job"
    producer = Producer({**cfg.kafka_client_for(part), "enable.idempotence": True, "acks": "all"})
    for a in alerts:
        producer.produce(topics.topic_name("alerts"), key=a["_id"].encode(),
                         value=json_util.dumps(a, json_options=json_util.RELAXED_JSON_OPTIONS).encode())
    if producer.flush(30) != 0:
        raise RuntimeError(f"{len(alerts)} integrity alert(s) could not be sent to the alerts topic "
                           "(tried again at the next pass)")


def _notify(cfg: Config, alerts: list[dict]) -> None:
    """POSTs each alert to the configured webhook as the job's WebhookSink does (stack/alerts/webhook.py): the
    JSON body, headers X-Auditpipe-Alert-Id and, with a key, X-Auditpipe-Signature. A notification,
    not the record: one that fails after its retries is logged, never raised."""
    from bson import json_util

    from auditpipe.stack.alerts import webhook

    if not webhook.configured(cfg, lambda m: _log(f"verification: {m}")):
        return
    for a in alerts:
        body = json_util.dumps(a, json_options=json_util.RELAXED_JSON_OPTIONS).encode()
        webhook.post(cfg, body, {"X-Auditpipe-Alert-Id": a["_id"]},
                     f"integrity alert {a['_id']} (it is in the alerts collection and on the alerts topic)",
                     lambda m: _log(f"verification: {m}"))


def _log(message: str) -> None:
    import sys

    print(f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ} {message}", file=sys.stderr, flush=True)


def watch(cfg: Config, interval: float, first: float, log=_log) -> None:
    """Runs a pass ``first`` seconds from now and then every ``interval`` (``next_delay``), for ever,
    logging new findings and a failed pass once until it changes."""
    time.sleep(first)
    last_error = review_error = ""
    while True:
        r = run_pass(cfg)
        if r.raised:
            log(f"verification: {r.raised} new finding(s) in the store, raised as critical integrity alerts "
                "(auditpipe alerts --rule integrity; auditpipe verify names them)")
        if r.error and r.error != last_error:
            log(f"verification: the pass failed, trying again: {r.error}")
        last_error = r.error
        review_error = check_review_deadlines(cfg, log, review_error)
        time.sleep(max(0.0, next_delay(interval, r.seconds) - r.seconds))


def check_review_deadlines(cfg: Config, log, last_error: str) -> str:
    """After each pass: a decision dated before the last check found the decisions' chain without it is an
    integrity alert (evidence/reviews.witness), the days awaiting review refresh the review queue, and a
    day past review.deadline raises its review_overdue alert (evidence/reviews.check_deadlines). Logs new
    alerts, and a failure once until it changes; returns the failure ("" for none)."""
    from auditpipe.evidence import reviews

    try:
        now = datetime.now(timezone.utc)
        backdated = [alert_of("store", f, now.replace(microsecond=0)) for f in reviews.witness(cfg, now)]
        if backdated:
            raise_alerts(cfg, backdated)
            log(f"review: {len(backdated)} decision(s) dated before the verifier last found the decisions' chain "
                "without them: BACKDATED, raised as integrity alerts")
        raised = raise_alerts(cfg, reviews.check_deadlines(cfg))
    except Exception as e:  # noqa: BLE001 - tried again after the next pass
        error = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        if error != last_error:
            log(f"review: the deadline check failed, trying again after the next pass: {error}")
        return error
    if raised:
        log(f"review: {raised} day(s) past review.deadline without a reviewer's decision, raised as review_overdue "
            "alerts (auditpipe review list)")
    return ""


def progress_json(p) -> dict:
    return {"marker": p.marker,
            "anchors": {s: [a.seq, a.digest, a.event_id, a.previous] for s, a in sorted(p.anchors.items())},
            "seen": list(p.seen)}


def progress_of(data: dict):
    """The Progress of ``progress_json``'s form; a malformed one is no progress (a full pass follows)."""
    from auditpipe.evidence import verify
    from auditpipe.evidence.chain import Anchor

    try:
        return verify.Progress(data.get("marker"), {
            s: Anchor(int(a[0]), str(a[1]), str(a[2]), None if a[3] is None else str(a[3]))
            for s, a in data["anchors"].items()}, [str(i) for i in data.get("seen") or []])
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return verify.Progress()


def save(cfg: Config, r: PassResult) -> None:
    f = state_file(cfg)
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp")
    tmp.write_text(json.dumps({"started": r.started.isoformat(), "seconds": round(r.seconds, 1), "kind": r.kind,
                               "findings": r.findings, "raised": r.raised, "servers": r.servers,
                               "error": r.error, "full": r.full, "open": r.open or [], "progress": r.progress},
                              indent=1))
    tmp.replace(f)


def last_pass(cfg: Config) -> dict | None:
    try:
        return json.loads(state_file(cfg).read_text())
    except (OSError, ValueError):
        return None


def next_delay(interval: float, last_seconds: float) -> float:
    """Seconds from one pass's start to the next's: the interval, or more when passes are costly."""
    return max(interval, COST_FACTOR * last_seconds)
