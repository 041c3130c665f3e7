"""`auditpipe report`: write an evidence report for a PCI DSS, HIPAA, SOX, SOC 2 or NIST SP 800-53 review (one HTML file).

One self-contained HTML file (no request to any network: styles, charts and data inline): each
control of the regime with its evidence count, exceptions (failed logins and their alerts, account
and privilege changes, access to classified data, DDL on classified tables, audit stopped and record
gaps), coverage per server with silence periods, retention against what the regime asks, and a
SHA-256 of the evidence. Every figure comes from the query catalog (docs/queries.md);
docs/reports.md. soc2 and nist count each requirement by the control tags mapped to it
(docs/compliance.md "Frameworks").
"""

from __future__ import annotations

from pathlib import Path

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, documented
from auditpipe.errors import UserError


def run(app: Application) -> int:
    from datetime import datetime, timedelta, timezone

    from auditpipe import progress
    from auditpipe.evidence import query, report

    a, cfg = app.args, app.config
    if a.schedule:
        return scheduled_reports(app)
    if a.at or a.out_dir:
        raise UserError("--at and --out-dir are for --schedule (one report: --from, --to, --out)")
    now = datetime.now(timezone.utc)
    until = query.parse_time(a.until, now) if a.until else now
    since = query.parse_time(a.since, until - timedelta(days=1)) if a.since else until - timedelta(days=1)
    built = report.build(cfg, a.regime, since, until, a.servers, now=now, progress_step=progress.step)
    out = Path(a.out) if a.out else report.default_path(cfg, a.regime, since, until)
    report.write(built, out)
    app.out(f"report: {out.resolve()}")
    app.out(f"  open it: file://{out.resolve()}")
    app.out(f"  evidence SHA-256: {built.digest()}")
    if a.pdf:
        pdf = out.with_suffix(".pdf")
        with progress.step("printing the PDF with chromium"):
            report.to_pdf(out, pdf)
        app.out(f"  PDF: {pdf.resolve()}")
    return 0


def scheduled_reports(app: Application) -> int:
    """report --schedule: the report of each ended UTC day, written at --at and announced to the webhook
    (evidence/schedule.py), until stopped."""
    import re
    from datetime import time

    from auditpipe.evidence import schedule
    from auditpipe.stack.alerts import webhook

    a, cfg = app.args, app.config
    if a.since or a.until or a.out:
        raise UserError("report --schedule writes each ended day's report: --from, --to and --out are for one "
                        "report (the folder: --out-dir)")
    m = re.fullmatch(r"([01][0-9]|2[0-3]):([0-5][0-9])", a.at or "01:00")
    if m is None:
        raise UserError(f"--at {a.at}: a time of day in UTC as HH:MM, such as 01:00")
    at = time(int(m.group(1)), int(m.group(2)))
    out_dir = Path(a.out_dir) if a.out_dir else cfg.state_dir / "reports"
    hook = "announcing each to the webhook" if webhook.configured(cfg, app.info) else "no webhook configured"
    return app.until_stopped(
        f"writing the {a.regime} report of each UTC day to {out_dir.resolve()} at {at:%H:%M} UTC the next day "
        f"({hook}).",
        lambda: schedule.run(cfg, a.regime, a.servers, out_dir, at,
                             lambda body, headers, what: webhook.post(cfg, body, headers, what, app.info),
                             pdf=a.pdf, log=app.info))


def register(sub) -> None:
    from auditpipe.evidence.regimes import REGIMES

    s = documented(sub, __doc__,
                   ("./auditpipe report pci --from 7d", "./auditpipe report nist --from 30d",
                   "./auditpipe report sox --from 2026-10-01 --to 2026-11-01 --pdf",
                   "./auditpipe report hipaa --from 1d --server db-01 --server db-02 --out hipaa.html",
                   "./auditpipe report pci --schedule --out-dir /srv/reports"), run)
    s.add_argument("regime", choices=list(REGIMES), help="which review the report is for")
    add_time_range(s, "the period", "a day before --to", "now")
    add_servers(s, "evidence")
    s.add_argument("--out", help="the HTML file to write (default: <state_dir>/reports/<regime>-<from>-<to>.html)")
    s.add_argument("--pdf", action="store_true", help="also print it to a PDF next to it, with Chromium (headless)")
    s.add_argument("--schedule", action="store_true",
                   help="run until stopped, writing the report of each UTC day once it has ended and announcing it "
                        "to the webhook (alerts.webhook); a start writes the missing days of the last week")
    s.add_argument("--at", metavar="HH:MM", help="with --schedule: when, in UTC, the day before is written (default 01:00)")
    s.add_argument("--out-dir", metavar="DIR",
                   help="with --schedule: the folder of the daily reports (default: <state_dir>/reports)")
