"""Commands of queries and evidence: saved queries, evidence reports, alerts, chain verification, dashboards."""

from __future__ import annotations

from pathlib import Path

from auditpipe import contract
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, at_least_one, command
from auditpipe.errors import UserError


def cmd_query(app: Application) -> int:
    from auditpipe.evidence import query, tiers

    a = app.args
    if a.list or (not a.name and not a.pipeline):
        for name, q in query.saved_queries().items():
            app.out(f"{name:<24} [{q['collection']}] {q['description']}")
        return 0
    cfg = app.config
    if a.pipeline:
        if a.name:
            raise UserError("give either a saved query name or --pipeline, not both")
        if a.servers or a.params:
            raise UserError("--server and --param fill a saved query's parameters; put them into --pipeline yourself")
        rows = query.run_pipeline(cfg, a.collection, query.parse_pipeline_json(a.pipeline))
    else:
        read: list[str] = []
        rows = tiers.run_saved(cfg, a.name, a.since, a.until, a.servers, query.parse_params(a.params),
                               tier="archive" if a.archive else "store" if a.store else "auto", tiers_read=read)
        for line in read:
            app.info(f"read: {line}")
    app.out(query.format_json(rows) if a.json else query.format_table(rows))
    return 0


def cmd_report(app: Application) -> int:
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
    (stack/schedule.py), until stopped."""
    import re
    from datetime import time

    from auditpipe.stack import schedule, webhook

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
    app.out(f"writing the {a.regime} report of each UTC day to {out_dir.resolve()} at {at:%H:%M} UTC the next day "
            f"({hook}). Stop with Ctrl-C.")
    try:
        schedule.run(cfg, a.regime, a.servers, out_dir, at, pdf=a.pdf, log=app.info)
    except KeyboardInterrupt:
        return 0
    return 0


def cmd_alerts(app: Application) -> int:
    from auditpipe.evidence import alerts

    a = app.args
    rows = alerts.list_alerts(app.config, since=a.since, until=a.until, rule=a.rule, severity=a.severity,
                              servers=a.servers, limit=a.limit)
    app.out(alerts.format_alerts_json(rows) if a.json else alerts.format_alerts(rows))
    return 0


def cmd_forward(app: Application) -> int:
    """forward: the alerts topic to the SIEM as CEF over syslog (stack/forwarder.py), until stopped or,
    with --once, up to what is on the topic now."""
    from auditpipe.stack import forwarder

    t = forwarder.target(app.config)
    if t is None:
        raise UserError(f"alerts.cef is not set in {app.config.file}: name the SIEM's syslog receiver there "
                        "(docs/alerts.md \"CEF over syslog\")")
    if app.args.once:
        n = forwarder.run(app.config, once=True, log=app.info)
        app.out(f"forward: {n} alert(s) sent to {t.address} as CEF ({t.framing}); none left on the alerts topic")
        return 0
    app.out(f"forwarding every alert to {t.address} as CEF over syslog ({t.framing}). Stop with Ctrl-C.")
    try:
        forwarder.run(app.config, log=app.info)
    except KeyboardInterrupt:
        return 0
    return 0


def cmd_verify(app: Application) -> int:
    from auditpipe import progress
    from auditpipe.evidence import query, verify
    from auditpipe.stack import job_settings
    from auditpipe.stack.components.collector import recorded_gaps

    a = app.args
    if a.watch:
        return watch(app)
    if a.decisions:
        if a.servers or a.since or a.until:
            raise UserError("verify --decisions checks every review decision: --server, --from and --to are for events")
        result = verify.verify_decisions(app.config, store=a.where in ("both", "store"),
                                         in_copy=a.where in ("both", "archive"))
        app.out(verify.format_report(result))
        return 0 if result.clean else 1
    since = query.parse_time(a.since, None) if a.since else None
    until = query.parse_time(a.until, None) if a.until else None
    with progress.step("recomputing the chains"):
        result = verify.verify(app.config, servers=a.servers, since=since, until=until,
                               store=a.where in ("both", "store"), in_archive=a.where in ("both", "archive"),
                               head_interval_s=job_settings.head_interval_seconds(app.config),
                               max_ahead_s=job_settings.max_ahead_seconds(app.config),
                               collector_gaps=recorded_gaps(app.config))
    app.out(verify.format_report(result))
    return 0 if result.clean else 1


def cmd_sessions(app: Application) -> int:
    from auditpipe.evidence import sessions

    a = app.args
    rows = sessions.list_sessions(app.config, since=a.since, until=a.until, servers=a.servers, users=a.users,
                                  state=a.state, data_class=a.data_class, limit=a.limit)
    app.out(sessions.format_json(rows) if a.json else sessions.format_sessions(rows))
    return 0


def cmd_session(app: Application) -> int:
    from auditpipe.evidence import sessions

    a = app.args
    found = sessions.find_session(app.config, a.server, a.session)
    records = sessions.session_records(app.config, found, a.limit)
    app.out(sessions.format_json([{**found, "records_in_order": records}]) if a.json
            else sessions.format_session(found, records))
    return 0


def cmd_review_list(app: Application) -> int:
    from datetime import datetime, timedelta, timezone

    from auditpipe.evidence import query, reviews

    a = app.args
    now = datetime.now(timezone.utc)
    until = query.parse_time(a.until, now) if a.until else now
    since = query.parse_time(a.since, until - timedelta(days=30)) if a.since else until - timedelta(days=30)
    if until <= since:
        raise UserError("--to must be after --from")
    app.out(reviews.format_awaiting(reviews.awaiting(app.config, since, until, now), since, until))
    return 0


def cmd_review_decide(app: Application) -> int:
    from auditpipe.evidence import reviews

    a = app.args
    note = a.note
    if a.key == "-" and a.note_file == "-":
        raise UserError("the key and the note cannot both come from standard input; nothing was recorded")
    if a.note_file is not None:
        if note is not None:
            raise UserError("give --note or --note-file, not both; nothing was recorded")
        try:
            note = Path(a.note_file).read_text(encoding="utf-8") if a.note_file != "-" else __import__("sys").stdin.read()
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"could not read the note from {a.note_file}: {e}; nothing was recorded") from None
    written = reviews.decide(app.config, a.items, a.outcome, note or "", Path(a.key).expanduser() if a.key else None)
    for d in written:
        app.out(f"recorded {d['_id']}: {d['reviewer']} decided {d['item']}: {d['outcome']}")
    path = reviews.ledger_path(app.config)
    if path is not None:
        app.out(f"  kept in {app.config.store['reviews_collection']} and, line for line, in {path}")
    return 0


def cmd_review_enroll(app: Application) -> int:
    from auditpipe.evidence import reviewer_keys

    a = app.args
    key_file = Path(a.key).expanduser() if a.key else reviewer_keys.default_key_file()
    reviewers_file = Path(a.reviewers_file).expanduser() if a.reviewers_file else app.config.reviewers_file
    enrolled, made = reviewer_keys.enroll(None if a.print else reviewers_file, a.name, key_file)
    app.out(f"{'made' if made else 'took'} {enrolled.name}'s key {enrolled.key_id} in {key_file}: keep it where only "
            f"{enrolled.name} can read it")
    if a.print:
        app.out(f"not enrolled: whoever keeps {reviewers_file} adds this line to it:")
        app.out(reviewer_keys.line(enrolled))
    else:
        app.out(f"enrolled in {reviewers_file}: decisions signed with it count as {enrolled.name}'s")
    return 0


def cmd_review_log(app: Application) -> int:
    from auditpipe.evidence import query, reviews

    a = app.args
    since = query.parse_time(a.since, None) if a.since else None
    until = query.parse_time(a.until, None) if a.until else None
    rows = reviews.list_decisions(app.config, since, until, a.limit)
    app.out(query.format_json(rows) if a.json else reviews.format_decisions(rows))
    return 0


def watch(app: Application) -> int:
    """verify --watch: the store's chains verified every chain.watch_interval, each finding a critical
    integrity alert (stack/verification.py), until stopped: what the local stack's supervisor does, for
    a deployment (docker-compose.yml's verifier service)."""
    from auditpipe.config import duration_seconds
    from auditpipe.stack import verification

    a = app.args
    if a.servers or a.since or a.until or a.where != "both":
        raise UserError("verify --watch verifies every server's whole chain in the store: "
                        "--server, --from, --to and --where are for a single verify")
    interval = duration_seconds(app.config.data["chain"]["watch_interval"])
    if interval <= 0:
        raise UserError("verify --watch: chain.watch_interval is 0s (never); set it in the config")
    app.out(f"verifying the store's chains every {app.config.data['chain']['watch_interval']} "
            f"(chain.watch_interval); each finding becomes a critical integrity alert. Stop with Ctrl-C.")
    try:
        verification.watch(app.config, interval, 0.0)
    except KeyboardInterrupt:
        return 0
    return 0


def cmd_dashboards(app: Application) -> int:
    from auditpipe.evidence import dashboards

    a = app.args
    if a.check:
        stale = dashboards.stale()
        if stale:
            app.out(f"stale dashboards in {dashboards.OUT_DIR}: {', '.join(stale)} (regenerate: auditpipe dashboards --write)")
            return 1
        app.out(f"dashboards in {dashboards.OUT_DIR} are up to date")
        return 0
    if a.write:
        for path in dashboards.write():
            app.out(f"wrote {path}")
        return 0
    for name, text in dashboards.render().items():
        app.out(f"# {name}")
        print(text, end="")
    return 0


def register(sub) -> None:
    s = command(sub, "query", "run a saved query of the catalog, or an ad-hoc pipeline, over every tier that holds the range",
                "Saved queries are in schemas/queries.yaml (list them with --list; docs/queries.md): the one "
                "place every figure of the reports and dashboards comes from. An events query reads the archive "
                "(Parquet, DuckDB: every day it keeps) and the store's events not archived yet, each event once, "
                "and says on stderr what each tier held for the range; --archive or --store reads that tier alone. "
                "Queries of the other collections (stats, alerts, dead letters) read the store.",
                ("./auditpipe query --list", "./auditpipe query failed-logins --from 1h --server demo-db",
                 "./auditpipe query events-by-control --from 2026-01-01 --to 2026-04-01",
                 "./auditpipe query events-for-control --param control=PCI-DSS-10.2.1.4 --json"), cmd_query)
    s.add_argument("name", nargs="?", help="saved query name")
    s.add_argument("--list", action="store_true", help="list the saved queries")
    add_time_range(s, "the time range", "the beginning", "now and later")
    add_servers(s)
    s.add_argument("--param", action="append", dest="params", metavar="NAME=VALUE",
                   help="another parameter of the saved query, e.g. control=PCI-DSS-10.2.1.4 for events-for-control "
                        "(the catalog's parameters: schemas/queries.yaml)")
    tier = s.add_mutually_exclusive_group()
    tier.add_argument("--archive", action="store_true",
                      help="an events query over the archive alone (Parquet, with DuckDB; docs/archive.md)")
    tier.add_argument("--store", action="store_true",
                      help="an events query over the store's capped collection alone (the newest events)")
    s.add_argument("--pipeline", help="an ad-hoc aggregation pipeline as JSON: it may not write ($out, $merge) or "
                   "run JavaScript ($where, $function, $accumulator), and has a time limit in the store "
                   "(docs/queries.md)")
    s.add_argument("--collection", default="events", choices=["events", "stats", "dead_letters"],
                   help="collection for --pipeline (default events)")
    s.add_argument("--json", action="store_true", help="JSON output instead of a table")

    from auditpipe.evidence.regimes import REGIMES

    s = command(sub, "report", "write an evidence report for a PCI DSS, HIPAA, SOX, SOC 2 or NIST SP 800-53 review "
                "(one HTML file)",
                "One self-contained HTML file (no request to any network: styles, charts and data inline): each "
                "control of the regime with its evidence count, exceptions (failed logins and their alerts, "
                "account and privilege changes, access to classified data, DDL on classified tables, audit stopped "
                "and record gaps), coverage per server with silence periods, retention against what the regime "
                "asks, and a SHA-256 of the evidence. Every figure comes from the query catalog (docs/queries.md); "
                "docs/reports.md. soc2 and nist count each requirement by the control tags mapped to it "
                "(docs/compliance.md \"Frameworks\").",
                ("./auditpipe report pci --from 7d", "./auditpipe report nist --from 30d",
                 "./auditpipe report sox --from 2026-10-01 --to 2026-11-01 --pdf",
                 "./auditpipe report hipaa --from 1d --server db-01 --server db-02 --out hipaa.html",
                 "./auditpipe report pci --schedule --out-dir /srv/reports"), cmd_report)
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

    s = command(sub, "alerts", "list the alerts the job raised (brute force, spraying, privilege changes, ...)",
                "Lists alerts from the store's alerts collection, newest first: when their first evidence event "
                "happened, severity, rule, server and a summary; --json gives every field, with the ids of the "
                "evidence events (look them up with `auditpipe query --pipeline`). Rules and thresholds: "
                "docs/alerts.md.",
                ("./auditpipe alerts --from 1h", "./auditpipe alerts --rule brute_force --server db-01 --json"),
                cmd_alerts)
    add_time_range(s, "the alerts' first events", "the beginning", "now and later")
    s.add_argument("--rule", choices=contract.alert_rules(), help="only this rule")
    s.add_argument("--severity", choices=contract.alert_severities(), help="only this severity")
    add_servers(s, "alerts")
    s.add_argument("--limit", type=at_least_one, default=100, help="at most this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")

    s = command(sub, "forward", "send every alert to a SIEM as CEF over syslog (alerts.cef)",
                "Reads the alerts topic (the job's alerts, integrity and review_overdue alerts) in a consumer group "
                "of its own and writes each alert, as CEF, to the syslog receiver of alerts.cef over TCP or TLS; "
                "at least once: what the receiver may not have taken is written again, with the alert's id as "
                "externalId. Runs until stopped (a deployment's forward service); the local stack's supervisor "
                "does this by itself when alerts.cef is set. Fields and framing: docs/alerts.md \"CEF over syslog\".",
                ("./auditpipe forward --once", "./auditpipe --config deploy/compose/auditpipe.yaml forward"),
                cmd_forward)
    s.add_argument("--once", action="store_true",
                   help="send what is on the alerts topic now, then stop (an unreachable receiver is an error)")

    from auditpipe.evidence.sessions import STATEMENTS_SHOWN, STATES

    s = command(sub, "sessions", "list the sessions: who connected, from where, for how long, doing what",
                "Lists the sessions the job builds from the stored events (schemas/session.schema.json), newest "
                "first: each connection from its login (or its first record here) to its logout, failed login, "
                "idle end or last record, with its records, refused statements and the data classes it touched. "
                "Show one with `auditpipe session SERVER ID`.",
                ("./auditpipe sessions --from 1d", "./auditpipe sessions --server db-01 --user app --state open",
                 "./auditpipe sessions --data-class pci_cardholder --from 7d --json"), cmd_sessions)
    add_time_range(s, "the sessions' starts", "the beginning", "now and later")
    add_servers(s, "sessions")
    s.add_argument("--user", action="append", dest="users", metavar="USER",
                   help="only this account's sessions (repeat for several)")
    s.add_argument("--state", choices=STATES, help="only sessions in this state (open, or how they ended)")
    s.add_argument("--data-class", help="only sessions that touched this data class (compliance.data_classes)")
    s.add_argument("--limit", type=at_least_one, default=100, help="at most this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")

    s = command(sub, "session", "show one session and its records in order",
                "One session's fields and its records in order (statements masked as stored, control characters "
                "escaped), from the events collection, which holds the newest events: an older session's records "
                "are in the archive (docs/archive.md). ID is the session's id or its connection id (then the "
                "newest session of that id on SERVER).",
                ("./auditpipe session db-01 4711", "./auditpipe session db-01 db-01/4711/1795860000000 --json"),
                cmd_session)
    s.add_argument("server", help="the server")
    s.add_argument("session", metavar="ID", help="the session's id, or its connection id")
    s.add_argument("--limit", type=at_least_one, default=STATEMENTS_SHOWN,
                   help=f"at most this many of its records (default {STATEMENTS_SHOWN})")
    s.add_argument("--json", action="store_true", help="JSON: the session with its records in order")

    from auditpipe.evidence.reviewer_keys import KEY_ENV
    from auditpipe.evidence.reviews import outcomes

    p = sub.add_parser("review", help="what awaits review (each day's exceptions, the alerts); record a reviewer's decision",
                       description="The daily review an assessor asks for (PCI DSS 10.4.1, 10.4.3; docs/reviews.md): "
                                   "`review list` shows the days (of the regimes in review.regimes) and the alerts no "
                                   "decision names yet, `review decide` records a reviewer's decision, which is never "
                                   "changed (a link of a hash chain that verify recomputes), `review log` lists them. "
                                   "Without an action: `review list`.")
    p.set_defaults(func=cmd_review_list, since=None, until=None)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    s = command(actions, "list", "the days and alerts awaiting a decision",
                "Each ended UTC day of each regime in review.regimes, from the first day the store holds evidence of, "
                "that no decision names, with its deadline (review.deadline after the day) and the report to read; "
                "then the alerts of the period no decision names.",
                ("./auditpipe review list", "./auditpipe review list --from 90d"), cmd_review_list)
    add_time_range(s, "the period", "30 days before --to", "now")
    s = command(actions, "decide", "record a reviewer's decision about a day or an alert",
                "Records one decision per ITEM, signed with the reviewer's own key (--key, else "
                f"${KEY_ENV}, else ~/.config/auditpipe/reviewer.key): the reviewer is the name that key is enrolled "
                "under (review.reviewers_file), with the time, the outcome and the note, in the store's reviews "
                "collection and the second copy (review.ledger_file). A decision is never changed: a reviewer decides "
                "an item once, another reviewer may add theirs. Every item is checked before any is written: an "
                "unknown item, a day not over, a second decision by the same reviewer, a key not enrolled or a note "
                "with control characters writes nothing (exit 2).",
                ("./auditpipe review decide day:pci:2026-11-28 --outcome expected",
                 "./auditpipe review decide alert:brute_force/db-01/app/1795860000000 --key ~/keys/bob.key "
                 "--outcome escalated --note 'ticket SEC-101: password reset, source blocked'"), cmd_review_decide)
    s.add_argument("items", nargs="+", metavar="ITEM", help="day:REGIME:YYYY-MM-DD or alert:ALERT_ID (as `review list` shows)")
    s.add_argument("--outcome", required=True, choices=outcomes(), help="what the review found")
    s.add_argument("--note", help="what was looked at, found or done (required unless the outcome is expected)")
    s.add_argument("--note-file", metavar="FILE", help="the note from a file (- for standard input)")
    s.add_argument("--key", metavar="FILE", help=f"the reviewer's private key, - for standard input (default: "
                   f"${KEY_ENV}, else ~/.config/auditpipe/reviewer.key)")
    s = command(actions, "enroll", "make a reviewer's own signing key and enroll it under their name",
                "Makes an Ed25519 key in FILE (mode 0600; an existing key there is taken as it is) and adds its "
                "public half under NAME to review.reviewers_file: decisions signed with it are NAME's. Run it as "
                "the reviewer, so that the private key never leaves their account. Whoever can write the reviewers "
                "file can enroll any key under any name: where reviewers may not, --print gives the line for the "
                "file's keeper to add. A key enrolled already is refused.",
                ("./auditpipe review enroll alice",
                 "./auditpipe review enroll bob --print",
                 "./auditpipe review enroll carol --key ~/keys/carol.key --reviewers-file deploy/compose/reviewers"),
                cmd_review_enroll)
    s.add_argument("name", metavar="NAME", help="the reviewer's name (letters, digits and . _ @ + -), as decisions show it")
    s.add_argument("--key", metavar="FILE", help=f"where the private key is made or read (default: ${KEY_ENV}, else "
                   "~/.config/auditpipe/reviewer.key)")
    s.add_argument("--reviewers-file", metavar="FILE", help="the reviewers file to add to (default: review.reviewers_file)")
    s.add_argument("--print", action="store_true", help="make or read the key and print the reviewers file's line, "
                   "enrolling nothing")
    s = command(actions, "log", "the decisions recorded, in order",
                "The decisions in the order they were recorded (their links), with reviewer, outcome and note.",
                ("./auditpipe review log", "./auditpipe review log --from 7d --json"), cmd_review_log)
    add_time_range(s, "when the decisions were recorded", "the beginning", "now and later")
    s.add_argument("--limit", type=at_least_one, default=100, help="the newest this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")

    s = command(sub, "verify", "recompute each server's tamper-evidence chain over the store and the archive",
                "Every stored event is a link in its server's hash chain (docs/archive.md). verify recomputes "
                "the links from the documents in the store and the rows of the archive, checks them against the "
                "chain heads the job recorded every minute, and reports each broken link: EDITED, DELETED, "
                "INSERTED, REORDERED or HEAD_MISMATCH, with the event. Links the capped collection trimmed are not "
                "an alarm. Exit 0: clean; 1: findings. With --watch it verifies the store again every "
                "chain.watch_interval until stopped and raises a critical integrity alert for each finding, "
                "as the local stack's supervisor does (docs/security.md). Without --server, --from and --to it "
                "also recomputes the review decisions' chain in the store and its second copy (docs/reviews.md); "
                "--decisions checks that alone.",
                ("./auditpipe verify", "./auditpipe verify --server db-01 --from 7d --where archive",
                 "./auditpipe verify --decisions", "./auditpipe verify --watch"), cmd_verify)
    add_servers(s, "chain")
    add_time_range(s, "the events whose links are checked", "the first", "the last")
    s.add_argument("--where", choices=("both", "store", "archive"), default="both",
                   help="what to verify (default both, and that they agree)")
    s.add_argument("--watch", action="store_true",
                   help="verify the store every chain.watch_interval until stopped, raising an alert for each finding")
    s.add_argument("--decisions", action="store_true",
                   help="only the review decisions' chain, in the store and its second copy (docs/reviews.md)")

    g = command(sub, "dashboards", "generate the Grafana dashboards (PCI DSS 10, HIPAA, SOX, pipeline health)",
                "The Grafana dashboards are code (cli/auditpipe/evidence/dashboards.py): every panel runs a saved "
                "query of the catalog with the MongoDB data source's time-range and server macros. Without an "
                "option, print them; --write regenerates dashboards/grafana/*.json, which dashboards/provisioning "
                "loads into Grafana (docs/dashboards.md).",
                ("./auditpipe dashboards --check", "./auditpipe dashboards --write"),
                cmd_dashboards).add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write dashboards/grafana/*.json")
    g.add_argument("--check", action="store_true", help="exit 1 if the committed JSON differs from the code")
