"""`auditpipe import`: bring servers' existing audit logs (rotated, gzip too) into the archive and evidence.

Runs each server's files through the job's own parse, enrich, mask and chain path (the same graph,
over the files instead of Kafka, in a Flink of its own) into the archive, the evidence collection,
the stats and the rollups: what a review over months reads (docs/archive.md "Imported history").
Give one server's files after --server NAME (or after the command, for one server), and as many
servers as you like, each with --server NAME FILE...: they run one after another in one Flink, which
is faster than one import per server. Files are read oldest first whatever their order here; names
ending in .gz are read through gzip. A record the archive or the store already holds (shipped live,
or imported before) is not imported again; what is imported is linked in a chain of its own, which
verify checks. Malformed records become dead letters with their reason, as live. The stack's store
must be running. Exit codes: 0 imported, 3 imported with dead letters, 1 an import failed (importing
again adds only the rest; the servers after it are not run), 2 bad arguments.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    """Checks the arguments, hands the job (io.auditpipe.flink.ImportJob, a JVM of its own, one server
    after another) the ids already held, runs it with its progress on stderr, and says what it
    imported (archive/history.py)."""
    import json
    import shutil
    import subprocess
    import time

    from auditpipe import paths, prereqs
    from auditpipe.archive import history
    from auditpipe.errors import UserError
    from auditpipe.stack.flink.job import JAVA_OPENS, LOG4J2, FlinkJob

    cfg, a = app.config, app.args
    groups = history.server_groups(a.server, a.files)
    checked = [(server, files, *history.check_arguments(cfg, files, server, a.format, a.timezone))
               for server, files in groups]
    history.require_store(cfg)
    job = FlinkJob(cfg)
    job.install()
    java = prereqs.require_java17()
    chain = history.chain_name()
    work = cfg.state_dir / "import" / chain
    work.mkdir(parents=True, exist_ok=True)
    (work / "job.properties").write_text(job.job_properties(None), encoding="utf-8")
    (work / "log4j2.properties").write_text(LOG4J2, encoding="utf-8")
    # a batch run, no pauses to keep short: the parallel collector's throughput (an 800,000-event
    # import ran 36,036-39,024 events/s with it, 32,520-36,697 with G1; four runs each, 2026-11-26)
    argv = [java, f"-Xmx{cfg.flink['heap']}", "-XX:+UseParallelGC", *JAVA_OPENS, "-cp", f"{paths.JOB_JAR}:{job.runtime_lib}/*",
            f"-Dlog4j2.configurationFile={work / 'log4j2.properties'}",
            "io.auditpipe.flink.ImportJob", "--config", str(work / "job.properties"), "--chain", chain, "--work", str(work)]
    for i, (server, files, fmt, tz) in enumerate(checked, 1):
        (work / str(i)).mkdir(exist_ok=True)
        known = history.write_known_ids(cfg, server, work / str(i) / "known-ids.txt")
        app.info(f"import: {len(files)} file(s) of server {server} as {fmt} (time zone {tz}), in chain {chain}; "
                 f"{known:,} of its events are held already")
        argv += ["--server", server, "--format", fmt, "--timezone", tz,
                 "--known-ids", str(work / str(i) / "known-ids.txt"), *[str(f.resolve()) for f in files]]
    started = time.monotonic()
    with open(work / "import.log", "w", encoding="utf-8") as log:  # Flink's own lines; progress is on stderr
        code = subprocess.run(argv, stdout=log).returncode
    seconds = time.monotonic() - started
    if code == 2:  # refused before anything ran: the job said why on stderr
        shutil.rmtree(work, ignore_errors=True)
        raise UserError("import refused (above)")
    done = []
    for i, (server, files, _, _) in enumerate(checked, 1):
        try:
            summary = json.loads((work / str(i) / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            summary = None
        shutil.rmtree(work / str(i) / "checkpoints", ignore_errors=True)
        (work / str(i) / "known-ids.txt").unlink(missing_ok=True)  # as large as the server's history; the summary stays
        if summary is None and done and not done[-1].ok:
            app.out(f"not imported: server {server} (the import stopped at the failure above; importing it again "
                    "runs it)")
            continue
        imported = history.Imported(chain, files, summary or {}, history.archived_events(cfg, server, chain),
                                    code == 0 and (summary or {}).get("done") is True)
        done.append(imported)
        for line in history.describe(imported, server):
            app.out(line)
    if len(checked) > 1:
        app.out(history.run_line(done, len(checked), seconds))
    codes = [i.exit_code for i in done] + ([1] if len(done) < len(checked) else [])
    return 1 if 1 in codes else max(codes)


def register(sub) -> None:
    from auditpipe import formats

    s = documented(sub, __doc__,
                   ("./auditpipe import /var/log/mysql/audit.log.*.gz --server db-01",
                   "./auditpipe import server_audit.log.1 server_audit.log.2 --server maria-01 --format mariadb-audit "
                   "--timezone Europe/Berlin",
                   "./auditpipe import --server db-01 /logs/db-01/audit.log* --server db-02 /logs/db-02/audit.log*"),
                   run)
    s.add_argument("files", nargs="*", metavar="FILE", help="audit log files of the one server named by --server "
                   "(gzip when named .gz)")
    s.add_argument("--server", required=True, action="append", nargs="+", metavar=("NAME", "FILE"),
                   help="a server, and its files: its events get the ids live shipping gives them (a configured "
                   "source's name imports its history); repeat for several servers")
    s.add_argument("--format", choices=[f for f in formats.FORMATS if f != "auto"],
                   help="the files' format (default: each server's configured source's, else detected from its "
                   "files' first lines)")
    s.add_argument("--timezone", help="the servers' time zone, for times written without one (default: each "
                   "configured source's, else UTC)")
