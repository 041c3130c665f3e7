"""`auditpipe demo`: the whole pipeline, watched end to end on the local stack.

up -> import eight days of the demo server's history (simulate.baseline_history), which seeds the
job's learned baselines -> generate a few minutes of audit traffic (rotations, late writes, a
failed-login burst, a few malformed lines, the incidents of simulate.INCIDENTS and LEARNED_INCIDENTS,
a server restart) into the demo log that the collector ships -> wait until every generated record
is in the store and the incidents' alerts are raised -> summary, with the alerts next to the ones
expected and each connection's session beside its records in the log -> wait until the archive
holds the run, then `verify` the demo server's chain over the store and the archive -> write the PCI DSS evidence report
of the run (`auditpipe report pci` over the run's minutes) and print where to open it -> sign off
the newest day of the history awaiting review (`auditpipe review decide`), write that day's PCI DSS
report, which counts it reviewed, and show verify catching the decision edited in the store (the
edit put back) -> read the run's events from the OCSF topic as a SIEM would (committed messages),
each once and valid against OCSF 1.8.0 (docs/stream.md). The stack keeps running afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from auditpipe import paths, progress
from auditpipe.config import Config, duration_seconds
from auditpipe.errors import UserError
from auditpipe.stack import lifecycle
from auditpipe.stack.flink import flink_rest, job_settings
from auditpipe.stack.flink.job import FlinkJob
from auditpipe.stack.kafka import topics
from auditpipe.store.client import document_count, mongo_client, wait_for_documents
from auditpipe.tools.simulate import Manifest, baseline_history, manifest_path, percona_time, simulate


@dataclass
class EvidenceReportWritten:
    path: Path
    digest: str  # SHA-256 of the evidence rows (auditpipe.report.Report.digest)
    command: str  # the `auditpipe report` command that writes the same report again
    seconds: float


@dataclass
class DayReviewed:
    """A day of the demo's history signed off (`auditpipe review decide`), its PCI DSS report, and
    verify catching the decision edited in the store (then put back)."""
    item: str | None  # None: no day awaited review (earlier runs signed off every one)
    decision: str = ""
    reviewer: str = ""
    report: Path | None = None
    reviewed: str = ""  # the report's 10.4.1 figure, e.g. "1 of 1 days reviewed"
    caught: list[str] = field(default_factory=list)  # verify's findings with the decision edited
    clean_again: bool = False  # verify clean once it was put back

    @property
    def ok(self) -> bool:
        return self.item is None or (self.reviewed.startswith("1 of 1 ") and bool(self.caught) and self.clean_again)


@dataclass
class StreamRead:
    """The run's events as a SIEM reads them from the OCSF topic (docs/stream.md): committed messages only."""
    topic: str
    messages: int  # the run's events among them
    distinct: int  # of which different events
    invalid: list[str]  # the first problems of messages not valid against OCSF 1.8.0
    classes: dict  # OCSF class -> messages
    seconds: float

    def ok(self, stored: int) -> bool:
        return self.messages == self.distinct == stored and not self.invalid


@dataclass
class HistoryImported:
    run: str  # the run's name, in its learned incidents' accounts
    records: int
    since: datetime
    until: datetime
    seconds: float


@dataclass
class DemoResult:
    manifest: Manifest
    stored: int
    duplicates: int
    dead_letters: int
    failed_logins_by_user: dict
    seconds_to_store_all: float
    alerts: list = field(default_factory=list)  # the alerts raised during the run (documents)
    archived: int | None = None  # the run's events in the archive (None: archive disabled)
    verification: object = None  # auditpipe.verify.Verification of the demo server
    report: EvidenceReportWritten | None = None  # the PCI DSS report of the run
    sessions: dict = field(default_factory=dict)  # the run's sessions in the store, by connection id
    history: HistoryImported | None = None  # the history that seeded the learned baselines
    review: DayReviewed | None = None  # a day of the history signed off
    stream: StreamRead | None = None  # the run's events on the OCSF topic (None: stream.formats has no ocsf)

    def alert_matches(self) -> tuple[list[tuple[dict, dict | None]], list[dict]]:
        """(each expected alert with the raised one that answers it, or None), and the unexpected ones."""
        left = list(self.alerts)
        pairs = []
        for want in self.manifest.expected_alerts:
            got = next((a for a in left if a["rule"] == want["rule"] and a.get("subject") == want["subject"]), None)
            if got is not None:
                left.remove(got)
            pairs.append((want, got))
        return pairs, left

    @property
    def alerts_ok(self) -> bool:
        pairs, unexpected = self.alert_matches()
        return all(got is not None for _, got in pairs) and not unexpected

    def session_mismatches(self) -> list[str]:
        """Connection ids whose session differs from the log: missing, or ended with other records or state.
        A connection still open at the end has its session, its records counted at the next refresh."""
        out = []
        for cid, (records, state) in self.manifest.connections.items():
            got = self.sessions.get(int(cid))
            if got is None or (state != "open" and (got["records"], got["state"]) != (records, state)):
                out.append(cid)
        return out

    @property
    def ok(self) -> bool:
        return (self.stored == self.manifest.records and self.duplicates == 0 and not self.session_mismatches()
                and self.dead_letters == self.manifest.malformed and self.alerts_ok
                and self.archived in (None, self.manifest.records)
                and (self.verification is None or self.verification.clean)
                and (self.review is None or self.review.ok)
                and (self.stream is None or self.stream.ok(self.stored)))


def run_filter(cfg: Config, m: Manifest) -> dict:
    """The events of one simulate run: its server and the log-start suffix of its record ids."""
    starts = "|".join(re.escape(s) for s in m.log_starts())
    return {"server": cfg.demo_server, "record_id": {"$regex": f"_({starts})$"}}


def count_run(cfg: Config, m: Manifest) -> int:
    db = mongo_client(cfg)[cfg.store["database"]]
    return db[cfg.store["events_collection"]].count_documents(run_filter(cfg, m))


def events_estimate(cfg: Config) -> int:
    """All events, cheaply (a filtered count makes FerretDB read every document)."""
    db = mongo_client(cfg)[cfg.store["database"]]
    return document_count(db[cfg.store["events_collection"]])


def wait_for_store(cfg: Config, m: Manifest, baseline: int, timeout: float) -> tuple[int, float]:
    """Polls the cheap count until the run's records could all be there, then counts them exactly. A full
    capped collection drops its oldest documents as the run's arrive and its count stands still: when the
    count stops moving, the run's last record found by its id ends the wait as well."""
    start = time.monotonic()
    bar = progress.Bar(m.records, "records", "stored")
    db = mongo_client(cfg)[cfg.store["database"]]
    events = db[cfg.store["events_collection"]]
    last_id = f"{cfg.demo_server}/{m.last_record}"

    def stalled() -> int:  # instead of a full count: the target once the run's last record is in
        return baseline + m.records if events.find_one({"_id": last_id}, {"_id": 1}) else document_count(events)

    wait_for_documents(events, baseline + m.records, timeout, every=1, exact=stalled,
                       on_sample=lambda _t, c: bar.update(min(max(c - baseline, 0), m.records)))
    stored = count_run(cfg, m)
    while stored < m.records and time.monotonic() - start < timeout:  # others' writes made the count reach it
        time.sleep(2)
        stored = count_run(cfg, m)
    bar.update(stored)
    bar.close()
    return stored, time.monotonic() - start


def summarize(cfg: Config, m: Manifest, since_epoch: float, seconds: float) -> DemoResult:

    db = mongo_client(cfg)[cfg.store["database"]]
    events = db[cfg.store["events_collection"]]
    flt = run_filter(cfg, m)
    # One scan, counted here: FerretDB's $group slows down badly with tens of thousands of groups.
    ids = [d["record_id"] for d in events.find(flt, {"record_id": 1, "_id": 0})]
    duplicates = len(ids) - len(set(ids))
    dead = db[cfg.store["dead_letter_collection"]].count_documents(
        {"server": cfg.demo_server, "stage": "parse",
         "detected_at": {"$gte": datetime.fromtimestamp(since_epoch, timezone.utc)}})
    failed = {r["_id"]: r["n"] for r in events.aggregate([
        {"$match": {**flt, "auth_outcome": "failure"}}, {"$group": {"_id": "$user", "n": {"$sum": 1}}},
        {"$sort": {"n": -1}}])}
    return DemoResult(m, len(ids), duplicates, dead, failed, seconds, alerts_raised(cfg, since_epoch))


def longest_window(cfg: Config) -> float:
    """Seconds of the longest alert window (alerts.*.window): the rules' memory of earlier events."""
    return max(duration_seconds(v["window"]) for v in cfg.data["alerts"].values() if isinstance(v, dict) and "window" in v)


def wait_for_earlier_run(cfg: Config, duration: float) -> None:
    """A run's records span the ``duration`` before it starts, so a run soon after another would share the
    alert rules' windows with it: one alert per window, and failed logins of both runs counted together.
    Waits until this run's first record can come the longest window after the last record of the run
    before (its manifest, beside the demo log)."""
    try:
        last = percona_time(Manifest.read(manifest_path(cfg.demo_log)).last_event_time)
    except (OSError, ValueError, TypeError):
        return
    window = longest_window(cfg)
    wait = (last + timedelta(seconds=window + duration) - datetime.now(timezone.utc)).total_seconds()
    if wait <= 0:
        return
    progress.info(f"demo: the previous run's last record is at {last:%H:%M:%S} UTC; this run's first comes "
                  f"{window / 60:g} min after it (the longest alert window, alerts.*.window), so that no window "
                  f"holds both runs' events: waiting {wait:.0f} s")
    with progress.step(f"waiting {wait:.0f} s for the previous run's alert windows to pass"):
        time.sleep(wait)


def import_history(cfg: Config, before: datetime) -> HistoryImported:
    """Writes eight days of the demo server's history ending hours before ``before`` and imports it
    (`auditpipe import`): each principal's baseline is stored, and the job's baselines start from it
    (docs/alerts.md "Learned baselines"). Each run's learned incidents have accounts of their own, new to
    the job; the run's name is the time in seconds, in hexadecimal."""
    started = time.monotonic()
    run = format(int(time.time()), "x")
    history = baseline_history(before, run)
    folder = cfg.state_dir / "demo-history"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("audit-*.log"):  # imported already: the archive keeps it
        old.unlink()
    path = folder / f"audit-{run}.log"
    path.write_bytes(history.render())
    env = {**os.environ, "PYTHONPATH": paths.cli_pythonpath()}
    done = subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(cfg.file), "import", str(path),
                           "--server", cfg.demo_server], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"importing the demo's history ({path}) failed (exit {done.returncode}):\n"
                        + (done.stdout + done.stderr)[-3000:])
    times = sorted(t for t, _ in history.records)
    return HistoryImported(run, history.n, times[0], times[-1], time.monotonic() - started)


def alerts_raised(cfg: Config, since_epoch: float) -> list[dict]:
    """The demo server's alerts raised since the run started (raised_at is the job's clock)."""

    db = mongo_client(cfg)[cfg.store["database"]]
    return list(db[cfg.store["alerts_collection"]].find(
        {"server": cfg.demo_server, "raised_at": {"$gte": datetime.fromtimestamp(since_epoch, timezone.utc)}}))


def wait_for_alerts(cfg: Config, m: Manifest, since_epoch: float, timeout: float = 60) -> None:
    """Alerts are written a moment after their events: wait until the expected ones are there."""
    deadline = time.monotonic() + timeout
    want = Counter((a["rule"], a["subject"]) for a in m.expected_alerts)  # counted: one subject can have two
    while time.monotonic() < deadline:
        got = Counter((a["rule"], a.get("subject")) for a in alerts_raised(cfg, since_epoch))
        if not want - got:
            return
        time.sleep(1)


def run_sessions(cfg: Config, m: Manifest) -> dict:
    """The run's sessions: the demo server's, of the run's connection ids, started at its first record or after."""
    first = percona_time(m.first_event_time)
    db = mongo_client(cfg)[cfg.store["database"]]
    found = db[cfg.store["sessions_collection"]].find(
        {"server": cfg.demo_server, "start_time": {"$gte": first}},
        {"connection_id": 1, "records": 1, "state": 1})
    wanted = {int(c) for c in m.connections}
    return {d["connection_id"]: d for d in found if d["connection_id"] in wanted}


def wait_for_sessions(cfg: Config, m: Manifest, timeout: float = 120) -> dict:
    """Sessions are upserted as they end, and at most every sessions.refresh while open: wait until each
    ended connection's session is there with its records."""
    ended = {int(c): (n, state) for c, (n, state) in m.connections.items() if state != "open"}
    deadline = time.monotonic() + timeout
    while True:
        got = run_sessions(cfg, m)
        if (all(c in got and (got[c]["records"], got[c]["state"]) == e for c, e in ended.items())
                and len(got) == len(m.connections)) or time.monotonic() > deadline:
            return got
        time.sleep(2)


def wait_for_archive(cfg: Config, m: Manifest, timeout: float = 120) -> int | None:
    """The archive commits on checkpoints, a few seconds after the store: the run's events there."""
    from auditpipe.archive import reader

    if not cfg.archive["enabled"]:
        return None
    suffixes = tuple(f"_{s}" for s in m.log_starts())
    deadline = time.monotonic() + timeout
    while True:
        rows = reader.chain_rows(cfg.archive_path, cfg.demo_server)
        n = sum(1 for r in rows if str(r.get("record_id", "")).endswith(suffixes))
        if n >= m.records or time.monotonic() > deadline:
            return n
        time.sleep(2)


def write_evidence_report(cfg: Config, m: Manifest, regime: str = "pci") -> EvidenceReportWritten:
    """The regime's evidence report over the run's minutes, for the demo server, in the default place."""
    from auditpipe.evidence import report

    since = percona_time(m.first_event_time).replace(second=0)
    until = percona_time(m.last_event_time).replace(second=0) + timedelta(minutes=2)
    started = time.monotonic()
    built = report.build(cfg, regime, since, until, [cfg.demo_server], progress_step=progress.step)
    out = report.write(built, report.default_path(cfg, regime, since, until))
    command = (f"{paths.COMMAND} report {regime} --server {cfg.demo_server} "
               f"--from {report._plain(since)} --to {report._plain(until)}")
    return EvidenceReportWritten(out.resolve(), built.digest(), command, round(time.monotonic() - started, 1))


def read_ocsf_stream(cfg: Config, m: Manifest, stored: int) -> StreamRead | None:
    """The run's events from the OCSF topic, read committed as a SIEM would, each checked against OCSF
    1.8.0: how many, how many different, which classes, any invalid."""
    import json

    from auditpipe.stack.kafka import stream

    if "ocsf" not in cfg.data["stream"]["formats"]:
        return None
    started = time.monotonic()
    starts = "|".join(re.escape(s) for s in m.log_starts())
    run = re.compile(f"^{re.escape(cfg.demo_server)}/.*_({starts})$")
    since = int(percona_time(m.first_event_time).timestamp() * 1000) - 60_000
    got = stream.read_committed(cfg, ("ocsf",), lambda _role, key: bool(run.match(key)),
                                lambda out: len({x.key() for x in out["ocsf"]}) >= stored, since_ms=since,
                                group="auditpipe-demo-stream")["ocsf"]
    check, invalid, classes = stream.OcsfCheck(), [], Counter()
    for msg in got:
        doc = json.loads(msg.value())
        problems = check.problems(doc)
        if problems and len(invalid) < 5:
            invalid.append(f"{msg.key().decode()}: {problems[0]}")
        if not problems:
            classes[check.class_of(doc)] += 1
    return StreamRead(topics.topic_name("ocsf"), len(got), len({x.key() for x in got}), invalid, dict(classes),
                      round(time.monotonic() - started, 1))


def stream_lines(r: DemoResult) -> list[str]:
    s = r.stream
    if s is None:
        return []
    lines = [f"  stream {s.topic:<15} {s.messages} of the run's events read committed ({s.distinct} different, "
             f"stored {r.stored}), valid OCSF 1.8.0: " + ", ".join(f"{n} {c}" for c, n in sorted(s.classes.items()))
             + f" ({s.seconds:.1f}s)"]
    lines += [f"    INVALID {p}" for p in s.invalid]
    return lines


#: the demo's reviewer: enrolled with a key in the state directory's keys (a real reviewer's key is their own)
DEMO_REVIEWER = "demo-reviewer"


def demo_reviewer_key(cfg: Config) -> Path:
    """The demo reviewer's signing key, made and enrolled in review.reviewers_file the first time."""
    from auditpipe.evidence import reviewer_keys

    key = cfg.state_dir / "keys" / f"{DEMO_REVIEWER}.key"
    if key.exists():
        kid = reviewer_keys.key_id(reviewer_keys.load_private_key(key).public_key())
        if kid in reviewer_keys.load_reviewers(cfg.reviewers_file):
            return key
    reviewer_keys.enroll(cfg.reviewers_file, DEMO_REVIEWER, key)
    return key


def review_a_day(cfg: Config) -> DayReviewed:
    """Signs off the newest day awaiting review as the demo's reviewer, writes that day's PCI DSS
    report, which counts it reviewed, and shows verify catching the decision edited in the store
    (the edit is put back: the demo leaves its store as it found it)."""
    from auditpipe.evidence import report, reviews

    now = datetime.now(timezone.utc)
    waiting = [d for d in reviews.awaiting(cfg, now - timedelta(days=30), now, now).days if d["regime"] == "pci"]
    if not waiting:
        return DayReviewed(None)
    day = waiting[-1]
    key = demo_reviewer_key(cfg)
    (decision,) = reviews.decide(cfg, [day["item"]], "expected", "demo: the day's exceptions read in its PCI DSS "
                                 "report; nothing beyond the normal", key)
    reviewer = decision["reviewer"]
    start = reviews.day_start(day["day"])
    built = report.build(cfg, "pci", start, start + timedelta(days=1), None, now=now)
    out = report.write(built, report.default_path(cfg, "pci", start, start + timedelta(days=1)))
    row = next(c for c in built.review_requirements if c["control"] == "PCI-DSS-10.4.1")
    done = DayReviewed(day["item"], decision["_id"], reviewer, out.resolve(), f"{row['events']} of {row['of']} {row['unit']}")
    with mongo_client(cfg) as client:
        db = client[cfg.store["database"]]
        coll = reviews.collection(cfg, client)
        original = coll.find_one({"_id": decision["_id"]})
        coll.update_one({"_id": decision["_id"]}, {"$set": {"outcome": "false_positive"}})
        try:
            done.caught = [f.line(where) for where, f in reviews.verify_decisions(cfg, db).findings]
        finally:
            coll.replace_one({"_id": decision["_id"]}, original)
        done.clean_again = not reviews.verify_decisions(cfg, db).findings
    return done


def review_lines(r: DemoResult) -> list[str]:
    v = r.review
    if v is None:
        return []
    if v.item is None:
        return [f"  review                 no day awaits review (earlier runs signed off each): {paths.COMMAND} review log"]
    return [f"  review                 {v.item} signed off by {v.reviewer} ({v.decision}); its PCI DSS report: "
            f"10.4.1 {v.reviewed}",
            f"    {v.report}",
            "  review tampered        the decision's outcome edited in the store: verify "
            + (f"caught it: {v.caught[0]}" if v.caught else "did NOT catch it"),
            "  review restored        " + ("put back: the decisions verify clean" if v.clean_again
                                           else "put back, but the decisions do NOT verify"),
            f"    {paths.COMMAND} review list   {paths.COMMAND} review log   {paths.COMMAND} verify --decisions"]


def summary(cfg: Config, r: DemoResult) -> str:
    m = r.manifest
    flink = FlinkJob(cfg)
    lines = [
        "",
        "auditpipe demo: summary",
        f"  generated records      {m.records}  (+{m.malformed} malformed lines, {m.rotations} rotations, "
        f"{m.late_writes} late writes to rotated files)",
        f"  stored in {cfg.store['events_collection']:<12} {r.stored}",
        f"  duplicates             {r.duplicates}",
        f"  dead letters           {r.dead_letters}  (expected {m.malformed}: the malformed lines)",
        "  failed logins by user  " + (", ".join(f"{u}: {n}" for u, n in r.failed_logins_by_user.items()) or "none"),
        f"  generated failed logins {m.failed_logins}",
        *history_lines(r),
        *alert_lines(r),
        *session_lines(cfg, r),
        *tamper_evidence_lines(cfg, r),
        *evidence_report_lines(r),
        *review_lines(r),
        *stream_lines(r),
        f"  throughput             {m.records / max(m.wall_seconds + r.seconds_to_store_all, 1e-6):,.0f} records/s "
        f"end to end ({m.records} records written in {m.wall_seconds:.1f}s, all stored "
        f"{r.seconds_to_store_all:.1f}s after the last write)",
        "",
        "RESULT: " + ("OK, generated == stored == archived, no duplicates, one session per connection with its "
                      "records, the expected alerts and no others, the chain verifies, a day reviewed, each event once "
                      "on the OCSF topic" if r.ok
                      else "MISMATCH (see above)"),
        "",
        "The stack keeps running:",
        f"  Flink web UI   {flink.rest_url}  (client certificate {flink_rest.tls_dir(cfg) / flink_rest.CLIENT},"
        " docs/security.md)",
        f"  store          {cfg.store_uri_for_display}  (database {cfg.store['database']})",
        f"  Kafka          {cfg.kafka_bootstrap}",
        f"  demo log       {cfg.demo_log}",
        f"  archive        {cfg.archive_path}",
        "Try:  " + "   ".join(f"{paths.COMMAND} {c}" for c in ("status", "alerts", "query failed-logins",
                                                                  "parse <log> --enrich")),
        "      " + "   ".join(f"{paths.COMMAND} {c}" for c in ("verify", "query events-by-control --from 90d",
                                                                  "report hipaa --from 1h")),
        f"      {paths.COMMAND} down",
    ]
    if r.report is not None:
        lines += ["", f"Open the PCI DSS evidence report of this run in a browser:  file://{r.report.path}"]
    return "\n".join(lines)


def history_lines(r: DemoResult) -> list[str]:
    h = r.history
    if h is None:
        return []
    return [f"  history imported       {h.records} records of {h.since:%Y-%m-%d %H:%M} to {h.until:%Y-%m-%d %H:%M} UTC "
            f"in {h.seconds:.1f}s: the learned baselines' seeds (accounts of this run end in _{h.run})"]


def evidence_report_lines(r: DemoResult) -> list[str]:
    if r.report is None:
        return []
    return [f"  evidence report        PCI DSS, written in {r.report.seconds:.1f}s, evidence SHA-256 "
            f"{r.report.digest[:16]}...",
            f"    {r.report.path}",
            f"    again: {r.report.command}"]


def session_lines(cfg: Config, r: DemoResult) -> list[str]:
    m = r.manifest
    states = Counter(d["state"] for d in r.sessions.values())
    wrong = r.session_mismatches()
    return [f"  sessions               {len(r.sessions)} of {len(m.connections)} connections ("
            + ", ".join(f"{s} {n}" for s, n in sorted(states.items())) + "); records of each ended one equal to "
            f"the log's: {'yes' if not wrong else 'NO, connection ' + ', '.join(wrong[:10])}",
            f"    {paths.COMMAND} sessions --server {cfg.demo_server}   {paths.COMMAND} session {cfg.demo_server} "
            + (max(m.connections, key=lambda c: m.connections[c][0]) if m.connections else "ID")]


def tamper_evidence_lines(cfg: Config, r: DemoResult) -> list[str]:
    if r.archived is None:
        return ["  archive                disabled (archive.enabled)"]
    lines = [f"  archived               {r.archived}  (Parquet under {cfg.archive_path / 'events'})"]
    v = r.verification
    if v is not None:
        live = [(where, rep) for where, rep in v.reports if rep.server == cfg.demo_server]
        imported = [rep for _, rep in v.reports if rep.server != cfg.demo_server]  # "<server> <chain>" each
        for where, rep in live:
            lines.append(f"  verify {where:<15} links {rep.first_seq} to {rep.last_seq}, {rep.heads_checked} chain heads: "
                         + ("clean" if not rep.findings else f"{len(rep.findings)} finding(s)"))
        if imported:
            findings = sum(len(rep.findings) for rep in imported)
            lines.append(f"  verify imported        {len(imported)} chain(s) of imported history, "
                         f"{sum(r.links for r in imported)} links, {sum(r.heads_checked for r in imported)} chain heads: "
                         + ("clean" if not findings else f"{findings} finding(s)"))
        for where, f in v.findings[:10]:
            lines.append("    " + f.line(where))
    return lines


def alert_lines(r: DemoResult) -> list[str]:
    pairs, unexpected = r.alert_matches()
    lines = [f"  alerts                 {len(r.alerts)} raised, {len(pairs)} expected from the incidents "
             f"(`{paths.COMMAND} alerts` lists them)"]
    for want, got in pairs:
        if got is None:
            lines.append(f"    MISSING   {want['rule']:<25} {want['subject']}")
        else:
            lines.append(f"    expected  {got['rule']:<25} {got['severity']:<8} {got['summary'][:110]}")
    for a in unexpected:
        lines.append(f"    UNEXPECTED {a['rule']:<24} {a['severity']:<8} {a['summary'][:110]}")
    return lines


def run_demo(cfg: Config, duration: float, rate: float, speedup: float, timeout: float) -> DemoResult:
    lifecycle.up(cfg)
    wait_for_earlier_run(cfg, duration)
    first = datetime.now(timezone.utc) - timedelta(seconds=duration)  # no later than simulate's first record
    with progress.step("importing eight days of the demo server's history (the learned baselines' seeds)"):
        history = import_history(cfg, first)
    progress.info(f"demo: writing {int(duration)}s of audit traffic at {rate:g} records/s "
                  f"({speedup:g}x faster than real time) to {cfg.demo_log}")
    bar = progress.Bar(int(rate * duration), "records", "generated")
    started = time.time()
    baseline = events_estimate(cfg)
    m = simulate(cfg.demo_log, rate=rate, duration=duration, speedup=speedup, rotate_on_size=1024 * 1024,
                 rotations=9, late_writes=3, failed_login_burst=40, malformed=5, incidents=True, restart_at=0.9,
                 learned=history.run,
                 progress=lambda done, total: bar.update(done))
    bar.close()
    stored, seconds = wait_for_store(cfg, m, baseline, timeout)
    with progress.step("waiting for the alerts the incidents raise"):
        wait_for_alerts(cfg, m, started)
    with progress.step("checking the stored run: duplicates, dead letters, failed logins"):
        result = summarize(cfg, m, started, seconds)
    result.history = history
    with progress.step("waiting for the run's sessions"):
        result.sessions = wait_for_sessions(cfg, m)
    with progress.step("waiting for the archive to hold the run"):
        result.archived = wait_for_archive(cfg, m)
    from auditpipe.evidence import verify
    from auditpipe.stack.collector.rsyslog import recorded_gaps

    with progress.step(f"verifying {cfg.demo_server}'s chain over the store and the archive"):
        result.verification = verify.verify(cfg, servers=[cfg.demo_server], in_archive=cfg.archive["enabled"],
                                            head_interval_s=job_settings.head_interval_seconds(cfg),
                                            max_ahead_s=job_settings.max_ahead_seconds(cfg),
                                            collector_gaps=recorded_gaps(cfg))
    progress.info("demo: writing the PCI DSS evidence report of the run")
    result.report = write_evidence_report(cfg, m)
    with progress.step("signing off a day of the history as its reviewer (auditpipe review)"):
        result.review = review_a_day(cfg)
    if "ocsf" in cfg.data["stream"]["formats"]:
        with progress.step("reading the run's events from the OCSF topic, as a SIEM would"):
            result.stream = read_ocsf_stream(cfg, m, result.stored)
    progress.info(summary(cfg, result))
    return result
