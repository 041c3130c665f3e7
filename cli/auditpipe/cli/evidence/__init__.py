"""Commands of queries and evidence: saved queries, evidence reports, alerts, chain verification, dashboards."""

from __future__ import annotations

from auditpipe.cli.evidence import alerts, dashboards, forward, query, report, review, session, sessions, verify

#: the group's commands, in the order `auditpipe --help` lists them
COMMANDS = (query, report, alerts, forward, sessions, session, review, verify, dashboards)


def register(sub) -> None:
    for c in COMMANDS:
        c.register(sub)
