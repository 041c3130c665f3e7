"""Commands of the local stack: setup, up, upgrade, down, status, the supervisor, init for a deployment, the demo."""

from __future__ import annotations

from auditpipe.cli.stack import demo, down, init, setup, status, supervise, up, upgrade

#: the group's commands, in the order `auditpipe --help` lists them
COMMANDS = (setup, up, upgrade, down, status, supervise, init, demo)


def register(sub) -> None:
    for c in COMMANDS:
        c.register(sub)
