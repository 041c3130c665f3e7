"""`auditpipe sessions`: list the sessions: who connected, from where, for how long, doing what.

Lists the sessions the job builds from the stored events (schemas/session.schema.json), newest
first: each connection from its login (or its first record here) to its logout, failed login, idle
end or last record, with its records, refused statements and the data classes it touched. Show one
with `auditpipe session SERVER ID`.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, at_least_one, documented


def run(app: Application) -> int:
    from auditpipe.evidence import sessions

    a = app.args
    rows = sessions.list_sessions(app.config, since=a.since, until=a.until, servers=a.servers, users=a.users,
                                  state=a.state, data_class=a.data_class, limit=a.limit)
    app.out(sessions.format_json(rows) if a.json else sessions.format_sessions(rows))
    return 0


def register(sub) -> None:
    from auditpipe.evidence.sessions import STATES

    s = documented(sub, __doc__,
                   ("./auditpipe sessions --from 1d", "./auditpipe sessions --server db-01 --user app --state open",
                   "./auditpipe sessions --data-class pci_cardholder --from 7d --json"), run)
    add_time_range(s, "the sessions' starts", "the beginning", "now and later")
    add_servers(s, "sessions")
    s.add_argument("--user", action="append", dest="users", metavar="USER",
                   help="only this account's sessions (repeat for several)")
    s.add_argument("--state", choices=STATES, help="only sessions in this state (open, or how they ended)")
    s.add_argument("--data-class", help="only sessions that touched this data class (compliance.data_classes)")
    s.add_argument("--limit", type=at_least_one, default=100, help="at most this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")
