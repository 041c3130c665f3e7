"""`auditpipe report pci|hipaa|sox|soc2|nist`: one self-contained HTML evidence report (docs/reports.md).

Every figure in it comes from a query of the catalog (schemas/queries.yaml, docs/queries.md), run
with the report's parameters, so an auditor can rerun any number with `auditpipe query`. The file
makes no request to any network: styles inline, charts inline SVG (Vega-Lite specs rendered by
vl-convert), no script runs; the evidence rows are embedded as JSON for machines, and a SHA-256 of
them (and of the parameters) lets a reviewer tell that two copies hold the same evidence.
"""

from __future__ import annotations

import csv
import hashlib
import json
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from auditpipe import __version__, contract, paths
from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.evidence import query, tiers
from auditpipe.evidence.regimes import REGIMES, Regime

TABLE_ROWS_SHOWN = 200  # a table shows this many rows; the embedded evidence keeps every row fetched
SILENCE_MINUTES = 10  # a server without events this long inside the range: a silence period


@dataclass
class Section:
    key: str
    title: str
    description: str
    query: str  # the catalog query it comes from
    params: dict[str, Any]
    rows: list[dict]
    columns: list[str]
    limit: int | None = None  # the query's own $limit: rows == limit means there may be more
    tiers: list[str] = field(default_factory=list)  # what each tier it read held for the range
    control: str | None = None  # of a control's details: the control (or the mapped requirement)

    @property
    def command(self) -> str:
        """The `auditpipe query` command that gives these rows."""
        return _command(self.query, self.params)


@dataclass
class ServerCoverage:
    server: str
    events: int
    first: datetime | None
    last: datetime | None
    silences: list[tuple[datetime, datetime]]


@dataclass
class Report:
    regime: Regime
    since: datetime
    until: datetime
    servers: list[str] | None
    generated_at: datetime
    controls: list[dict] = field(default_factory=list)  # control, requirement, events
    sections: list[Section] = field(default_factory=list)
    control_details: list[Section] = field(default_factory=list)
    coverage: list[ServerCoverage] = field(default_factory=list)
    coverage_tiers: list[str] = field(default_factory=list)
    retention: list[dict] = field(default_factory=list)  # tier, holds, asked, ok, detail
    charts: dict[str, str] = field(default_factory=dict)  # name -> inline SVG
    review: dict = field(default_factory=dict)  # evidence/reviews.py review_section
    review_section: Section | None = None  # the review-decisions query's rows, for its command
    review_requirements: list[dict] = field(default_factory=list)  # control, requirement, events (reviewed), of, unit
    # the period's events per server that came by `auditpipe import`: no alert rule ran over them
    imported: dict[str, int] = field(default_factory=dict)
    imported_section: Section | None = None  # the imported-events-by-server query's rows, for its command
    chart_unit: str = "minute"  # the resolution of the events-over-time chart (chart_resolution)

    @property
    def imported_events(self) -> int:
        return sum(self.imported.values())

    @property
    def period_events(self) -> int:
        return sum(c.events for c in self.coverage)

    @property
    def all_imported(self) -> bool:
        """Every event of the period is imported history: the alert rules ran over none of it."""
        return self.imported_events > 0 and self.imported_events >= self.period_events

    def evidence(self) -> dict:
        """Everything the report shows, as plain JSON values (what the digest covers)."""
        return _plain({
            "regime": self.regime.key, "since": self.since, "until": self.until, "servers": self.servers,
            "controls": self.controls,
            "sections": {s.key: s.rows for s in self.sections},
            "control_details": {s.control: s.rows for s in self.control_details},
            "coverage": [{"server": c.server, "events": c.events, "first": c.first, "last": c.last,
                          "silences": [list(x) for x in c.silences]} for c in self.coverage],
            "review": self.review, "review_requirements": self.review_requirements,
            "imported_history": self.imported,
        })

    def canonical_evidence(self) -> str:
        """The evidence as canonical JSON: sorted keys, no spaces, ASCII only, and < > & written as
        \\u escapes, so the very same text sits in the HTML and its SHA-256 is the report's digest."""
        text = json.dumps(self.evidence(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

    def digest(self) -> str:
        return hashlib.sha256(self.canonical_evidence().encode("ascii")).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        t = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return t.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _command(name: str, params: dict[str, Any]) -> str:
    parts = [f"{paths.COMMAND} query", name]
    for k, v in params.items():
        if v is None:
            continue
        if k == "since":
            parts.append(f"--from {_plain(v)}")
        elif k == "until":
            parts.append(f"--to {_plain(v)}")
        elif k == "servers":
            parts.extend(f"--server {s}" for s in v)
        elif isinstance(v, (list, tuple)):
            parts.append(f"--param {k}={','.join(v)}")
        else:
            parts.append(f"--param {k}={v}")
    return " ".join(parts)


def controls_of(framework: str) -> list[tuple[str, str]]:
    """(control, requirement) of a framework, in the order of schemas/compliance-controls.csv, once each."""
    from auditpipe.evidence.controls import CONTROLS_FILE

    seen: dict[str, str] = {}
    for r in csv.DictReader(CONTROLS_FILE.read_text().splitlines()):
        if r["framework"] == framework:
            seen.setdefault(r["control"], r["requirement"])
    return list(seen.items())


class _Runner:
    """Runs catalog queries with the report's range and servers; lists are passed as catalog lists. The
    events queries read the tiers that hold the range (auditpipe.evidence.tiers), opened once."""

    def __init__(self, cfg: Config, since: datetime, until: datetime, servers: list[str] | None):
        self.cfg, self.since, self.until, self.servers = cfg, since, until, servers
        self._events = None

    def params(self, **extra) -> dict[str, Any]:
        return {"since": self.since, "until": self.until, "servers": self.servers, **extra}

    def events(self) -> tiers.EventTiers:
        if self._events is None:
            self._events = tiers.EventTiers.open(self.cfg, self.since, self.until, self.servers)
        return self._events

    def _of(self, name: str) -> tiers.EventTiers | None:
        return self.events() if tiers.opens_tiers(name) else None

    def tiers(self, name: str) -> list[str]:
        """What the query ``name`` reads: the event tiers with what each held, or its store collection."""
        return tiers.read_from(name, self._of(name))

    def rows(self, name: str, **extra) -> list[dict]:
        return tiers.answer(self.cfg, name, self.params(**extra), self._of(name))

    def section(self, key: str, title: str, description: str, name: str, columns: list[str], **extra) -> Section:
        q = query.saved_queries()[name]
        limit = next((st["$limit"] for st in q["pipeline"] if "$limit" in st), None)
        return Section(key, title, description, name, self.params(**extra), self.rows(name, **extra), columns, limit,
                       self.tiers(name))


def rows_for_control(by_controls: list[dict], control: str | list[str]) -> list[dict]:
    """The rows of events-for-control for one control (events-for-controls for several: an event with
    two of them counted once), from the rows of events-by-controls-user-action (grouped by the whole
    list of controls): the rows whose list holds the control, merged by user, category and action;
    most events first, then by key, so the order is the same every time."""
    wanted = {control} if isinstance(control, str) else set(control)
    merged: dict[str, tuple[dict, int]] = {}
    for r in by_controls:
        if not wanted & set(r["_id"].get("controls") or []):
            continue
        key = {k: v for k, v in r["_id"].items() if k != "controls"}
        text = json.dumps(key, sort_keys=True, default=str)
        merged[text] = (key, merged.get(text, (key, 0))[1] + r["events"])
    return [{"_id": key, "events": n}
            for text, (key, n) in sorted(merged.items(), key=lambda kv: (-kv[1][1], kv[0]))]


AUTH_RULES = [contract.rule("brute_force"), contract.rule("password_spray"), contract.rule("login_after_failures")]
AUDIT_TRAIL_RULES = [contract.rule("audit_stopped"), contract.rule("record_gap")]


def build(cfg: Config, regime_key: str, since: datetime, until: datetime, servers: list[str] | None = None,
          now: datetime | None = None, progress_step=None) -> Report:
    if regime_key not in REGIMES:
        raise UserError(f"no report '{regime_key}'; one of: {', '.join(REGIMES)}")
    if until <= since:
        raise UserError(f"--to ({_plain(until)}) must be after --from ({_plain(since)})")
    regime = REGIMES[regime_key]
    now = now or datetime.now(timezone.utc)
    step = progress_step or (lambda _title: nullcontext())
    run = _Runner(cfg, since, until, servers)
    report = Report(regime, since, until, servers, now)
    classes = list(regime.data_classes)

    with step("the tiers that hold the period"):
        run.events()
    with step("the controls' evidence"):
        # one scan for every control (FerretDB scans the whole collection per query): rows by list of
        # controls, user, category and action, split here into what events-for-control gives per control
        by_controls = run.rows("events-by-controls-user-action")
        columns = ["user", "category", "action", "events"]
        if regime.mapped:
            from auditpipe.evidence import frameworks

            for rid, text, tags in frameworks.requirement_tags(regime.framework):
                rows = rows_for_control(by_controls, tags)
                report.controls.append({"control": rid, "requirement": text, "events": sum(r["events"] for r in rows),
                                        "tags": tags})
                report.control_details.append(Section(
                    f"control-{rid}", text, f"The events that evidence it: those with any of the control tags "
                    f"{', '.join(tags)}, each once, by user, category and action.", "events-for-controls",
                    run.params(controls=tags), rows, columns, tiers=run.tiers("events-for-controls"), control=rid))
        for c, req in ([] if regime.mapped else controls_of(regime.framework)):
            rows = rows_for_control(by_controls, c)
            report.controls.append({"control": c, "requirement": req, "events": sum(r["events"] for r in rows)})
            report.control_details.append(Section(
                f"control-{c}", req, "The events that evidence it, by user, category and action.",
                "events-for-control", run.params(control=c), rows, columns,
                tiers=run.tiers("events-for-control"), control=c))

    with step("the exceptions"):
        report.sections = [
            run.section("failed-logins", "Failed logins", "Failed logins by account and origin "
                        "(PCI DSS 10.2.1.4, HIPAA log-in monitoring).", "failed-logins",
                        ["user", "host", "ip", "attempts"]),
            run.section("login-alerts", "Alerts raised by failed logins", "Brute force, password spray and a "
                        "login after failures (docs/alerts.md).", "alerts-list",
                        ["first_event_time", "server", "rule", "severity", "subject", "summary", "evidence_count"],
                        rules=AUTH_RULES),
            run.section("account-changes", "Account and privilege changes", "Each CREATE/DROP/ALTER USER, "
                        "GRANT, REVOKE, SET PASSWORD (PCI DSS 10.2.1.5, SOX logical access).", "account-changes",
                        ["event_time", "server", "user", "host", "action", "status", "sqltext"]),
            run.section("classified-access", f"Access to {', '.join(classes)} data", "Events touching the "
                        "regime's classified tables, by user and category.", "classified-access-by-user",
                        ["user", "principal_class", "category", "events"], data_classes=classes),
            run.section("classified-sessions", f"Sessions that touched {', '.join(classes)} data", "Each "
                        "connection that read or changed the regime's classified tables: who, from where, how long, "
                        "how it ended (`auditpipe session SERVER ID` lists its records in order).",
                        "classified-sessions", ["start_time", "server", "connection_id", "user", "ip", "state",
                                                "duration_ms", "records", "failures", "data_classes"],
                        data_classes=classes),
            run.section("access-violations", "Access by principals not allowed for the class", "Users outside "
                        "the class's allowed_principals (alert unauthorized_data_access).", "access-violations",
                        ["access_violations", "user", "host", "events"]),
            run.section("after-hours", f"After-hours access to {', '.join(classes)} data", "Events touching the "
                        "regime's classified tables outside compliance.business_hours (none configured: none is "
                        "after hours).", "after-hours-access", ["user", "principal_class", "data_classes", "events"],
                        data_classes=classes),
            run.section("classified-ddl", f"Schema changes on {', '.join(classes)} tables", "Each DDL "
                        "statement on a classified table (SOX change management; alert ddl_outside_change_window "
                        "when outside the change windows).", "classified-ddl",
                        ["event_time", "server", "user", "action", "status", "tables", "in_change_window", "sqltext"],
                        data_classes=classes),
            run.section("audit-trail", "Audit logging stopped, and gaps in the record sequence", "The audit "
                        "plugin turned off or started, and records the server numbered that never reached the "
                        "pipeline, each gap with its class: " + ", ".join(contract.record_gap_classes()) + " (PCI DSS "
                        "10.2.1.6; docs/alerts.md \"Record gaps, classified\").",
                        "alerts-list", ["first_event_time", "server", "rule", "severity", "gap_class", "summary"],
                        rules=AUDIT_TRAIL_RULES),
            run.section("alerts", "Every alert in the range", "All rules (docs/alerts.md).", "alerts-list",
                        ["first_event_time", "server", "rule", "severity", "subject", "evidence_count"]),
        ]
        # the alert rules run on the live stream, not over imported history (docs/alerts.md "Imported history")
        report.imported_section = run.section("imported", "Imported history", "Events that came by auditpipe "
                                              "import, per server.", "imported-events-by-server", ["server", "events"])
        report.imported = {r["_id"]: r["events"] for r in report.imported_section.rows}

    with step("the reviews"):
        from auditpipe.evidence import reviews

        decisions = run.section("review-decisions", "Review decisions", "Each decision about a day or an alert of "
                                "the period (docs/reviews.md).", "review-decisions",
                                ["decided_at", "reviewer", "item", "outcome", "note"])
        report.review_section = decisions
        alerts = next(s for s in report.sections if s.key == "alerts").rows
        from auditpipe.store.client import mongo_client

        with mongo_client(cfg) as client:
            first = reviews.first_evidence_day(cfg, client[cfg.store["database"]])
            refused = reviews.unverified(cfg, client[cfg.store["database"]], [d["_id"] for d in decisions.rows])
        report.review = reviews.review_section(cfg, regime.key, since, until, now, decisions.rows, alerts, first,
                                               refused)
        report.review_requirements = reviews.requirement_rows(regime.key, report.review)

    with step("coverage per server"):
        per_minute = run.rows("stats-by-minute")
        by_server = {r["_id"]: r["events"] for r in run.rows("events-by-server")}
        names = sorted(set(by_server) | set(servers or []))
        minutes_of: dict[str, list] = {}
        for r in per_minute:  # a quarter of five servers: 650,000 rows, in order of minute, read once
            minutes_of.setdefault(r["_id"]["server"], []).append(r["_id"]["minute"])
        for name in names:
            first = next(iter(run.rows("first-event", servers=[name])), {}).get("event_time")
            last = next(iter(run.rows("last-event", servers=[name])), {}).get("event_time")
            report.coverage.append(ServerCoverage(name, by_server.get(name, 0), first, last,
                                                  silences(minutes_of.get(name, []), since, min(until, now))))
        report.coverage_tiers = run.tiers("events-by-server") + run.tiers("first-event")
        report.retention = retention_rows(cfg, regime, now)

    with step("the charts"):
        report.charts = charts(report, per_minute)
    return report


def silences(minutes: list[datetime], since: datetime, until: datetime,
             at_least: int = SILENCE_MINUTES) -> list[tuple[datetime, datetime]]:
    """Periods of ``at_least`` minutes or more without an event (from the minutes that have one, in
    order; naive ones are UTC, as pymongo and DuckDB give them), inside the range: before the first,
    between two, and after the last up to ``until``. A quarter has 130,000 minutes a server: compared
    as naive UTC, each converted once at most."""
    lo, hi = _naive_utc(since), _naive_utc(until)
    floor = lo - timedelta(minutes=1)
    points = [m for m in map(_naive_utc, minutes) if floor < m < hi]
    out = []
    edges = [floor] + points + [hi]
    gap = timedelta(minutes=at_least)
    for a, b in zip(edges, edges[1:]):
        start = a + timedelta(minutes=1)  # the minute after one with events
        if (b - start) >= gap:
            out.append((tiers.utc(max(start, lo)), tiers.utc(b)))
    return out


def _naive_utc(t: datetime) -> datetime:
    return t if t.tzinfo is None else t.astimezone(timezone.utc).replace(tzinfo=None)


def retention_rows(cfg: Config, regime: Regime, now: datetime) -> list[dict]:
    """How far back each tier reaches, against what the regime asks: the store (the capped collection,
    the newest events), the archive (kept archive.retention_days), and the two together as the
    immediately available tier: reports and `auditpipe query` answer from both (docs/queries.md "Tiers")."""
    from auditpipe.archive import reader
    from auditpipe.store.client import mongo_client, oldest_insert

    def days(since: datetime | None) -> float:
        return round((now - tiers.utc(since)).total_seconds() / 86400, 2) if since else 0

    rows = []
    # where the hot tier begins: its oldest insert, as `auditpipe status` shows it (no sort of the whole store)
    events = mongo_client(cfg)[cfg.store["database"]][cfg.store["events_collection"]]
    store_since = (oldest_insert(events) or {}).get("event_time")
    rows.append({"tier": "store (the capped collection: the newest events)", "holds_days": days(store_since),
                 "since": store_since, "asked_days": None, "ok": None})
    archive_since, archive_ok = None, False
    if cfg.archive["enabled"]:
        keep = cfg.archive["retention_days"]
        try:
            sp = reader.span(cfg.archive_path, count_events=False)
        except reader.Unreadable as e:
            rows.append({"tier": "archive", "holds_days": None, "since": None, "asked_days": regime.keep_days,
                         "ok": False, "detail": str(e)})
        else:
            archive_since, archive_ok = sp.first, True
            rows.append({"tier": "archive", "holds_days": days(sp.first), "since": sp.first,
                         "asked_days": regime.keep_days, "ok": days(sp.first) >= regime.keep_days,
                         "configured_days": keep,
                         "detail": (f"archive.retention_days is {keep}, shorter than the {regime.keep_days} days asked"
                                    if keep < regime.keep_days else "")})
    else:
        rows.append({"tier": "archive", "holds_days": None, "since": None, "asked_days": regime.keep_days,
                     "ok": False, "detail": "disabled (archive.enabled): events leave when the store trims them"})
    reach = min((t for t in (store_since, archive_since) if t is not None), key=tiers.utc, default=None)
    asked = regime.immediate_days
    answering = "the archive and the store (reports and auditpipe query read both)" if archive_ok else "the store"
    rows.insert(0, {"tier": f"immediately available: {answering}",
                    "holds_days": days(reach), "since": reach, "asked_days": asked,
                    "ok": None if asked is None else days(reach) >= asked})
    return rows


# --- charts: Vega-Lite specs rendered to SVG ------------------------------------------------------

def _svg(spec: dict) -> str:
    import vl_convert

    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 640, "height": 180,
            "config": {"font": "sans-serif", "view": {"stroke": None}}, **spec}
    return vl_convert.vegalite_to_svg(json.dumps(spec, default=_plain))


#: The events-over-time chart's resolution by the length of the period: (longest period, unit, axis
#: format). A line is read by a few hundred points per server: minutes over hours, hours over days,
#: days over months (a quarter by the minute was a 14 MB chart).
CHART_RESOLUTIONS = ((timedelta(hours=12), "minute", "%m-%d %H:%M"), (timedelta(days=14), "hour", "%m-%d %H:%M"),
                     (None, "day", "%Y-%m-%d"))


def chart_resolution(since: datetime, until: datetime) -> tuple[str, str]:
    """(unit, axis format) of the events-over-time chart for the period (CHART_RESOLUTIONS)."""
    span = tiers.utc(until) - tiers.utc(since)
    return next((unit, fmt) for longest, unit, fmt in CHART_RESOLUTIONS if longest is None or span <= longest)


def per_unit(per_minute: list[dict], unit: str) -> list[dict]:
    """The rows of stats-by-minute summed per ``unit`` (minute, hour or UTC day) and server."""
    step = {"minute": 60, "hour": 3600, "day": 86400}[unit]
    epoch = datetime(1970, 1, 1)
    sums: dict[tuple[int, str], int] = {}
    for r in per_minute:
        seconds = int((_naive_utc(r["_id"]["minute"]) - epoch).total_seconds())
        key = (seconds - seconds % step, r["_id"]["server"])
        sums[key] = sums.get(key, 0) + r["events"]
    return [{"at": _plain(datetime.fromtimestamp(t, timezone.utc)), "server": server, "events": n}
            for (t, server), n in sorted(sums.items())]


def charts(report: Report, per_minute: list[dict]) -> dict[str, str]:
    out = {}
    unit, axis = chart_resolution(report.since, report.until)
    report.chart_unit = unit
    points = per_unit(per_minute, unit)
    if points:
        out["events-over-time"] = _svg({
            "title": f"Events per {unit}, by server (stats-by-minute, summed per {unit})",
            "data": {"values": points}, "mark": {"type": "line", "interpolate": "step-after"},
            "encoding": {"x": {"field": "at", "type": "temporal", "title": "UTC",
                               "scale": {"type": "utc", "domain": [_plain(report.since), _plain(report.until)]},
                               "axis": {"format": axis, "labelAngle": 0}},
                         "y": {"field": "events", "type": "quantitative", "title": f"events per {unit}"},
                         "color": {"field": "server", "type": "nominal"}}})
    if report.controls:
        out["evidence-per-control"] = _svg({
            "title": "Events evidencing each control",
            "data": {"values": report.controls}, "mark": "bar", "height": 24 * len(report.controls),
            "encoding": {"y": {"field": "control", "type": "nominal", "sort": None, "title": None},
                         "x": {"field": "events", "type": "quantitative", "title": "events"}}})
    failed = next(s for s in report.sections if s.key == "failed-logins")
    if failed.rows:
        out["failed-logins"] = _svg({
            "title": "Failed logins by account (top 15)",
            "data": {"values": [{"account": f"{r['_id'].get('user', '')}@{r['_id'].get('host') or r['_id'].get('ip') or ''}",
                                 "attempts": r["attempts"]} for r in failed.rows[:15]]},
            "mark": "bar", "height": 20 * min(15, len(failed.rows)),
            "encoding": {"y": {"field": "account", "type": "nominal", "sort": "-x", "title": None},
                         "x": {"field": "attempts", "type": "quantitative"}}})
    return out


# --- HTML -----------------------------------------------------------------------------------------

def _cell(row: dict, column: str) -> str:
    value = row.get("_id", {}).get(column) if isinstance(row.get("_id"), dict) and column not in row else row.get(column)
    if value is None and isinstance(row.get("_id"), str) and column == "server":
        value = row["_id"]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def render_html(report: Report) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["cell"] = _cell
    env.filters["when"] = lambda t: "" if t is None else (t if isinstance(t, str) else t.strftime("%Y-%m-%d %H:%M:%S"))
    evidence = report.canonical_evidence()
    return env.get_template("report.html.j2").render(
        r=report, digest=report.digest(), version=__version__, shown=TABLE_ROWS_SHOWN, evidence_json=evidence,
        silence_minutes=SILENCE_MINUTES, plain=_plain)


def write(report: Report, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(report), encoding="utf-8")
    return out


def default_path(cfg: Config, regime: str, since: datetime, until: datetime) -> Path:
    return cfg.state_dir / "reports" / f"{regime}-{since:%Y%m%dT%H%M}-{until:%Y%m%dT%H%M}.html"


def chromium_sandbox() -> list[str]:
    """Chromium's sandbox is kept (the report shows statements database users wrote); only as root,
    where Chromium refuses to start with it, is it turned off, and the report prints as root."""
    import os

    return ["--no-sandbox"] if os.geteuid() == 0 else []


def to_pdf(html_file: Path, pdf: Path) -> Path:
    """Prints the report with Debian's chromium, headless, every network feature off."""
    import shutil
    import subprocess
    import tempfile

    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        raise UserError("--pdf prints the report with Chromium, which is not installed "
                        "(Debian: apt-get install chromium); the HTML report is written")
    with tempfile.TemporaryDirectory(prefix="auditpipe-chromium-") as profile:
        r = subprocess.run([browser, "--headless", *chromium_sandbox(), "--disable-gpu", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={profile}", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
                            html_file.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not pdf.exists() or pdf.stat().st_size == 0:
        raise UserError(f"chromium could not print {html_file} to PDF (exit {r.returncode}): "
                        f"{(r.stderr or r.stdout).strip()[-300:]}")
    return pdf

