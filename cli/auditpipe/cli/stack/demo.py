"""`auditpipe demo`: up, generate traffic, wait until all of it is stored, print a summary.

Starts the local stack, imports eight days of the demo server's history (the learned baselines'
seeds), writes a few minutes of audit traffic (rotations, late writes, a failed-login burst,
malformed lines, incidents), waits until every generated record is in the store and prints generated
vs stored, duplicates, dead letters, failed logins, alerts and throughput, verifies the chain and
writes the PCI DSS report. Exit 0 only if all add up. The stack keeps running; `./auditpipe down`
stops it.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented, positive


def run(app: Application) -> int:
    from auditpipe.demo import run_demo

    a = app.args
    result = run_demo(app.config, duration=a.duration, rate=a.rate, speedup=a.speedup, timeout=a.timeout)
    return 0 if result.ok else 1


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe demo", "./auditpipe demo --duration 60 --rate 100"), run)
    s.add_argument("--duration", type=positive, default=180, help="seconds of simulated traffic (default 180)")
    s.add_argument("--rate", type=positive, default=300, help="records per simulated second (default 300)")
    s.add_argument("--speedup", type=positive, default=6, help="simulated seconds per real second (default 6)")
    s.add_argument("--timeout", type=positive, default=180, help="seconds to wait for the store (default 180)")
