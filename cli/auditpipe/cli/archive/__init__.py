"""Commands of the archive: its span, compacting closed days, pruning days past the retention; importing history."""

from __future__ import annotations

from auditpipe.cli.archive import archive, import_

#: the group's commands, in the order `auditpipe --help` lists them
COMMANDS = (import_, archive)


def register(sub) -> None:
    for c in COMMANDS:
        c.register(sub)
