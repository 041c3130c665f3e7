"""Tools: parse a log offline, write a simulated one, check the configuration, run the tests and the bench."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from auditpipe import config, formats, paths, prereqs, progress
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import at_least_one, command, non_negative_int, positive
from auditpipe.errors import UserError


def cmd_parse(app: Application) -> int:
    """An audit log through the job's own reader, offline (io.auditpipe.flink.ParseFile)."""
    import tempfile
    from zoneinfo import available_timezones

    from auditpipe.stack import job_settings
    from auditpipe.stack.components.flink import FlinkJob

    a = app.args
    path = Path(a.file)
    if not path.is_file():
        raise UserError(f"{path} is not a file")
    if a.timezone not in available_timezones():
        raise UserError(f"--timezone: '{a.timezone}' is not an IANA time zone name (e.g. UTC, Europe/Berlin)")
    fmt = a.format
    if fmt is None:
        fmt, how = formats.detect_file(path)
        if fmt is None:
            raise UserError(f"cannot tell the format: {how}; give --format")
        app.info(f"parse: format {fmt} ({how}; --format to choose)")
    cfg = app.config
    job = FlinkJob(cfg)
    job.install()  # the job jar holds the parsers
    java = prereqs.require_java17()
    with tempfile.NamedTemporaryFile("w", suffix=".properties", encoding="utf-8") as props:
        props.write(job_settings.properties_text(job_settings.compliance_properties(cfg)))
        props.flush()
        return subprocess.run([java, "-Xmx1g", "-cp", f"{paths.JOB_JAR}:{job.runtime_lib}/*",
                               "io.auditpipe.flink.ParseFile", str(path), "--format", fmt, "--server", a.server,
                               "--timezone", a.timezone, "--compliance", props.name,
                               *(["--enrich"] if a.enrich else [])]).returncode


def cmd_simulate(app: Application) -> int:
    from auditpipe.tools.simulate import STYLES, manifest_path, simulate

    a = app.args
    if a.malformed and a.style != "json":
        raise UserError("--malformed lines are Percona JSON lines: only with --style json")
    if a.restart_at is not None and not 0 < a.restart_at < 1:
        raise UserError(f"--restart-at {a.restart_at}: a fraction of the records, above 0 and below 1 (0.9: nine tenths in)")
    path = Path(a.path) if a.path else app.config.demo_log
    bar = progress.Bar(int(a.rate * a.duration), "records", "generated")
    m = simulate(path, rate=a.rate, duration=a.duration, speedup=a.speedup, seed=a.seed,
                 rotate_on_size=a.rotate_size, rotations=a.rotations, late_writes=a.late_writes,
                 failed_login_burst=a.failed_login_burst, malformed=a.malformed,
                 progress=lambda d, t: bar.update(d), style=a.style, rotation=a.rotation,
                 incidents=a.incidents, restart_at=a.restart_at)
    bar.close()
    app.out(f"wrote {m.records} records and {m.malformed} malformed lines to {path} "
            f"({m.rotations} rotations, {m.late_writes} late writes; format {STYLES[a.style]}); "
            f"manifest: {manifest_path(path)}")
    return 0


def cmd_config_check(app: Application) -> int:
    app.out(f"{app.config.file}: valid")
    return 0


def cmd_config_docs(app: Application) -> int:
    from auditpipe.cli import reference

    text = config.docs_markdown()
    if app.args.write:
        (paths.REPO / "docs" / "configuration.md").write_text(text)
        (paths.REPO / "docs" / "cli.md").write_text(reference.markdown())
    else:
        print(text, end="")
    return 0


def cmd_test(app: Application) -> int:
    """Installs what the tests need, then runs the JVM unit tests and the pytest suite."""
    from auditpipe.stack import lifecycle

    a = app.args
    if not a.no_setup:
        cfg = app.config
        lifecycle.setup(cfg)
        # a real database server for the formats' end-to-end test (it skips, saying why, without them)
        missing = prereqs.install_debian_packages({"mariadbd": "mariadb-server", "mariadb": "mariadb-client",
                                                   "sysbench": "sysbench"}, "for the MariaDB end-to-end test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            app.info(f"  ! not installed: {', '.join(missing)}; the MariaDB end-to-end test will skip")
        # a real browser for the evidence report's test (it skips, saying why, without it)
        missing = prereqs.install_debian_packages({"chromium": "chromium"}, "for the evidence report's browser test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            app.info("  ! not installed: chromium; the evidence report's browser test will skip")
    app.info("test: JVM unit tests (mvn test)")
    mvn = subprocess.run(["mvn", "-q", "-B", "-f", str(paths.PIPELINES / "pom.xml"), "test"])
    if mvn.returncode != 0:
        app.info("test: JVM unit tests failed")
        return mvn.returncode
    app.info("test: pytest (tests/: end to end and fault tests on real stacks, then unit tests)")
    return subprocess.run([sys.executable, "-m", "pytest", "-ra", "--durations=25", *pytest_arguments(a.pytest_args)],
                          cwd=paths.REPO).returncode


def pytest_arguments(given: list[str]) -> list[str]:
    """What `test` passes to pytest: ``given`` without a leading ``--`` (argparse keeps it), and the
    whole suite (tests/) unless ``given`` names a test path (a file, folder or node id under the repository)."""
    args = given[1:] if given[:1] == ["--"] else list(given)
    names_a_path = any(not x.startswith("-") and (paths.REPO / x.split("::")[0]).exists() for x in args)
    return args if names_a_path else [str(paths.REPO / "tests"), *args]


def cmd_bench(app: Application) -> int:
    """Runs bench/pipeline_bench.py, or with --review bench/review_bench.py: figures beside targets."""
    a = app.args
    if a.tables:
        if a.long or a.review or a.quick or a.end_to_end_only or a.stream or a.json or a.recordings or a.latency_rate:
            raise UserError("--tables runs no bench: it makes bench/README.md's tables anew from bench/results/")
        sys.path.insert(0, str(paths.REPO / "bench"))
        import results

        changed = results.write_tables()
        app.out(f"bench/README.md's tables {'made anew' if changed else 'already current'} from "
                f"{len(list(results.RESULTS.glob('*.json')))} run(s) in bench/results/")
        return 0
    if a.stream and "none" in a.stream and len(a.stream) > 1:
        raise UserError("--stream none turns the event stream off: it takes no format beside it")
    if a.stream and (a.long or a.review):
        raise UserError("--stream turns the event stream on in the pipeline's bench, not in --long or --review")
    if a.long:
        if a.review or a.end_to_end_only or a.recordings or a.quick or a.latency_rate is not None:
            raise UserError("--long is a run of its own: --review, --end-to-end-only, --recordings, --quick and "
                            "--latency-rate belong to the other benches (a shorter long run: --minutes)")
        return subprocess.run([sys.executable, str(paths.REPO / "bench" / "long_run.py"),
                               *(["--minutes", str(a.minutes)] if a.minutes else []),
                               *(["--rate", str(a.rate)] if a.rate else []),
                               *(["--cluster"] if a.cluster else []),
                               *(["--json", str(Path(a.json).resolve())] if a.json else [])],
                              cwd=paths.REPO).returncode
    if a.minutes is not None or a.rate is not None or a.cluster:
        raise UserError("--minutes, --rate and --cluster are the long run's (--long)")
    if a.latency_rate is not None and a.latency_rate < 1:
        raise UserError(f"--latency-rate {a.latency_rate:g}: at least 1 event a second")
    if a.review:
        if a.end_to_end_only or a.recordings or a.latency_rate is not None:
            raise UserError("--review measures reports and panels over a quarter: --end-to-end-only, --recordings and "
                            "--latency-rate belong to the pipeline's bench")
        return subprocess.run([sys.executable, str(paths.REPO / "bench" / "review_bench.py"),
                               *(["--quick"] if a.quick else []),
                               *(["--json", str(Path(a.json).resolve())] if a.json else [])],
                              cwd=paths.REPO).returncode
    return subprocess.run([sys.executable, str(paths.REPO / "bench" / "pipeline_bench.py"),
                           *(["--quick"] if a.quick else []),
                           *(["--end-to-end-only"] if a.end_to_end_only else []),
                           *(["--stream", ",".join(a.stream)] if a.stream else []),
                           *(["--json", str(Path(a.json).resolve())] if a.json else []),
                           *(["--recordings", str(Path(a.recordings).resolve())] if a.recordings else []),
                           *(["--latency-rate", f"{a.latency_rate:g}"] if a.latency_rate else [])],
                          cwd=paths.REPO).returncode


def register(sub) -> None:
    s = command(sub, "parse", "parse an audit log file offline: one stored-event JSON per line",
                "Runs FILE through the job's own reader, as the pipeline would: records are framed as the "
                "collector frames them (one per line, or several lines each for XML, CSV and pretty-printed JSON); "
                "each record that becomes an event is printed as the document the store would hold (JSON, one per "
                "line); each that would be a dead letter is reported on stderr with the number of its first line "
                "and the reason, and the exit code is then 1. Check a log before pointing the pipeline at it. Card "
                "numbers and the config's masking patterns are masked as the job masks them. Formats: "
                "docs/formats.md; enrichment: docs/compliance.md.",
                ("./auditpipe parse /var/lib/mysql/audit.log", "./auditpipe parse audit.log --format percona-xml --enrich",
                 "./auditpipe parse server_audit.log --timezone Europe/Berlin --server db-01 > events.jsonl"), cmd_parse)
    s.add_argument("file", metavar="FILE", help="the audit log file")
    s.add_argument("--format", choices=formats.FORMATS, help="its format (default: detected from its first lines, "
                   "and said)")
    s.add_argument("--server", default="parsed", help="the server name the event ids are made with, as a source's "
                   "`server` makes them (default: the word 'parsed')")
    s.add_argument("--timezone", default="UTC", help="the server's time zone, for times written without a zone "
                   "(mariadb-audit; audit_log_filter's XML and JSON); default UTC")
    s.add_argument("--enrich", action="store_true", help="also show what enrichment makes of each event, with the "
                   "config's compliance settings: category, action, tables, data classes, principal class, access "
                   "violations, the controls it evidences")

    s = command(sub, "simulate", "write a realistic audit log (Percona JSON, XML, CSV; MySQL Enterprise JSON), with rotation",
                "Writes sessions (connect, sysbench-like statements, quit), failed logins and rotations the way "
                "Percona's audit_log plugin does, to the demo log (which the collector ships) or --path. A manifest "
                "of what was written goes next to it.",
                ("./auditpipe simulate --rate 500 --duration 60",
                 "./auditpipe simulate --path /tmp/a/audit.log --style xml-new --speedup 100 --incidents"), cmd_simulate)
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
    s.add_argument("--failed-login-burst", type=non_negative_int, default=0,
                   help="failed logins from one host midway (default 0)")
    s.add_argument("--malformed", type=non_negative_int, default=0, help="malformed lines mixed in (default 0)")
    from auditpipe.tools.simulate import ROTATION_SCHEMES, STYLES

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
                        "deleted from the log (with --failed-login-burst, a brute force); the manifest lists the "
                        "alerts they must raise, with the compliance section of auditpipe.yaml (docs/alerts.md)")
    s.add_argument("--restart-at", type=float, metavar="FRACTION",
                   help="the server restarts at this fraction of the records (0.9: nine tenths in): the plugin's stop "
                        "record, then its start record, number 1 of a new sequence (alerts audit_stopped and "
                        "record_gap, class restart)")

    p = sub.add_parser("config", help="check the configuration file, or print its reference",
                       description="The configuration file (schemas/config.schema.json, docs/configuration.md).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    command(actions, "check", "validate the configuration file; errors name the bad key",
            "Validates the file against schemas/config.schema.json and what the schema cannot say (ports, "
            "sources, time zones, Kafka security); every error names the bad key.",
            ("./auditpipe config check", "./auditpipe --config /etc/auditpipe.yaml config check"), cmd_config_check)
    s = command(actions, "docs", "print docs/configuration.md as generated from the schema",
                "Prints docs/configuration.md as generated from schemas/config.schema.json; --write writes it, "
                "and docs/cli.md, every command's --help.",
                ("./auditpipe config docs --write",), cmd_config_docs)
    s.add_argument("--write", action="store_true", help="write docs/configuration.md and docs/cli.md")

    s = command(sub, "test", "install what is needed, then run the JVM and Python test suites",
                "mvn test (parser and job unit tests), then pytest tests/ (unit tests and end-to-end tests on a real "
                "local stack of their own ports and state).",
                ("./auditpipe test", "./auditpipe test --no-setup tests/unit -k chain",
                 "./auditpipe test --no-setup -- --durations=0 -x"), cmd_test)
    s.add_argument("--no-setup", action="store_true", help="skip the install step")
    s.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed to pytest")

    s = command(sub, "bench", "measure throughput and latency (prints figures; see bench/README.md)",
                "Starts a stack of its own on other ports, configured as the repository's auditpipe.yaml (what users "
                "run), and measures the store's bulk-insert rate, the Flink job alone (at parallelism 1 and 2, with "
                "the top frames of a profile, and without each of its features: the cost table), each format's "
                "parser, end-to-end throughput with each component's CPU per event, memory and a profile of the "
                "job, and latency and alert latency at 70% of the run's end-to-end rate. Prints figures beside their "
                "targets and the goals beside the run's ratios; asserts nothing. Every run's figures go to "
                "bench/results/; --tables makes bench/README.md's tables from them. About 32 minutes on 2 cores "
                "(--quick: 13; 2026-12-02).",
                ("./auditpipe bench --quick", "./auditpipe bench --json run.json --recordings /tmp/jfr",
                 "./auditpipe bench --review --json review.json",
                 "./auditpipe bench --long --minutes 30 --rate 3000 --json long.json",
                 "./auditpipe bench --tables"), cmd_bench)
    s.add_argument("--quick", action="store_true", help="a shorter run (40,000 records end to end, not 200,000; "
                   "with --review 400,000 events, not 4 million)")
    s.add_argument("--review", action="store_true",
                   help="the review-scale bench instead: a quarter of 5 servers' history (4 million events) shipped "
                        "through the job, then every report and every panel's query over the quarter, with their "
                        "seconds beside the targets and their counts against the generator's (bench/README.md)")
    s.add_argument("--end-to-end-only", action="store_true",
                   help="only the store's bulk rate, the end-to-end run with its ceiling and the latency run "
                        "(about 15 minutes on a slow day): to compare a change of the job's store writes or of the store, "
                        "without the job alone and the parsers")
    from auditpipe.config import load_schema

    stream_formats = load_schema()["properties"]["stream"]["properties"]["formats"]["items"]["enum"]
    s.add_argument("--stream", action="append", choices=[*stream_formats, "none"], metavar="FORMAT",
                   help="the event stream in the bench's stack in this format instead of auditpipe.yaml's (repeat for "
                        f"several; stream.formats: {', '.join(stream_formats)}; none: off): what its Kafka "
                        "transactions cost end to end")
    s.add_argument("--long", action="store_true",
                   help="the long run instead: two servers writing in real time for --minutes at --rate events/s "
                        "together, with every checkpoint's size and duration, the job's heap and resident memory and "
                        "the latency of each 5 minutes, and the counts checked (bench/README.md)")
    s.add_argument("--minutes", type=positive, help="the long run's length (default 30)")
    s.add_argument("--rate", type=positive, help="the long run's events/s, both servers together (default 3000; 2 cores "
                   "carried 4000 with the whole stack on them: bench/README.md, The long run)")
    s.add_argument("--cluster", action="store_true", help="the long run with the job on the local Flink cluster "
                   "(a JobManager and two TaskManagers) instead of one MiniCluster process")
    s.add_argument("--latency-rate", type=positive, metavar="N",
                   help="the latency run at N events/s instead of 70%% of the run's own end-to-end rate: to set two "
                        "commits side by side on one day (the machine's speed varies); its latency is then not judged "
                        "against the goal")
    s.add_argument("--json", metavar="FILE", help="also write the figures, with the machine, the component versions, "
                   "the parallelism and the run lengths, to FILE as JSON (two runs on one machine can be compared)")
    s.add_argument("--tables", action="store_true", help="run no bench: make bench/README.md's tables anew from "
                   "the runs in bench/results/")
    s.add_argument("--recordings", metavar="DIR", help="keep the Java Flight Recorder recordings of the job (alone, "
                   "and end to end) in DIR, to read with the JDK's jfr tool or JDK Mission Control")
