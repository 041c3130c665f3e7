"""`auditpipe init`: prepare an external Kafka and store (the deployment's init service).

What `up` prepares, for a Kafka (kafka.bootstrap_servers) and a MongoDB (store.uri or store.uri_env)
that auditpipe does not run: the topics, the capped events collection, the other collections and
their indexes, the ACLs of kafka.security.principals, the store users named in the environment
(AUDITPIPE_<WHO>_STORE_USER/_PASSWORD: docs/deployment.md lists them and their roles), and with
--job-properties the Flink job's options for a cluster and the chain heads' signing key. Safe to run
again: what exists is kept. docker-compose.yml runs it before the job starts (docs/deployment.md).
"""

from __future__ import annotations

from pathlib import Path

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented, positive
from auditpipe.errors import UserError


def run(app: Application) -> int:
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


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe --config deploy/compose/auditpipe.yaml init --job-properties /flink/job.properties",),
                   run)
    s.add_argument("--job-properties", metavar="FILE", help="write the job's options for the Flink cluster here")
    s.add_argument("--checkpoint-dir", default="file:///flink/checkpoints",
                   help="checkpoint directory every JobManager and TaskManager reaches (default %(default)s)")
    s.add_argument("--archive-path", default="file:///flink/archive",
                   help="the archive's directory as the TaskManagers see it (default %(default)s)")
    s.add_argument("--wait", type=positive, default=120, metavar="SECONDS",
                   help="how long to wait for Kafka and the store to answer (default %(default)s)")
    s.add_argument("--store-users-only", action="store_true",
                   help="the store users alone, no Kafka and no collections (the direct path's direct-init service)")
