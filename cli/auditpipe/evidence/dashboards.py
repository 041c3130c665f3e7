"""Grafana dashboards as code, from the query catalog (docs/dashboards.md).

Every panel runs a saved query of schemas/queries.yaml: its pipeline is bound with the Grafana
data source's macros in place of the time range and server parameters, so a panel and
`auditpipe query NAME` ask the store the same question. The data source is the open-source MongoDB
plugin of Grafana's catalog, ``haohanyang-mongodb-datasource`` (aggregation pipelines as JSON;
`$__from`/`$__to` are epoch milliseconds, written as ``{"$date": {"$numberLong": "$__from"}}``;
Grafana's own MongoDB plugin needs an Enterprise licence). The dashboards are built with the
grafana-foundation-sdk builders, one function per panel, and written to dashboards/grafana/*.json
by ``auditpipe dashboards --write``; tests/unit/test_dashboards.py fails when the committed JSON
is stale, and tests/e2e/evidence/test_dashboard_panels.py runs every panel's query, macros expanded the way the
plugin expands them, against the real store.

FerretDB 1.24 cannot rename or compute fields in a pipeline, so grouped panels get the group key
as one JSON column ``_id`` (the plugin turns an embedded document into a JSON string) and a
Grafana transformation, `extractFields`, splits it into columns.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import dashboard as gdash
from grafana_foundation_sdk.builders import table, timeseries
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as gmodel

from auditpipe import paths
from auditpipe.evidence import query

PLUGIN = "haohanyang-mongodb-datasource"
DATASOURCE_UID = "auditpipe-store"
DATASOURCE = gmodel.DataSourceRef(type_val=PLUGIN, uid=DATASOURCE_UID)
OUT_DIR = paths.REPO / "dashboards" / "grafana"

# What a panel's pipeline holds in place of the catalog's parameters (the plugin replaces them)
FROM = {"$date": {"$numberLong": "$__from"}}
TO = {"$date": {"$numberLong": "$__to"}}
SERVERS_MACRO = "${server:json}"
_SERVERS_PLACEHOLDER = "__auditpipe_servers__"


def default_collections() -> dict[str, str]:
    """The collection of each catalog role under the default configuration (the dashboards are
    generated once, for the defaults; docs/dashboards.md says what to change for other names)."""
    store = json.loads((paths.SCHEMAS / "config.schema.json").read_text())["properties"]["store"]["properties"]
    return {role: store[key]["default"] for role, key in query.COLLECTION_ROLES.items()}


class MongoQuery(cogvariants.Dataquery):
    """A target of the MongoDB data source (its MongoDBQuery: collection, queryText, queryLanguage)."""

    def __init__(self, ref_id: str, collection: str, query_text: str, catalog_query: str,
                 params: dict[str, Any]) -> None:
        self.ref_id = ref_id
        self.params = params
        self.collection = collection
        self.query_text = query_text
        self.catalog_query = catalog_query

    def to_json(self) -> dict[str, Any]:
        return {"refId": self.ref_id, "datasource": {"type": PLUGIN, "uid": DATASOURCE_UID},
                "collection": self.collection, "queryLanguage": "json", "queryText": self.query_text,
                # which catalog query with which fixed parameters: a reader and the tests trace the
                # panel to `auditpipe query` with them (Grafana keeps fields it does not know)
                "auditpipeQuery": self.catalog_query, "auditpipeParams": self.params}


class CatalogQuery(cogbuilder.Builder[MongoQuery]):
    """A saved query of the catalog as a panel target: time range and servers from the dashboard,
    any other parameter fixed by the panel."""

    def __init__(self, name: str, params: dict[str, Any] | None = None, ref_id: str = "A") -> None:
        self.name = name
        self.params = params or {}
        self.ref_id = ref_id

    def build(self) -> MongoQuery:
        # the rollups or the evidence collection where they answer: the whole retention, not the capped
        # collection's minutes
        role, pipeline = query.panel_form(self.name)
        bound = query.bind(pipeline, {**self.params, "since": FROM, "until": TO, "servers": _SERVERS_PLACEHOLDER})
        text_ = json.dumps(bound, indent=2).replace(json.dumps(_SERVERS_PLACEHOLDER), SERVERS_MACRO)
        return MongoQuery(self.ref_id, default_collections()[role], text_, self.name, self.params)


def expand_macros(query_text: str, from_ms: int, to_ms: int, servers: list[str]) -> str:
    """The query text as the plugin sends it: Grafana's template service replaces ``$__from`` and
    ``$__to`` with epoch milliseconds and ``${server:json}`` with the selected servers as a JSON
    array (with "All": every value of the variable)."""
    return (query_text.replace("$__from", str(from_ms)).replace("$__to", str(to_ms))
            .replace(SERVERS_MACRO, json.dumps(servers)))


def _description(requirement: str, name: str) -> str:
    about = query.saved_queries()[name]["description"]
    days = (" Counted from the daily rollups: the whole UTC days that overlap the time range."
            if "rollup" in query.saved_queries()[name] else "")
    return f"{requirement}\n\n{about}{days}\n\nQuery: `auditpipe query {name}` (schemas/queries.yaml)."


def _split_group_key() -> gmodel.DataTransformerConfig:
    """The group key arrives as one JSON column `_id`; this makes one column per key field."""
    return gmodel.DataTransformerConfig(id_val="extractFields",
                                        options={"source": "_id", "format": "json", "replace": False,
                                                 "keepTime": False})


def _hide_id() -> gmodel.DataTransformerConfig:
    return gmodel.DataTransformerConfig(id_val="organize", options={"excludeByName": {"_id": True}})


def _as_time(field: str) -> gmodel.DataTransformerConfig:
    return gmodel.DataTransformerConfig(id_val="convertFieldType", options={
        "conversions": [{"targetField": field, "destinationType": "time"}], "fields": {}})


def _line_per_server() -> gmodel.DataTransformerConfig:
    return gmodel.DataTransformerConfig(id_val="partitionByValues", options={"fields": ["server"], "keepFields": False})


def _time_series(title: str, requirement: str, name: str) -> timeseries.Panel:
    return (timeseries.Panel().title(title).description(_description(requirement, name)).datasource(DATASOURCE)
            .with_target(CatalogQuery(name)))


def _grouped_table(title: str, requirement: str, name: str, params: dict | None = None,
                   width: int = 12, height: int = 8) -> table.Panel:
    return (table.Panel().title(title).description(_description(requirement, name)).datasource(DATASOURCE)
            .with_target(CatalogQuery(name, params)).with_transformation(_split_group_key())
            .with_transformation(_hide_id()).span(width).height(height))


def _list_table(title: str, requirement: str, name: str, params: dict | None = None,
                width: int = 24, height: int = 9) -> table.Panel:
    return (table.Panel().title(title).description(_description(requirement, name)).datasource(DATASOURCE)
            .with_target(CatalogQuery(name, params)).with_transformation(_hide_id()).span(width).height(height))


# --- variables -----------------------------------------------------------------------------

def server_variable() -> gdash.QueryVariable:
    """Servers from the servers collection (its `value` field is what the plugin's variable
    queries read)."""
    return (gdash.QueryVariable("server").label("Server").datasource(DATASOURCE)
            .query({"collection": default_collections()["servers"],
                    "queryText": json.dumps([{"$sort": {"value": 1}}])})
            .multi(True).include_all(True)
            .current(gmodel.VariableOption(selected=True, text="All", value="$__all"))
            .refresh(gmodel.VariableRefresh.ON_DASHBOARD_LOAD))


def _dashboard(uid: str, title: str, description: str, tags: list[str]) -> gdash.Dashboard:
    return (gdash.Dashboard(title).uid(uid).description(description).tags(["auditpipe", *tags])
            .time("now-24h", "now").timezone("utc").refresh("1m").readonly()
            .with_variable(server_variable()))


# --- PCI DSS Requirement 10 ----------------------------------------------------------------

def pci_cardholder_data_access() -> table.Panel:
    return _grouped_table("Access to cardholder data", "PCI DSS 10.2.1.1: all individual user access to cardholder data.",
                          "events-for-control", {"control": "PCI-DSS-10.2.1.1"})


def pci_cardholder_sessions() -> table.Panel:
    return _list_table("Sessions that touched cardholder data",
                       "PCI DSS 10.2.1.1: each connection that accessed cardholder data, who and from where, how long "
                       "and how it ended (`auditpipe session SERVER ID` lists its records).",
                       "classified-sessions", {"data_classes": ["pci_cardholder"]})


def pci_administrator_actions() -> table.Panel:
    return _grouped_table("Actions by administrators",
                          "PCI DSS 10.2.1.2: all actions taken by any individual with administrative access.",
                          "events-for-control", {"control": "PCI-DSS-10.2.1.2"})


def pci_audit_trail_access() -> table.Panel:
    return _grouped_table("Access to audit trails", "PCI DSS 10.2.1.3: all access to audit logs.",
                          "events-for-control", {"control": "PCI-DSS-10.2.1.3"})


def pci_invalid_access_attempts() -> table.Panel:
    return _grouped_table("Invalid logical access attempts", "PCI DSS 10.2.1.4: invalid logical access attempts.",
                          "failed-logins")


def pci_credential_changes() -> table.Panel:
    return _list_table("Identification and authentication changes",
                       "PCI DSS 10.2.1.5: changes to identification and authentication credentials (new accounts, "
                       "elevation of privileges, changes to administrative accounts).", "account-changes")


def pci_audit_log_stopped() -> table.Panel:
    return _grouped_table("Audit logs started, stopped or paused",
                          "PCI DSS 10.2.1.6: initialization, stopping or pausing of the audit logs.",
                          "events-for-control", {"control": "PCI-DSS-10.2.1.6"})


def pci_system_objects() -> table.Panel:
    return _grouped_table("Creation and deletion of system-level objects",
                          "PCI DSS 10.2.1.7: creation and deletion of system-level objects.",
                          "events-for-control", {"control": "PCI-DSS-10.2.1.7"})


def pci_days_awaiting_review() -> table.Panel:
    return _list_table("Days awaiting review",
                       "PCI DSS 10.4.1: audit logs and security events reviewed at least once daily. Each ended day no "
                       "reviewer has decided yet, with its deadline (review.deadline) and whether it passed "
                       "(`auditpipe review` lists them, `auditpipe review decide` signs one off; docs/reviews.md). "
                       "Every server's: a day's review covers them all.", "review-queue", width=12, height=8)


def pci_review_decisions() -> table.Panel:
    return _list_table("Review decisions",
                       "PCI DSS 10.4.1, 10.4.3: who decided each day and alert of the range, when, the outcome and "
                       "the note (the decisions are chained: `auditpipe verify` checks them).", "review-decisions",
                       width=12, height=8)


def pci_dashboard() -> gdash.Dashboard:
    return (_dashboard("auditpipe-pci-dss-10", "PCI DSS Requirement 10: audit trail review",
                       "Evidence for PCI DSS v4.0 Requirement 10.2.1.x from the audit events (docs/compliance.md).",
                       ["pci-dss"])
            .with_panel(pci_cardholder_data_access()).with_panel(pci_cardholder_sessions())
            .with_panel(pci_administrator_actions())
            .with_panel(pci_audit_trail_access()).with_panel(pci_invalid_access_attempts())
            .with_panel(pci_credential_changes())
            .with_panel(pci_audit_log_stopped()).with_panel(pci_system_objects())
            .with_panel(pci_days_awaiting_review()).with_panel(pci_review_decisions()))


# --- HIPAA 164.312(b) ----------------------------------------------------------------------

def hipaa_ephi_access_by_user() -> table.Panel:
    return _grouped_table("ePHI access by user", "HIPAA 164.312(b) audit controls: activity on ePHI, by user.",
                          "classified-access-by-user", {"data_classes": ["hipaa_ephi"]})


def hipaa_ephi_access_by_table() -> table.Panel:
    return _grouped_table("ePHI access by table", "HIPAA 164.312(b) audit controls: activity on ePHI, by table.",
                          "classified-access-by-table", {"data_classes": ["hipaa_ephi"]})


def hipaa_disallowed_principals() -> table.Panel:
    return _grouped_table("Access by principals not allowed for the class",
                          "HIPAA 164.312(b) / 164.308(a)(4): access to a data class by a user not on its allowed principals.",
                          "access-violations")


def hipaa_after_hours_access() -> table.Panel:
    return _grouped_table("After-hours ePHI access",
                          "HIPAA 164.312(b) audit controls: ePHI access outside business hours (compliance.business_hours; "
                          "empty until they are configured).", "after-hours-access", {"data_classes": ["hipaa_ephi"]})


def hipaa_login_monitoring() -> table.Panel:
    return _grouped_table("Log-in monitoring", "HIPAA 164.308(a)(5)(ii)(C): log-in monitoring.",
                          "events-for-control", {"control": "HIPAA-164.308(a)(5)(ii)(C)"})


def hipaa_dashboard() -> gdash.Dashboard:
    return (_dashboard("auditpipe-hipaa-164-312b", "HIPAA 164.312(b): audit controls",
                       "Who touched electronic protected health information (data class hipaa_ephi, docs/compliance.md).",
                       ["hipaa"])
            .with_panel(hipaa_ephi_access_by_user()).with_panel(hipaa_ephi_access_by_table())
            .with_panel(hipaa_disallowed_principals()).with_panel(hipaa_after_hours_access())
            .with_panel(hipaa_login_monitoring()))


# --- SOX ITGC ------------------------------------------------------------------------------

def sox_privileged_activity() -> table.Panel:
    return _grouped_table("Privileged access", "SOX ITGC logical access: privileged activity.", "privileged-activity")


def sox_financial_data_access() -> table.Panel:
    return _grouped_table("Access to financial data", "SOX ITGC logical access: access to financial data.",
                          "classified-access-by-user", {"data_classes": ["sox_financial"]})


def sox_account_changes() -> table.Panel:
    return _list_table("Account and privilege changes", "SOX ITGC logical access: account and privilege management.",
                       "account-changes")


def sox_financial_ddl() -> table.Panel:
    return _list_table("DDL on financial data", "SOX ITGC change management: changes to financial data structures.",
                       "classified-ddl", {"data_classes": ["sox_financial"]})


def sox_financial_ddl_by_change_window() -> table.Panel:
    return _grouped_table("DDL on financial data inside and outside change windows",
                          "SOX ITGC change management: schema changes on financial data, in_change_window true or false "
                          "(compliance.change_windows; none configured: every change is outside).",
                          "classified-ddl-by-change-window", {"data_classes": ["sox_financial"]})


def sox_dashboard() -> gdash.Dashboard:
    return (_dashboard("auditpipe-sox-itgc", "SOX ITGC: logical access and change management",
                       "Evidence for SOX IT general controls from the audit events (docs/compliance.md).", ["sox"])
            .with_panel(sox_privileged_activity()).with_panel(sox_financial_data_access())
            .with_panel(sox_account_changes()).with_panel(sox_financial_ddl_by_change_window())
            .with_panel(sox_financial_ddl()))


# --- Pipeline health -----------------------------------------------------------------------

MINUTES_SHOWN = "6h"  # the minute panel's own range: a quarter of minutes is no line a person reads


def health_events_per_minute() -> timeseries.Panel:
    return (_time_series("Events per minute by server",
                         f"Is every server sending? A line that drops to nothing is a server gone silent. "
                         f"Always the last {MINUTES_SHOWN}; the hourly panel covers the dashboard's range.",
                         "stats-by-minute")
            .time_from(MINUTES_SHOWN)
            .with_transformation(_split_group_key())
            .with_transformation(_as_time("minute"))
            .with_transformation(_hide_id())
            .with_transformation(_line_per_server())
            .span(24).height(8))


def health_events_per_hour() -> timeseries.Panel:
    # the hours' documents as stored, summed here by hour and server (an hour an import counts too has
    # a document of each): FerretDB 1.24's $group takes time in the rows times the groups, 6 s for a
    # quarter of 5 servers' hours (10,800 groups), its plain read 0.4 s (docs/store.md)
    return (_time_series("Events per hour by server",
                         "Every server's events per hour over the dashboard's range, imported history "
                         "included: a quarter is a few thousand points.", "hours-by-server")
            .with_transformation(gmodel.DataTransformerConfig(id_val="groupBy", options={"fields": {
                "window_start": {"operation": "groupby", "aggregations": []},
                "server": {"operation": "groupby", "aggregations": []},
                "count": {"operation": "aggregate", "aggregations": ["sum"]}}}))
            .with_transformation(_as_time("window_start"))
            .with_transformation(_line_per_server())
            .span(24).height(8))


def health_last_event_per_server() -> table.Panel:
    return (_list_table("Last event per server (audit silence)",
                        "Audit silence: how long ago each server's newest event was. Not limited to the time range: a "
                        "server silent for days still shows.", "servers-last-event", width=12)
            .unit("dateTimeFromNow"))


def health_dead_letters() -> table.Panel:
    return _grouped_table("Dead letters by reason",
                          "Records the pipeline could not store, by stage and reason (docs/bad-input.md).",
                          "dead-letters-by-reason")


def health_alerts_by_rule() -> table.Panel:
    return _grouped_table("Alerts by rule", "Alerts raised by the job's rules (docs/alerts.md).", "alerts-by-rule")


def health_kafka_lag() -> timeseries.Panel:
    return (_time_series("Kafka lag",
                         "Is the job keeping up? Records on audit.raw not yet covered by a checkpoint; "
                         "it should fall back to near zero after every burst (not per server).", "kafka-lag")
            .unit("short")
            .span(12).height(8))


def health_dashboard() -> gdash.Dashboard:
    return (_dashboard("auditpipe-pipeline-health", "auditpipe: pipeline health",
                       "Is the pipeline receiving, storing and alerting? (docs/dashboards.md)", ["health"])
            .with_panel(health_events_per_minute()).with_panel(health_events_per_hour())
            .with_panel(health_last_event_per_server())
            .with_panel(health_kafka_lag()).with_panel(health_dead_letters()).with_panel(health_alerts_by_rule()))


DASHBOARDS = {"pci-dss-10": pci_dashboard, "hipaa-164-312b": hipaa_dashboard, "sox-itgc": sox_dashboard,
              "pipeline-health": health_dashboard}


def render() -> dict[str, str]:
    """Each dashboard's file name and JSON, as written to dashboards/grafana/."""
    return {f"{name}.json": json.dumps(build().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
            for name, build in DASHBOARDS.items()}


def stale(out_dir: Path = OUT_DIR) -> list[str]:
    """The committed dashboard files that differ from what the code generates (or are missing)."""
    return [name for name, text_ in render().items()
            if not (out_dir / name).is_file() or (out_dir / name).read_text() != text_]


def write(out_dir: Path = OUT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text_ in render().items():
        (out_dir / name).write_text(text_)
        written.append(out_dir / name)
    return written


def panel_targets(dashboard_json: dict) -> list[tuple[str, dict]]:
    """(panel title, target) of every panel target in a dashboard's JSON."""
    return [(p.get("title", ""), t) for p in dashboard_json.get("panels", []) for t in p.get("targets", [])]


def panel_ranges(dashboard_json: dict) -> dict[str, timedelta]:
    """The panels that show a range of their own (Grafana's relative time, `timeFrom`: the last N
    hours whatever the dashboard's range), by title."""
    units = {"m": "minutes", "h": "hours", "d": "days"}
    return {p.get("title", ""): timedelta(**{units[p["timeFrom"][-1]]: int(p["timeFrom"][:-1])})
            for p in dashboard_json.get("panels", []) if p.get("timeFrom")}


def panel_range(dashboard_json: dict, title: str, since: datetime, until: datetime) -> tuple[datetime, datetime]:
    """The range a panel queries when the dashboard shows since..until (until is the dashboard's now)."""
    own = panel_ranges(dashboard_json).get(title)
    return (max(since, until - own), until) if own else (since, until)
