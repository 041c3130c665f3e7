"""Tools: parse a log offline, write a simulated one, check the configuration, run the tests and the bench."""

from __future__ import annotations

from auditpipe.cli.tools import bench, config, parse, simulate, test

#: the group's commands, in the order `auditpipe --help` lists them
COMMANDS = (parse, simulate, config, test, bench)


def register(sub) -> None:
    for c in COMMANDS:
        c.register(sub)
