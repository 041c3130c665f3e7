"""`auditpipe status`: pid, endpoint, health and lag of each part.

Each part's process, endpoint, health, Kafka lag and restarts, with what to do about a part that is
down, and the span of the hot tier and the archive. Exit status 0 if every part is healthy, 3
otherwise.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.stack import lifecycle

    rows = lifecycle.status(app.config)
    app.out(lifecycle.format_status(rows, as_json=app.args.json))
    # a tier's warning (too few hours of hot data) is advice, not a failed part
    return 0 if all(r.health in ("ok", "warning") for r in rows) else 3


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe status", "./auditpipe status --json"), run)
    s.add_argument("--json", action="store_true", help="JSON output")
