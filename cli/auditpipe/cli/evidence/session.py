"""`auditpipe session`: show one session and its records in order.

One session's fields and its records in order (statements masked as stored, control characters
escaped), from the events collection, which holds the newest events: an older session's records are
in the archive (docs/archive.md). ID is the session's id or its connection id (then the newest
session of that id on SERVER).
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import at_least_one, documented


def run(app: Application) -> int:
    from auditpipe.evidence import sessions

    a = app.args
    found = sessions.find_session(app.config, a.server, a.session)
    records = sessions.session_records(app.config, found, a.limit)
    app.out(sessions.format_json([{**found, "records_in_order": records}]) if a.json
            else sessions.format_session(found, records))
    return 0


def register(sub) -> None:
    from auditpipe.evidence.sessions import STATEMENTS_SHOWN

    s = documented(sub, __doc__,
                   ("./auditpipe session db-01 4711", "./auditpipe session db-01 db-01/4711/1795860000000 --json"),
                   run)
    s.add_argument("server", help="the server")
    s.add_argument("session", metavar="ID", help="the session's id, or its connection id")
    s.add_argument("--limit", type=at_least_one, default=STATEMENTS_SHOWN,
                   help=f"at most this many of its records (default {STATEMENTS_SHOWN})")
    s.add_argument("--json", action="store_true", help="JSON: the session with its records in order")
