"""Daily reports (`auditpipe report REGIME --schedule`, docs/reports.md "Every day"): each UTC day, at
``--at`` (01:00 UTC by default, so that the day's late events are in), the report of the day that
ended is written to ``<out_dir>/<regime>-<YYYY-MM-DD>.html`` and announced (by the CLI: to the webhook,
alerts.webhook) with its file, its evidence digest and how many rows each exception section holds.

The file is the record of what was done: it is written whole or not at all (a temporary file renamed),
so a day whose file exists is never written again, and a restart writes the ended days of the last
``CATCH_UP_DAYS`` whose file is missing, oldest first. The webhook is a notification: one it does not
take is logged, not sent again.
"""

from __future__ import annotations

import json
import time as clock
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

from auditpipe.config import Config

#: announce(body, headers, what): sends the JSON ``body`` of a written report; ``what`` names it in a failure's log
Announce = Callable[[bytes, dict[str, str], str], object]

#: how many ended days a start looks back for a missing report
CATCH_UP_DAYS = 7
#: the longest sleep between looks at the clock (and at ``stopping``)
LOOK_EVERY = 60.0


def report_file(out_dir: Path, regime: str, day: date) -> Path:
    return out_dir / f"{regime}-{day:%Y-%m-%d}.html"


def due_days(out_dir: Path, regime: str, now: datetime, at: time) -> list[date]:
    """The ended days of the last CATCH_UP_DAYS whose time to be written (the next day at ``at``, UTC)
    has come and whose report is not there, oldest first."""
    today = now.astimezone(timezone.utc).date()
    out = []
    for back in range(CATCH_UP_DAYS, 0, -1):
        day = today - timedelta(days=back)
        due = datetime.combine(day + timedelta(days=1), at, tzinfo=timezone.utc)
        if due <= now and not report_file(out_dir, regime, day).exists():
            out.append(day)
    return out


def next_due(now: datetime, at: time) -> datetime:
    """When the next day's report is due: today at ``at`` if that is still to come, else tomorrow."""
    today = datetime.combine(now.astimezone(timezone.utc).date(), at, tzinfo=timezone.utc)
    return today if today > now else today + timedelta(days=1)


def write_day(cfg: Config, regime: str, day: date, servers: list[str] | None, out_dir: Path, pdf: bool,
              log: Callable[[str], None], announce: Announce) -> Path:
    """Writes the day's report (and its PDF), then announces it; returns the file."""
    from auditpipe.evidence import report

    since = datetime.combine(day, time(0), tzinfo=timezone.utc)
    until = since + timedelta(days=1)
    now = datetime.now(timezone.utc)
    built = report.build(cfg, regime, since, until, servers, now=now)
    out = report_file(out_dir, regime, day)
    partial = out.with_name(f".{out.name}.partial")
    report.write(built, partial)
    if pdf:
        report.to_pdf(partial, out.with_suffix(".pdf"))
    partial.replace(out)
    log(f"report: wrote {out} (evidence SHA-256 {built.digest()})")
    announcement = {
        "kind": "report", "id": f"report/{regime}/{day:%Y-%m-%d}", "regime": regime, "title": built.regime.title,
        "from": since.isoformat(), "to": until.isoformat(), "servers": servers, "file": str(out.resolve()),
        "evidence_sha256": built.digest(), "generated_at": now.isoformat(),
        "exceptions": {s.key: len(s.rows) for s in built.sections},
    }
    announce(json.dumps(announcement).encode(), {"X-Auditpipe-Report-Id": announcement["id"]},
             f"the announcement of {out.name} (the report is written)")
    return out


def run(cfg: Config, regime: str, servers: list[str] | None, out_dir: Path, at: time, announce: Announce,
        pdf: bool = False, log: Callable[[str], None] = print, stopping: Callable[[], bool] = lambda: False) -> None:
    """Writes each day's report when it is due, until ``stopping()``; a day that fails (the store
    unreachable) is logged and tried again at the next look."""
    last_error, said_next = "", None
    while not stopping():
        now = datetime.now(timezone.utc)
        due = due_days(out_dir, regime, now, at)
        if not due and (upcoming := next_due(now, at)) != said_next:
            log(f"report: nothing due; the next {regime} report is due at {upcoming:%Y-%m-%d %H:%M} UTC")
            said_next = upcoming
        for day in due:
            try:
                write_day(cfg, regime, day, servers, out_dir, pdf, log, announce)
                last_error = ""
            except Exception as e:  # noqa: BLE001 - logged once per kind, tried again
                if str(e) != last_error:
                    log(f"report: the {regime} report of {day} failed, trying again every {LOOK_EVERY:.0f}s: {e}")
                last_error = str(e)
                break
        if due and not last_error:  # all written: look again at once (and say what is next)
            continue
        wait = LOOK_EVERY if last_error else (next_due(datetime.now(timezone.utc), at)
                                             - datetime.now(timezone.utc)).total_seconds()
        clock.sleep(max(0.0, min(wait, LOOK_EVERY)))
