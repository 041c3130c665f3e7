"""`auditpipe query`: run a saved query of the catalog, or an ad-hoc pipeline, over every tier that holds the range.

Saved queries are in schemas/queries.yaml (list them with --list; docs/queries.md): the one place
every figure of the reports and dashboards comes from. An events query reads the archive (Parquet,
DuckDB: every day it keeps) and the store's events not archived yet, each event once, and says on
stderr what each tier held for the range; --archive or --store reads that tier alone. Queries of the
other collections (stats, alerts, dead letters) read the store.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_servers, add_time_range, documented
from auditpipe.errors import UserError


def run(app: Application) -> int:
    from auditpipe.evidence import query, tiers

    a = app.args
    if a.list or (not a.name and not a.pipeline):
        for name, q in query.saved_queries().items():
            app.out(f"{name:<24} [{q['collection']}] {q['description']}")
        return 0
    cfg = app.config
    if a.pipeline:
        if a.name:
            raise UserError("give either a saved query name or --pipeline, not both")
        if a.servers or a.params:
            raise UserError("--server and --param fill a saved query's parameters; put them into --pipeline yourself")
        rows = query.run_pipeline(cfg, a.collection, query.parse_pipeline_json(a.pipeline))
    else:
        read: list[str] = []
        rows = tiers.run_saved(cfg, a.name, a.since, a.until, a.servers, query.parse_params(a.params),
                               tier="archive" if a.archive else "store" if a.store else "auto", tiers_read=read)
        for line in read:
            app.info(f"read: {line}")
    app.out(query.format_json(rows) if a.json else query.format_table(rows))
    return 0


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe query --list", "./auditpipe query failed-logins --from 1h --server demo-db",
                   "./auditpipe query events-by-control --from 2026-01-01 --to 2026-04-01",
                   "./auditpipe query events-for-control --param control=PCI-DSS-10.2.1.4 --json"), run)
    s.add_argument("name", nargs="?", help="saved query name")
    s.add_argument("--list", action="store_true", help="list the saved queries")
    add_time_range(s, "the time range", "the beginning", "now and later")
    add_servers(s)
    s.add_argument("--param", action="append", dest="params", metavar="NAME=VALUE",
                   help="another parameter of the saved query, e.g. control=PCI-DSS-10.2.1.4 for events-for-control "
                        "(the catalog's parameters: schemas/queries.yaml)")
    tier = s.add_mutually_exclusive_group()
    tier.add_argument("--archive", action="store_true",
                      help="an events query over the archive alone (Parquet, with DuckDB; docs/archive.md)")
    tier.add_argument("--store", action="store_true",
                      help="an events query over the store's capped collection alone (the newest events)")
    s.add_argument("--pipeline", help="an ad-hoc aggregation pipeline as JSON: it may not write ($out, $merge) or "
                   "run JavaScript ($where, $function, $accumulator), and has a time limit in the store "
                   "(docs/queries.md)")
    s.add_argument("--collection", default="events", choices=["events", "stats", "dead_letters"],
                   help="collection for --pipeline (default events)")
    s.add_argument("--json", action="store_true", help="JSON output instead of a table")
