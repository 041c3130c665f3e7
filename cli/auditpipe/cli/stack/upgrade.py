"""`auditpipe upgrade`: run the job of this checkout in place of the running one, with its state.

After `git pull` (or any change of the job's code) while the stack runs: the running job stops with a
savepoint, the new job is built and starts from that savepoint, so each server's chain, the copies
it remembers, the open counts and sessions carry on, and the collector and Kafka keep every line
written meanwhile. A new job that would lose the state of an operator it no longer has refuses to
start (docs/operations.md, Upgrade): then the previous job runs again from the same savepoint and the
command says which operator's state, with exit status 1. Then `up` as usual: the supervisor, the other
parts.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.stack import lifecycle

    lifecycle.upgrade(app.config)
    app.out(lifecycle.format_status(lifecycle.status(app.config)))
    return 0


def register(sub) -> None:
    documented(sub, __doc__, ("git pull && ./auditpipe upgrade",), run)
