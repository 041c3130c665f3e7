"""The Grafana dashboards as code (cli/auditpipe/evidence/dashboards.py, docs/dashboards.md): the committed
JSON is what the code generates, every panel's query is a catalog query whose parameters come
from the dashboard's macros, and the PCI panels name their sub-requirement. The panels' queries
run against the real store in tests/e2e/evidence/test_dashboard_panels.py."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from bson import json_util

from auditpipe import paths
from auditpipe.evidence import dashboards, query


def committed() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted(dashboards.OUT_DIR.glob("*.json"))}


def test_the_committed_dashboards_are_what_the_code_generates():
    assert dashboards.stale() == [], "regenerate them: ./auditpipe dashboards --write"
    assert set(committed()) == set(dashboards.render())


def test_every_panel_runs_a_catalog_query_with_the_dashboards_macros():
    catalog = query.saved_queries()
    targets = [(name, title, t) for name, d in committed().items() for title, t in dashboards.panel_targets(d)]
    assert len(targets) >= 19
    for _name, title, t in targets:
        q = catalog[t["auditpipeQuery"]]
        assert t["datasource"] == {"type": dashboards.PLUGIN, "uid": dashboards.DATASOURCE_UID}, title
        # a rollup form reads the rollups, an evidence query the evidence collection (the whole retention)
        role = "rollups" if "rollup" in q else "evidence" if query.evidence_kind(t["auditpipeQuery"]) else q["collection"]
        assert t["collection"] == dashboards.default_collections()[role], title
        assert t["queryLanguage"] == "json"
        text = t["queryText"]
        # every parameter the catalog query has is either a macro or fixed by the panel
        uses = set(re.findall(r"'\$param': '(\w+)'", str(q["pipeline"])))
        assert uses <= {"since", "until", "servers"} | set(t["auditpipeParams"]), (title, uses)
        if "since" in uses:
            assert '"$numberLong": "$__from"' in text and '"$numberLong": "$__to"' in text, title
        assert ("servers" in uses) == (dashboards.SERVERS_MACRO in text), title
        # expanded as the plugin expands it, the text is the catalog pipeline bound to the same values
        t0, t1 = datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2026, 1, 2, tzinfo=timezone.utc)
        expanded = json_util.loads(dashboards.expand_macros(text, int(t0.timestamp() * 1000), int(t1.timestamp() * 1000),
                                                            ["db-01", "db-02"]),
                                   json_options=json_util.JSONOptions(tz_aware=True, tzinfo=timezone.utc))
        assert expanded == query.bind(query.panel_form(t["auditpipeQuery"])[1], {
            **t["auditpipeParams"], "since": t0, "until": t1, "servers": ["db-01", "db-02"]}), title


def test_grouped_panels_split_the_group_key_into_columns():
    for d in committed().values():
        for p in d["panels"]:
            for t in p.get("targets", []):
                groups = any("$group" in stage for stage in query.panel_form(t["auditpipeQuery"])[1])
                ids = [x["id"] for x in p.get("transformations", [])]
                assert ("extractFields" in ids) == groups, p["title"]


def test_the_pci_dashboard_names_each_sub_requirement():
    pci = committed()["pci-dss-10.json"]
    described = " ".join(p.get("description", "") for p in pci["panels"])
    for n in range(1, 8):
        assert f"10.2.1.{n}" in described


def test_every_dashboard_has_the_server_variable_from_the_servers_collection():
    for name, d in committed().items():
        (var,) = [v for v in d["templating"]["list"] if v["name"] == "server"]
        assert var["type"] == "query" and var["multi"] and var["includeAll"], name
        assert var["query"]["collection"] == dashboards.default_collections()["servers"]
        assert d["uid"].startswith("auditpipe-") and "auditpipe" in d["tags"]


def test_provisioning_points_grafana_at_the_committed_dashboards_with_a_read_only_user():
    import yaml

    prov = paths.REPO / "dashboards" / "provisioning"
    (source,) = yaml.safe_load((prov / "datasources" / "auditpipe-store.yaml").read_text())["datasources"]
    assert source["type"] == dashboards.PLUGIN and source["uid"] == dashboards.DATASOURCE_UID
    assert source["jsonData"]["authType"] == "username-password"
    assert source["secureJsonData"]["password"].startswith("$")  # from the environment, never committed
    (provider,) = yaml.safe_load((prov / "dashboards" / "auditpipe.yaml").read_text())["providers"]
    assert provider["options"]["path"].endswith("grafana") and provider["allowUiUpdates"] is False


def _lost(a, b, path="") -> list[str]:
    """Paths present in ``a`` and missing from ``b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in a for p in ([f"{path}.{k}"] if k not in b else _lost(a[k], b[k], f"{path}.{k}"))]
    if isinstance(a, list) and isinstance(b, list):
        return [f"{path} (length)"] if len(a) != len(b) else [
            p for i, (x, y) in enumerate(zip(a, b)) for p in _lost(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path} ({a!r} became {b!r})"]


def test_the_committed_json_is_a_dashboard_of_the_sdks_grafana_schema():
    """Read back through the SDK's dashboard model (generated from Grafana's schema, 11.6): a field the
    schema does not know would be dropped, a value of another shape changed."""
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models import dashboard as gmodel

    for name, d in committed().items():
        back = json.loads(json.dumps(gmodel.Dashboard.from_json(d), cls=JSONEncoder))
        assert _lost(d, back) == [], name
