"""`auditpipe up`: setup, then start Kafka, the store, the Flink job and the collector.

Installs what is missing, then starts every part as a process on 127.0.0.1 with data and logs under
state_dir, and a supervisor that restarts any part that dies (with backoff; `status` shows
restarts). Parts already running are left alone, so it is safe to run at any time; a stopped Flink
job restarts from its newest checkpoint. After a change of `sources:` it ships the new files.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.stack import lifecycle

    lifecycle.up(app.config)
    app.out(lifecycle.format_status(lifecycle.status(app.config)))
    return 0


def register(sub) -> None:
    documented(sub, __doc__,
               ("./auditpipe up", "AUDITPIPE_CONFIG=/etc/auditpipe.yaml ./auditpipe up"), run)
