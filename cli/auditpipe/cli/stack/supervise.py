"""`auditpipe supervise`: the supervisor loop that `up` starts in the background and `down` stops."""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import command


def run(app: Application) -> int:
    from auditpipe.stack import supervisor

    return supervisor.run(app.config)


def register(sub) -> None:
    s = command(sub, "supervise", None,
                "The supervisor loop that `up` starts in the background and `down` stops: a part whose process "
                "is gone is started again, with backoff; restarts show in `status`. Not meant to be run by hand.",
                ("./auditpipe up    # starts it",), run)
    s.add_argument("--state-dir", help="the state directory (identifies this stack's supervisor process)")
