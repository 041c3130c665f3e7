"""The `auditpipe` command: one entry point for the local stack, the generator, queries, the demo and tests."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from auditpipe import __version__, config, formats, paths, prereqs, progress
from auditpipe.errors import UserError

EPILOG = """\
The configuration file is --config FILE, else $AUDITPIPE_CONFIG, else auditpipe.yaml in the
repository. Every key is documented in docs/configuration.md.
"""


# the job's alert rules (docs/alerts.md); tests/unit/test_alerts.py checks them against the job's code
ALERT_RULES = ("brute_force", "password_spray", "login_after_failures", "account_change", "unauthorized_data_access",
               "audit_stopped", "ddl_outside_change_window", "record_gap")


def positive(text: str) -> float:
    """argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def at_least_one(text: str) -> int:
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _cfg(args):
    return config.load(args.config)


def cmd_setup(args) -> int:
    from auditpipe import stack

    stack.setup(_cfg(args))
    progress.info("setup: done")
    return 0


def cmd_up(args) -> int:
    from auditpipe import stack

    cfg = _cfg(args)
    stack.up(cfg)
    print(stack.format_status(stack.status(cfg)))
    return 0


def cmd_init(args) -> int:
    from auditpipe import deployment

    cfg = _cfg(args)
    if cfg.kafka_is_local or cfg.store_uses_local_ferretdb:
        raise UserError("init prepares a Kafka and a store that auditpipe does not run: set kafka.bootstrap_servers "
                        f"and store.uri or store.uri_env in {cfg.file} (for the local stack, `up` does this)")
    deployment.init(cfg, Path(args.job_properties) if args.job_properties else None, args.checkpoint_dir,
                    args.archive_path, args.wait)
    progress.info("init: done")
    return 0


def cmd_down(args) -> int:
    from auditpipe import stack

    stopped = stack.down(_cfg(args))
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def cmd_status(args) -> int:
    from auditpipe import stack

    rows = stack.status(_cfg(args))
    print(stack.format_status(rows, as_json=args.json))
    # a tier's warning (too few hours of hot data) is advice, not a failed part
    return 0 if all(r.health in ("ok", "warning") for r in rows) else 3


def cmd_supervise(args) -> int:
    from auditpipe import supervisor

    return supervisor.run(_cfg(args))


def cmd_simulate(args) -> int:
    from auditpipe.simulate import STYLES, manifest_path, simulate

    if args.malformed and args.style != "json":
        raise UserError("--malformed lines are Percona JSON lines: only with --style json")
    cfg = _cfg(args)
    path = Path(args.path) if args.path else cfg.demo_log
    bar = progress.Bar(int(args.rate * args.duration), "records", "generated")
    m = simulate(path, rate=args.rate, duration=args.duration, speedup=args.speedup, seed=args.seed,
                 rotate_on_size=args.rotate_size, rotations=args.rotations, late_writes=args.late_writes,
                 failed_login_burst=args.failed_login_burst, malformed=args.malformed,
                 progress=lambda d, t: bar.update(d), style=args.style, rotation=args.rotation,
                 incidents=args.incidents)
    bar.close()
    print(f"wrote {m.records} records and {m.malformed} malformed lines to {path} "
          f"({m.rotations} rotations, {m.late_writes} late writes; format {STYLES[args.style]}); "
          f"manifest: {manifest_path(path)}")
    return 0


def cmd_query(args) -> int:
    from auditpipe import query

    if args.list or (not args.name and not args.pipeline):
        for name, q in query.saved_queries().items():
            print(f"{name:<24} [{q['collection']}] {q['description']}")
        return 0
    cfg = _cfg(args)
    if args.pipeline:
        if args.name:
            raise UserError("give either a saved query name or --pipeline, not both")
        if args.servers or args.params:
            raise UserError("--server and --param fill a saved query's parameters; put them into --pipeline yourself")
        rows = query.run_pipeline(cfg, args.collection, query.parse_pipeline_json(args.pipeline))
    elif args.archive:
        rows = query.run_saved_on_archive(cfg, args.name, args.since, args.until, args.servers,
                                          query.parse_params(args.params))
    else:
        rows = query.run_saved(cfg, args.name, args.since, args.until, args.servers, query.parse_params(args.params))
    print(query.format_json(rows) if args.json else query.format_table(rows))
    return 0


def cmd_report(args) -> int:
    from datetime import datetime, timedelta, timezone

    from auditpipe import query, report

    cfg = _cfg(args)
    now = datetime.now(timezone.utc)
    until = query.parse_time(args.until, now) if args.until else now
    since = query.parse_time(args.since, until - timedelta(days=1)) if args.since else until - timedelta(days=1)
    built = report.build(cfg, args.regime, since, until, args.servers, now=now, progress_step=progress.step)
    out = Path(args.out) if args.out else report.default_path(cfg, args.regime, since, until)
    report.write(built, out)
    print(f"report: {out.resolve()}")
    print(f"  open it: file://{out.resolve()}")
    print(f"  evidence SHA-256: {built.digest()}")
    if args.pdf:
        pdf = out.with_suffix(".pdf")
        with progress.step("printing the PDF with chromium"):
            report.to_pdf(out, pdf)
        print(f"  PDF: {pdf.resolve()}")
    return 0


def cmd_dashboards(args) -> int:
    from auditpipe import dashboards

    if args.check:
        stale = dashboards.stale()
        if stale:
            print(f"stale dashboards in {dashboards.OUT_DIR}: {', '.join(stale)} (regenerate: auditpipe dashboards --write)")
            return 1
        print(f"dashboards in {dashboards.OUT_DIR} are up to date")
        return 0
    if args.write:
        for path in dashboards.write():
            print(f"wrote {path}")
        return 0
    for name, text in dashboards.render().items():
        print(f"# {name}")
        print(text, end="")
    return 0


def cmd_verify(args) -> int:
    from auditpipe import query, verify

    cfg = _cfg(args)
    since = query.parse_time(args.since, None) if args.since else None
    until = query.parse_time(args.until, None) if args.until else None
    with progress.step("recomputing the chains"):
        result = verify.verify(cfg, server=args.server, since=since, until=until,
                               store=args.where in ("both", "store"), in_archive=args.where in ("both", "archive"))
    print(verify.format_report(result))
    return 0 if result.clean else 1


def cmd_archive(args) -> int:
    from auditpipe import archive

    cfg = _cfg(args)
    root = cfg.archive_path
    if args.action == "compact":
        done = archive.compact(root)
        for e in done:
            print(f"compacted {e['server']} {e['date']}: {e['files']} files, {e['events']} events, into {e['into']}")
        print(f"compacted {len(done)} server-days" + (f"; recorded in {root / 'manifest' / 'compaction.jsonl'}"
                                                     if done else " (none had more than one file)"))
        return 0
    if args.action == "prune":
        days = args.retention_days or cfg.archive["retention_days"]
        removed = archive.prune(root, days, dry_run=args.dry_run)
        verb = "would remove" if args.dry_run else "removed"
        for e in removed:
            print(f"{verb} {e['server']} {e['date']}: {e['events']} events in {e['files']} files ({e['bytes']} bytes)")
        print(f"{verb} {len(removed)} server-days older than {days} days"
              + ("" if args.dry_run or not removed else f"; recorded in {root / 'manifest' / 'retention.jsonl'}"))
        return 0
    sp = archive.span(root)
    if not sp.files:
        print(f"archive {root}: empty")
        return 0
    print(f"archive {root}: {sp.events} events of {sp.servers} servers in {sp.files} files over {sp.days} days, "
          f"{sp.first:%Y-%m-%d %H:%M:%S} to {sp.last:%Y-%m-%d %H:%M:%S} UTC; keeps {cfg.archive['retention_days']} days")
    return 0


def cmd_alerts(args) -> int:
    """The alerts the job raised, newest first."""
    from auditpipe import alerts

    rows = alerts.list_alerts(_cfg(args), since=args.since, until=args.until, rule=args.rule, severity=args.severity,
                              server=args.server, limit=args.limit)
    print(alerts.format_alerts_json(rows) if args.json else alerts.format_alerts(rows))
    return 0


def cmd_parse(args) -> int:
    """An audit log through the job's own parser, offline (io.auditpipe.flink.ParseFile)."""
    from auditpipe.components.flink import FlinkJob

    from zoneinfo import available_timezones

    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"{path} is not a file")
    if args.timezone not in available_timezones():
        raise UserError(f"--timezone: '{args.timezone}' is not an IANA time zone name (e.g. UTC, Europe/Berlin)")
    fmt = args.format
    if fmt is None:
        fmt, how = formats.detect_file(path)
        if fmt is None:
            raise UserError(f"cannot tell the format: {how}; give --format")
        progress.info(f"parse: format {fmt} ({how}; --format to choose)")
    cfg = _cfg(args)
    job = FlinkJob(cfg)
    job.install()  # the job jar holds the parsers
    java = prereqs.require_java17()
    import tempfile

    from auditpipe import compliance
    from auditpipe.components.base import properties_value

    with tempfile.NamedTemporaryFile("w", suffix=".properties", encoding="utf-8") as props:
        props.write("".join(f"{k}={properties_value(v)}\n" for k, v in compliance.job_properties(cfg).items()))
        props.flush()
        return subprocess.run([java, "-Xmx1g", "-cp", f"{paths.JOB_JAR}:{job.runtime_lib}/*",
                               "io.auditpipe.flink.ParseFile", str(path), "--format", fmt, "--server", args.server,
                               "--timezone", args.timezone, "--compliance", props.name,
                               *(["--enrich"] if args.enrich else [])]).returncode


def cmd_demo(args) -> int:
    from auditpipe.demo import run_demo

    result = run_demo(_cfg(args), duration=args.duration, rate=args.rate, speedup=args.speedup, timeout=args.timeout)
    return 0 if result.ok else 1


def cmd_test(args) -> int:
    """Installs what the tests need, then runs the JVM unit tests and the pytest suite."""
    from auditpipe import stack

    if not args.no_setup:
        cfg = _cfg(args)
        stack.setup(cfg)
        # a real database server for the formats' end-to-end test (it skips, saying why, without them)
        missing = prereqs.install_debian_packages({"mariadbd": "mariadb-server", "mariadb": "mariadb-client",
                                                   "sysbench": "sysbench"}, "for the MariaDB end-to-end test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            progress.info(f"  ! not installed: {', '.join(missing)}; the MariaDB end-to-end test will skip")
        # a real browser for the evidence report's test (it skips, saying why, without it)
        missing = prereqs.install_debian_packages({"chromium": "chromium"}, "for the evidence report's browser test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            progress.info("  ! not installed: chromium; the evidence report's browser test will skip")
    progress.info("test: JVM unit tests (mvn test)")
    mvn = subprocess.run(["mvn", "-q", "-B", "-f", str(paths.PIPELINES / "pom.xml"), "test"])
    if mvn.returncode != 0:
        progress.info("test: JVM unit tests failed")
        return mvn.returncode
    progress.info("test: pytest (unit, then end to end on the real stack)")
    return subprocess.run([sys.executable, "-m", "pytest", "-ra", "--durations=25", str(paths.REPO / "tests"), *args.pytest_args],
                          cwd=paths.REPO).returncode


def cmd_bench(args) -> int:
    """Runs bench/pipeline_bench.py: figures, not assertions."""
    return subprocess.run([sys.executable, str(paths.REPO / "bench" / "pipeline_bench.py"),
                           *(["--quick"] if args.quick else []),
                           *(["--end-to-end-only"] if args.end_to_end_only else []),
                           *(["--json", str(Path(args.json).resolve())] if args.json else []),
                           *(["--recordings", str(Path(args.recordings).resolve())] if args.recordings else [])],
                          cwd=paths.REPO).returncode


def cmd_config(args) -> int:
    if args.action == "docs":
        text = config.docs_markdown()
        if args.write:
            (paths.REPO / "docs" / "configuration.md").write_text(text)
        else:
            print(text, end="")
        return 0
    cfg = _cfg(args)
    print(f"{cfg.file}: valid")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="auditpipe", description="MySQL-family audit logs -> Kafka -> Flink -> "
                                "MongoDB, as compliance evidence. Runs the local stack on 127.0.0.1.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", help="configuration file (default: $AUDITPIPE_CONFIG or auditpipe.yaml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("--version", action="version", version=f"auditpipe {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("setup", help="install what the local stack needs (Kafka, Flink, FerretDB, rsyslog)",
                       description="Installs what is missing into tools_dir: Kafka and the Flink runtime from Maven "
                                   "Central, the Flink job jar (built here), FerretDB built from the Go module "
                                   "proxy, rsyslog with its Kafka output from Debian packages. Idempotent.")
    s.set_defaults(func=cmd_setup)

    s = sub.add_parser("up", help="setup, then start Kafka, the store, the Flink job and the collector",
                       description="Installs what is missing, then starts every part as a process on 127.0.0.1 "
                                   "with data and logs under state_dir, and a supervisor that restarts any part "
                                   "that dies (with backoff; `status` shows restarts). Parts already running are "
                                   "left alone, so it is safe to run at any time; a stopped Flink job restarts "
                                   "from its newest checkpoint.")
    s.set_defaults(func=cmd_up)

    s = sub.add_parser("init", help="prepare an external Kafka and store (the deployment's init service)",
                       description="What `up` prepares, for a Kafka (kafka.bootstrap_servers) and a MongoDB "
                                   "(store.uri or store.uri_env) that auditpipe does not run: the topics, the capped "
                                   "events collection, the other collections and their indexes, the store users "
                                   "named in the environment (AUDITPIPE_JOB_STORE_USER/_PASSWORD: readWrite, "
                                   "AUDITPIPE_READER_STORE_USER/_PASSWORD: read), and with --job-properties the "
                                   "Flink job's options for a cluster. Safe to run again: what exists is kept. "
                                   "docker-compose.yml runs it before the job starts (docs/deployment.md).")
    s.add_argument("--job-properties", metavar="FILE", help="write the job's options for the Flink cluster here")
    s.add_argument("--checkpoint-dir", default="file:///flink/checkpoints",
                   help="checkpoint directory every JobManager and TaskManager reaches (default %(default)s)")
    s.add_argument("--archive-path", default="file:///flink/archive",
                   help="the archive's directory as the TaskManagers see it (default %(default)s)")
    s.add_argument("--wait", type=positive, default=120, metavar="SECONDS",
                   help="how long to wait for Kafka and the store to answer (default %(default)s)")
    s.set_defaults(func=cmd_init)

    s = sub.add_parser("down", help="stop the supervisor and what `up` started (and nothing else)")
    s.set_defaults(func=cmd_down)

    s = sub.add_parser("status", help="pid, endpoint, health and lag of each part",
                       description="Exit status 0 if every part is healthy, 3 otherwise.")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_status)

    s = sub.add_parser("supervise", help="(run by `up`) restart any part of the local stack that dies",
                       description="The supervisor loop that `up` starts in the background and `down` stops: a "
                                   "part whose process is gone is started again, with backoff; restarts show in "
                                   "`status`. Not meant to be run by hand.")
    s.add_argument("--state-dir", help="the state directory (identifies this stack's supervisor process)")
    s.set_defaults(func=cmd_supervise)

    s = sub.add_parser("simulate", help="write a realistic audit log (Percona JSON, XML, CSV; MySQL Enterprise JSON), with rotation",
                       description="Writes sessions (connect, sysbench-like statements, quit), failed logins and "
                                   "rotations the way Percona's audit_log plugin does, to the demo log (which the "
                                   "collector ships) or --path. A manifest of what was written goes next to it.")
    s.add_argument("--path", help="log file to write (default: the demo log under state_dir)")
    s.add_argument("--rate", type=positive, default=500, help="records per second of simulated time (default 500)")
    s.add_argument("--duration", type=positive, default=60, help="seconds of simulated time (default 60)")
    s.add_argument("--speedup", type=positive, default=1.0,
                   help="simulated seconds per real second (default 1: real time)")
    s.add_argument("--seed", type=int, help="random seed, for a repeatable log")
    s.add_argument("--rotate-size", type=non_negative_int, default=1024 * 1024,
                   help="rotate when the file reaches this many bytes, like audit_log_rotate_on_size (default 1 MiB; 0: never)")
    s.add_argument("--rotations", type=at_least_one, default=9,
                   help="rotated files kept, like audit_log_rotations (default 9)")
    s.add_argument("--late-writes", type=non_negative_int, default=3,
                   help="records written to the just-rotated file after the rename (default 3)")
    s.add_argument("--failed-login-burst", type=non_negative_int, default=0, help="failed logins from one host midway (default 0)")
    s.add_argument("--malformed", type=non_negative_int, default=0, help="malformed lines mixed in (default 0)")
    from auditpipe.simulate import ROTATION_SCHEMES, STYLES

    s.add_argument("--style", choices=list(STYLES), default="json",
                   help="what to write: Percona's audit_log_format json (default; source format percona-json), "
                        "xml-old or xml-new (percona-xml), csv (percona-csv); or the same traffic as MySQL Enterprise "
                        "Audit's JSON, pretty-printed or one record per line (mysql-enterprise-json)")
    s.add_argument("--rotation", choices=list(ROTATION_SCHEMES), default="chain",
                   help="rotated names: chain, audit.log -> audit.log.01 -> .02 (Percona, MariaDB; default) or "
                        "timestamp, audit.log -> audit.20261122T090000.log (MySQL Enterprise, audit_log_filter)")
    s.add_argument("--incidents", action="store_true",
                   help="also write what the alert rules look for: a password spray, a privilege escalation, card "
                        "numbers in statements, a service account reading PHI, the audit log turned off, a record "
                        "deleted from the log (with "
                        "--failed-login-burst, a brute force); the manifest lists the alerts they must raise, with the "
                        "compliance section of auditpipe.yaml (docs/alerts.md)")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("query", help="run a saved aggregation or an ad-hoc pipeline against the store",
                       description="Saved queries are in schemas/queries.yaml (list them with --list). "
                                   "Times: 15m, 2h, 7d before now, or ISO-8601 (UTC).")
    s.add_argument("name", nargs="?", help="saved query name")
    s.add_argument("--list", action="store_true", help="list the saved queries")
    s.add_argument("--since", "--from", dest="since", help="start of the time range (default: the beginning)")
    s.add_argument("--until", "--to", dest="until", help="end of the time range (default: now and later)")
    s.add_argument("--server", action="append", dest="servers", metavar="SERVER",
                   help="only this server's records (repeat for several; default every server)")
    s.add_argument("--param", action="append", dest="params", metavar="NAME=VALUE",
                   help="another parameter of the saved query, e.g. control=PCI-DSS-10.2.1.4 for events-for-control "
                        "(the catalog's parameters: schemas/queries.yaml)")
    s.add_argument("--archive", action="store_true",
                   help="run the saved query over the archive (Parquet, with DuckDB) instead of the store: the "
                        "events of every day the archive keeps, not only the capped collection's (docs/archive.md)")
    s.add_argument("--pipeline", help="an ad-hoc aggregation pipeline as JSON")
    s.add_argument("--collection", default="events", choices=["events", "stats", "dead_letters"],
                   help="collection for --pipeline (default events)")
    s.add_argument("--json", action="store_true", help="JSON output instead of a table")
    s.set_defaults(func=cmd_query)

    s = sub.add_parser("report", help="write an evidence report for a PCI DSS, HIPAA or SOX review (one HTML file)",
                       description="One self-contained HTML file (no request to any network: styles, charts and "
                       "data inline): each control of the regime with its evidence count, exceptions (failed logins "
                       "and their alerts, account and privilege changes, access to classified data, DDL on "
                       "classified tables, audit stopped and record gaps), coverage per server with silence "
                       "periods, retention against what the regime asks, and a SHA-256 of the evidence. Every "
                       "figure comes from the query catalog (docs/queries.md); docs/reports.md.")
    s.add_argument("regime", choices=["pci", "hipaa", "sox"], help="which review the report is for")
    s.add_argument("--since", "--from", dest="since", help="start of the period (default: a day before --to)")
    s.add_argument("--until", "--to", dest="until", help="end of the period (default: now)")
    s.add_argument("--server", action="append", dest="servers", metavar="SERVER",
                   help="only this server (repeat for several; default every server)")
    s.add_argument("--out", help="the HTML file to write (default: <state_dir>/reports/<regime>-<from>-<to>.html)")
    s.add_argument("--pdf", action="store_true", help="also print it to a PDF next to it, with Chromium (headless)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("dashboards", help="generate the Grafana dashboards (PCI DSS 10, HIPAA, SOX, pipeline health)",
                       description="The Grafana dashboards are code (cli/auditpipe/dashboards.py): every panel runs a "
                       "saved query of the catalog with the MongoDB data source's time-range and server macros. "
                       "Without an option, print them; --write regenerates dashboards/grafana/*.json, which "
                       "dashboards/provisioning loads into Grafana (docs/dashboards.md).")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write dashboards/grafana/*.json")
    g.add_argument("--check", action="store_true", help="exit 1 if the committed JSON differs from the code")
    s.set_defaults(func=cmd_dashboards)

    s = sub.add_parser("verify", help="recompute each server's tamper-evidence chain over the store and the archive",
                       description="Every stored event is a link in its server's hash chain (docs/archive.md). "
                       "verify recomputes the links from the documents in the store and the rows of the archive, "
                       "checks them against the chain heads the job recorded every minute, and reports each broken "
                       "link: EDITED, DELETED, INSERTED, REORDERED or HEAD_MISMATCH, with the event. Links the "
                       "capped collection trimmed are not an alarm. Exit 0: clean; 1: findings.")
    s.add_argument("--server", help="only this server")
    s.add_argument("--since", "--from", dest="since", help="only the links of events from this time: 15m, 2h, 7d "
                   "ago, or ISO-8601")
    s.add_argument("--until", "--to", dest="until", help="only the links of events before this time (same forms)")
    s.add_argument("--where", choices=("both", "store", "archive"), default="both",
                   help="what to verify (default both, and that they agree)")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("archive", help="the archive's span; compact closed days; prune days older than the retention",
                       description="`archive status`: events, servers and days the archive holds. `archive compact`: "
                       "merges each closed day's files (the job writes one per checkpoint) into one. `archive prune`: "
                       "removes the days older than archive.retention_days (400) and appends what it removed, and "
                       "when, to manifest/retention.jsonl. Run compact and prune daily (cron). docs/archive.md.")
    s.add_argument("action", choices=("status", "compact", "prune"))
    s.add_argument("--retention-days", type=at_least_one, help="override archive.retention_days")
    s.add_argument("--dry-run", action="store_true", help="prune: only say what would be removed")
    s.set_defaults(func=cmd_archive)

    s = sub.add_parser("alerts", help="list the alerts the job raised (brute force, spraying, privilege changes, ...)",
                       description="Lists alerts from the store's alerts collection, newest first: when their first "
                       "evidence event happened, severity, rule, server and a summary; --json gives every field, "
                       "with the ids of the evidence events (look them up with `auditpipe query --pipeline`). Rules "
                       "and thresholds: docs/alerts.md.")
    s.add_argument("--since", help="only alerts whose first event is at or after this: 15m, 2h, 7d ago, or an "
                   "ISO-8601 time")
    s.add_argument("--until", help="only alerts whose first event is before this (same forms)")
    s.add_argument("--rule", choices=ALERT_RULES, help="only this rule")
    s.add_argument("--severity", choices=("critical", "high", "medium"), help="only this severity")
    s.add_argument("--server", help="only this server")
    s.add_argument("--limit", type=at_least_one, default=100, help="at most this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")
    s.set_defaults(func=cmd_alerts)

    s = sub.add_parser("parse", help="parse an audit log file offline: one stored-event JSON per line",
                       description="Runs FILE through the job's own parser, as the pipeline would: records are "
                       "framed as the collector frames them (one per line, or several lines each for XML, CSV and "
                       "pretty-printed JSON); each record that becomes an event is printed as the document the store "
                       "would hold (JSON, one per line); each that would be a dead letter is reported on stderr with "
                       "the number of its first line and the reason, and the exit code is then 1. Check a log before "
                       "pointing the pipeline at it. Card numbers and the config's masking patterns are masked as the "
                       "job masks them. Formats: docs/formats.md; enrichment: docs/compliance.md.")
    s.add_argument("file", metavar="FILE", help="the audit log file")
    s.add_argument("--format", choices=formats.FORMATS, help="its format (default: detected from its first lines, "
                   "and said)")
    s.add_argument("--server", default="parsed", help="server name for the event ids (default: parsed)")
    s.add_argument("--timezone", default="UTC", help="the server's time zone, for times written without a zone "
                   "(mariadb-audit; audit_log_filter's XML and JSON); default UTC")
    s.add_argument("--enrich", action="store_true", help="also show what enrichment makes of each event, with the "
                   "config's compliance settings: category, action, tables, data classes, principal class, access "
                   "violations, the controls it evidences")
    s.set_defaults(func=cmd_parse)

    s = sub.add_parser("demo", help="up, generate traffic, wait until all of it is stored, print a summary",
                       description="Starts the local stack, writes a few minutes of audit traffic (rotations, "
                                   "late writes, a failed-login burst, malformed lines), waits until every "
                                   "generated record is in the store and prints generated vs stored, duplicates, "
                                   "dead letters, failed logins, throughput. Exit 0 only if all add up. The stack "
                                   "keeps running; `./auditpipe down` stops it.")
    s.add_argument("--duration", type=positive, default=180, help="seconds of simulated traffic (default 180)")
    s.add_argument("--rate", type=positive, default=300, help="records per simulated second (default 300)")
    s.add_argument("--speedup", type=positive, default=6, help="simulated seconds per real second (default 6)")
    s.add_argument("--timeout", type=positive, default=180, help="seconds to wait for the store (default 180)")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("test", help="install what is needed, then run the JVM and Python test suites",
                       description="mvn test (parser and job unit tests), then pytest tests/ (unit tests and "
                                   "end-to-end tests on a real local stack of their own ports and state).")
    s.add_argument("--no-setup", action="store_true", help="skip the install step")
    s.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed to pytest")
    s.set_defaults(func=cmd_test)

    s = sub.add_parser("bench", help="measure throughput and latency (prints figures; see bench/README.md)",
                       description="Starts a stack of its own on other ports and measures the store's bulk-insert "
                                   "rate, the Flink job alone (at parallelism 1 and 2, with the top frames of a "
                                   "profile), each format's parser, end-to-end throughput with each component's CPU "
                                   "per event, memory and a profile of the job, and latency and alert latency at "
                                   "10,000 events/s. Prints figures beside their targets; asserts nothing. About 9-13 minutes on "
                                   "our 2-core machines, up to 2 of them warming the job up until its JIT "
                                   "compiler settles (--quick: 5).")
    s.add_argument("--quick", action="store_true", help="a shorter run (40,000 records end to end, not 200,000)")
    s.add_argument("--end-to-end-only", action="store_true",
                   help="only the store's bulk rate, the end-to-end run with its ceiling and the latency run "
                        "(about 7-9 minutes): to compare a change of the job's store writes or of the store, "
                        "without the job alone and the parsers")
    s.add_argument("--json", metavar="FILE", help="also write the figures, with the machine, the component versions, "
                   "the parallelism and the run lengths, to FILE as JSON (two runs on one machine can be compared)")
    s.add_argument("--recordings", metavar="DIR", help="keep the Java Flight Recorder recordings of the job (alone, "
                   "and end to end) in DIR, to read with the JDK's jfr tool or JDK Mission Control")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("config", help="check the configuration file, or print its reference",
                       description="`config check` validates the file and names any bad key; `config docs` prints "
                                   "docs/configuration.md as generated from schemas/config.schema.json.")
    s.add_argument("action", choices=["check", "docs"])
    s.add_argument("--write", action="store_true", help="with docs: write docs/configuration.md")
    s.set_defaults(func=cmd_config)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    progress.QUIET = args.quiet
    try:
        return args.func(args)
    except UserError as e:
        print(f"auditpipe: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("auditpipe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
