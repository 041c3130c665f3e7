"""`auditpipe simulate`: write a realistic audit log (Percona JSON, XML, CSV; MySQL Enterprise JSON), with rotation.

Writes sessions (connect, sysbench-like statements, quit), failed logins and rotations the way
Percona's audit_log plugin does, to the demo log (which the collector ships) or --path. A manifest
of what was written goes next to it.
"""

from __future__ import annotations

from pathlib import Path

from auditpipe import progress
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import at_least_one, documented, non_negative_int, positive
from auditpipe.errors import UserError


def run(app: Application) -> int:
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


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe simulate --rate 500 --duration 60",
                   "./auditpipe simulate --path /tmp/a/audit.log --style xml-new --speedup 100 --incidents"), run)
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
