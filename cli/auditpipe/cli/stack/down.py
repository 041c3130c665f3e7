"""`auditpipe down`: stop the supervisor and what `up` started (and nothing else).

Stops the supervisor first (so nothing is restarted), then the collector, the Flink job, the store
and Kafka, each only if `up` started it (its pid file says so). Data, checkpoints and the archive
stay under state_dir; `up` carries on from them.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.stack import lifecycle

    stopped = lifecycle.down(app.config)
    app.out("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def register(sub) -> None:
    documented(sub, __doc__,
               ("./auditpipe down",), run)
