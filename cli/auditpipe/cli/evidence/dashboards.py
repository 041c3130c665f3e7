"""`auditpipe dashboards`: generate the Grafana dashboards (PCI DSS 10, HIPAA, SOX, pipeline health).

The Grafana dashboards are code (cli/auditpipe/evidence/dashboards.py): every panel runs a saved
query of the catalog with the MongoDB data source's time-range and server macros. Without an option,
print them; --write regenerates dashboards/grafana/*.json, which dashboards/provisioning loads into
Grafana (docs/dashboards.md).
"""

from __future__ import annotations

from auditpipe import paths
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.evidence import dashboards

    a = app.args
    if a.check or a.write:
        paths.require_checkout("dashboards --check and --write (the repository's dashboards/grafana)")
    if a.check:
        stale = dashboards.stale()
        if stale:
            app.out(f"stale dashboards in {dashboards.OUT_DIR}: {', '.join(stale)} (regenerate: auditpipe dashboards --write)")
            return 1
        app.out(f"dashboards in {dashboards.OUT_DIR} are up to date")
        return 0
    if a.write:
        for path in dashboards.write():
            app.out(f"wrote {path}")
        return 0
    for name, text in dashboards.render().items():
        app.out(f"# {name}")
        print(text, end="")
    return 0


def register(sub) -> None:
    g = documented(sub, __doc__,
                   ("./auditpipe dashboards --check", "./auditpipe dashboards --write"),
                   run).add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write dashboards/grafana/*.json")
    g.add_argument("--check", action="store_true", help="exit 1 if the committed JSON differs from the code")
