"""`auditpipe alerts`: list the alerts the job raised (brute force, spraying, privilege changes, ...).

Lists alerts from the store's alerts collection, newest first: when their first evidence event
happened, severity, rule, server and a summary; --json gives every field, with the ids of the
evidence events (look them up with `auditpipe query --pipeline`). Rules and thresholds:
docs/alerts.md.
"""

from __future__ import annotations

from auditpipe import contract
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, at_least_one, documented


def run(app: Application) -> int:
    from auditpipe.evidence import alerts

    a = app.args
    rows = alerts.list_alerts(app.config, since=a.since, until=a.until, rule=a.rule, severity=a.severity,
                              servers=a.servers, limit=a.limit)
    app.out(alerts.format_alerts_json(rows) if a.json else alerts.format_alerts(rows))
    return 0


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe alerts --from 1h", "./auditpipe alerts --rule brute_force --server db-01 --json"),
                   run)
    add_time_range(s, "the alerts' first events", "the beginning", "now and later")
    s.add_argument("--rule", choices=contract.alert_rules(), help="only this rule")
    s.add_argument("--severity", choices=contract.alert_severities(), help="only this severity")
    add_servers(s, "alerts")
    s.add_argument("--limit", type=at_least_one, default=100, help="at most this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")
