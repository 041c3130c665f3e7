"""`auditpipe verify`: recompute each server's tamper-evidence chain over the store and the archive.

Every stored event is a link in its server's hash chain (docs/archive.md). verify recomputes the
links from the documents in the store and the rows of the archive, checks them against the chain
heads the job recorded every minute, and reports each broken link: EDITED, DELETED, INSERTED,
REORDERED or HEAD_MISMATCH, with the event. Links the capped collection trimmed are not an alarm.
Exit 0: clean; 1: findings. With --watch it verifies the store again every chain.watch_interval
until stopped and raises a critical integrity alert for each finding, as the local stack's
supervisor does (docs/security.md). Without --server, --from and --to it also recomputes the review
decisions' chain in the store and its second copy (docs/reviews.md); --decisions checks that alone.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, documented
from auditpipe.errors import UserError


def run(app: Application) -> int:
    from auditpipe import progress
    from auditpipe.evidence import query, verify
    from auditpipe.stack.collector.rsyslog import recorded_gaps
    from auditpipe.stack.flink import job_settings

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
    return app.until_stopped(
        f"verifying the store's chains every {app.config.data['chain']['watch_interval']} "
        f"(chain.watch_interval); each finding becomes a critical integrity alert.",
        lambda: verification.watch(app.config, interval, 0.0))


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe verify", "./auditpipe verify --server db-01 --from 7d --where archive",
                   "./auditpipe verify --decisions", "./auditpipe verify --watch"), run)
    add_servers(s, "chain")
    add_time_range(s, "the events whose links are checked", "the first", "the last")
    s.add_argument("--where", choices=("both", "store", "archive"), default="both",
                   help="what to verify (default both, and that they agree)")
    s.add_argument("--watch", action="store_true",
                   help="verify the store every chain.watch_interval until stopped, raising an alert for each finding")
    s.add_argument("--decisions", action="store_true",
                   help="only the review decisions' chain, in the store and its second copy (docs/reviews.md)")
