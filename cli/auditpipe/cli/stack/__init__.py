"""Commands of the local stack: setup, up, down, status, the supervisor, init for a deployment, the demo."""

from __future__ import annotations

from pathlib import Path

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import command, positive
from auditpipe.errors import UserError


def cmd_setup(app: Application) -> int:
    from auditpipe.stack import lifecycle

    lifecycle.setup(app.config)
    app.info("setup: done")
    return 0


def cmd_up(app: Application) -> int:
    from auditpipe.stack import lifecycle

    lifecycle.up(app.config)
    app.out(lifecycle.format_status(lifecycle.status(app.config)))
    return 0


def cmd_init(app: Application) -> int:
    from auditpipe.stack import deployment

    cfg, args = app.config, app.args
    if cfg.kafka_is_local or cfg.store_uses_local_ferretdb:
        raise UserError("init prepares a Kafka and a store that auditpipe does not run: set kafka.bootstrap_servers "
                        f"and store.uri or store.uri_env in {cfg.file} (for the local stack, `up` does this)")
    if args.store_users_only and args.job_properties:
        raise UserError("--store-users-only makes the store users alone: no job options (leave out --job-properties)")
    deployment.init(cfg, Path(args.job_properties) if args.job_properties else None, args.checkpoint_dir,
                    args.archive_path, args.wait, store_users_only=args.store_users_only)
    app.info("init: done")
    return 0


def cmd_down(app: Application) -> int:
    from auditpipe.stack import lifecycle

    stopped = lifecycle.down(app.config)
    app.out("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def cmd_status(app: Application) -> int:
    from auditpipe.stack import lifecycle

    rows = lifecycle.status(app.config)
    app.out(lifecycle.format_status(rows, as_json=app.args.json))
    # a tier's warning (too few hours of hot data) is advice, not a failed part
    return 0 if all(r.health in ("ok", "warning") for r in rows) else 3


def cmd_supervise(app: Application) -> int:
    from auditpipe.stack import supervisor

    return supervisor.run(app.config)


def cmd_demo(app: Application) -> int:
    from auditpipe.demo import run_demo

    a = app.args
    result = run_demo(app.config, duration=a.duration, rate=a.rate, speedup=a.speedup, timeout=a.timeout)
    return 0 if result.ok else 1


def register(sub) -> None:
    command(sub, "setup", "install what the local stack needs (Kafka, Flink, FerretDB, rsyslog)",
            "Installs what is missing into tools_dir: Kafka and the Flink runtime from Maven Central, the Flink "
            "job jar (built here), FerretDB built from the Go module proxy, rsyslog with its Kafka output from "
            "Debian packages. Idempotent.",
            ("./auditpipe setup", "./auditpipe --config my.yaml setup"), cmd_setup)

    command(sub, "up", "setup, then start Kafka, the store, the Flink job and the collector",
            "Installs what is missing, then starts every part as a process on 127.0.0.1 with data and logs under "
            "state_dir, and a supervisor that restarts any part that dies (with backoff; `status` shows "
            "restarts). Parts already running are left alone, so it is safe to run at any time; a stopped Flink "
            "job restarts from its newest checkpoint. After a change of `sources:` it ships the new files.",
            ("./auditpipe up", "AUDITPIPE_CONFIG=/etc/auditpipe.yaml ./auditpipe up"), cmd_up)

    command(sub, "down", "stop the supervisor and what `up` started (and nothing else)",
            "Stops the supervisor first (so nothing is restarted), then the collector, the Flink job, the store "
            "and Kafka, each only if `up` started it (its pid file says so). Data, checkpoints and the archive "
            "stay under state_dir; `up` carries on from them.",
            ("./auditpipe down",), cmd_down)

    s = command(sub, "status", "pid, endpoint, health and lag of each part",
                "Each part's process, endpoint, health, Kafka lag and restarts, with what to do about a part that "
                "is down, and the span of the hot tier and the archive. Exit status 0 if every part is healthy, "
                "3 otherwise.",
                ("./auditpipe status", "./auditpipe status --json"), cmd_status)
    s.add_argument("--json", action="store_true", help="JSON output")

    # run by `up`, stopped by `down`: not listed among the commands
    s = command(sub, "supervise", None,
                "The supervisor loop that `up` starts in the background and `down` stops: a part whose process "
                "is gone is started again, with backoff; restarts show in `status`. Not meant to be run by hand.",
                ("./auditpipe up    # starts it",), cmd_supervise)
    s.add_argument("--state-dir", help="the state directory (identifies this stack's supervisor process)")

    s = command(sub, "init", "prepare an external Kafka and store (the deployment's init service)",
                "What `up` prepares, for a Kafka (kafka.bootstrap_servers) and a MongoDB (store.uri or "
                "store.uri_env) that auditpipe does not run: the topics, the capped events collection, the other "
                "collections and their indexes, the ACLs of kafka.security.principals, the store users named in the "
                "environment (AUDITPIPE_<WHO>_STORE_USER/_PASSWORD: docs/deployment.md lists them and their roles), "
                "and with --job-properties the Flink job's options "
                "for a cluster and the chain heads' signing key. Safe to run again: what exists is "
                "kept. docker-compose.yml runs it before the job starts (docs/deployment.md).",
                ("./auditpipe --config deploy/compose/auditpipe.yaml init --job-properties /flink/job.properties",),
                cmd_init)
    s.add_argument("--job-properties", metavar="FILE", help="write the job's options for the Flink cluster here")
    s.add_argument("--checkpoint-dir", default="file:///flink/checkpoints",
                   help="checkpoint directory every JobManager and TaskManager reaches (default %(default)s)")
    s.add_argument("--archive-path", default="file:///flink/archive",
                   help="the archive's directory as the TaskManagers see it (default %(default)s)")
    s.add_argument("--wait", type=positive, default=120, metavar="SECONDS",
                   help="how long to wait for Kafka and the store to answer (default %(default)s)")
    s.add_argument("--store-users-only", action="store_true",
                   help="the store users alone, no Kafka and no collections (the direct path's direct-init service)")

    s = command(sub, "demo", "up, generate traffic, wait until all of it is stored, print a summary",
                "Starts the local stack, imports eight days of the demo server's history (the learned baselines' "
                "seeds), writes a few minutes of audit traffic (rotations, late writes, a "
                "failed-login burst, malformed lines, incidents), waits until every generated record is in the "
                "store and prints generated vs stored, duplicates, dead letters, failed logins, alerts and "
                "throughput, verifies the chain and writes the PCI DSS report. Exit 0 only if all add up. The "
                "stack keeps running; `./auditpipe down` stops it.",
                ("./auditpipe demo", "./auditpipe demo --duration 60 --rate 100"), cmd_demo)
    s.add_argument("--duration", type=positive, default=180, help="seconds of simulated traffic (default 180)")
    s.add_argument("--rate", type=positive, default=300, help="records per simulated second (default 300)")
    s.add_argument("--speedup", type=positive, default=6, help="simulated seconds per real second (default 6)")
    s.add_argument("--timeout", type=positive, default=180, help="seconds to wait for the store (default 180)")
