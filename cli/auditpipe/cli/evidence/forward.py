"""`auditpipe forward`: send every alert to a SIEM as CEF over syslog (alerts.cef).

Reads the alerts topic (the job's alerts, integrity and review_overdue alerts) in a consumer group
of its own and writes each alert, as CEF, to the syslog receiver of alerts.cef over TCP or TLS; at
least once: what the receiver may not have taken is written again, with the alert's id as
externalId. Runs until stopped (a deployment's forward service); the local stack's supervisor does
this by itself when alerts.cef is set. Fields and framing: docs/alerts.md "CEF over syslog".
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented
from auditpipe.errors import UserError


def run(app: Application) -> int:
    """forward: the alerts topic to the SIEM as CEF over syslog (stack/alerts/forwarder.py), until stopped or,
    with --once, up to what is on the topic now."""
    from auditpipe.stack.alerts import forwarder

    t = forwarder.target(app.config)
    if t is None:
        raise UserError(f"alerts.cef is not set in {app.config.file}: name the SIEM's syslog receiver there "
                        "(docs/alerts.md \"CEF over syslog\")")
    if app.args.once:
        n = forwarder.run(app.config, once=True, log=app.info)
        app.out(f"forward: {n} alert(s) sent to {t.address} as CEF ({t.framing}); none left on the alerts topic")
        return 0
    return app.until_stopped(f"forwarding every alert to {t.address} as CEF over syslog ({t.framing}).",
                             lambda: forwarder.run(app.config, log=app.info))


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe forward --once", "./auditpipe --config deploy/compose/auditpipe.yaml forward"),
                   run)
    s.add_argument("--once", action="store_true",
                   help="send what is on the alerts topic now, then stop (an unreachable receiver is an error)")
