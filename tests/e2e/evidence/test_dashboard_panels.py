"""The Grafana dashboards' panels against the real store (docs/dashboards.md): a fixed-seed run
with the simulator's incidents goes through the real stack; then every panel of every committed
dashboard runs its query text with the data source's macros expanded the way the plugin expands
them ($__from, $__to as epoch milliseconds, ${server:json} as a JSON array), parsed as extended
JSON like the plugin's backend does. Each panel must give exactly what `auditpipe query` gives for
the same catalog query and parameters, and the panels with known answers must show them: failed
logins, events per minute, alerts by rule, the server's last event, and each incident's panel.
Grafana itself cannot be installed here: what Grafana does with the rows (its transformations) is
checked on the rows' shape, a JSON group key per row, the way the plugin turns an embedded
document into a column."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from bson import json_util

from auditpipe import contract
from auditpipe.evidence import dashboards, query, tiers
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-dashboards"
EJSON = json_util.JSONOptions(tz_aware=True, tzinfo=timezone.utc)


def percona_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S UTC").replace(tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def scenario(stack):
    # a minute of traffic: the record_gap alert comes once the watermark passes the missing record plus 30 s
    m = simulate(stack.log_path(SERVER), rate=100, duration=60, speedup=10, seed=29, rotate_on_size=0,
                 failed_login_burst=6, incidents=True)
    append_schema_changes(stack.log_path(SERVER), m)
    stack.assert_stored_and_counted_exactly_once(SERVER, m)
    db = stack.db()
    alerts = db[stack.cfg.store["alerts_collection"]]
    expected = sorted(a["rule"] for a in m.expected_alerts)
    stack.wait_for("the incidents' alerts", lambda: (
        sorted(a["rule"] for a in alerts.find({"server": SERVER})) == expected,
        [a["rule"] for a in alerts.find({"server": SERVER})]), timeout=150)
    stack.wait_for("the one-minute counts of every event", lambda: ((n := stack.stats_total(SERVER)) == m.records, n),
                   timeout=120)
    servers = db[stack.cfg.store["servers_collection"]]
    stack.wait_for("the server's entry at its last event", lambda: (
        (d := servers.find_one({"_id": SERVER})) is not None and d["last_seq"] == m.records, d), timeout=150)
    # the day's rollups count every event that evidences a control or that an administrator did
    counted = db[stack.cfg.store["events_collection"]].count_documents(
        {"server": SERVER, "$or": [{"controls.0": {"$exists": True}}, {"principal_class": "administrator"}]})
    rollups = db[stack.cfg.store["rollups_collection"]]
    stack.wait_for("the rollups of every counted event", lambda: (
        (n := sum(r["events"] for r in rollups.find({"server": SERVER}))) == counted and n > 0, n), timeout=60)
    # from the start of an hour: the hourly panel takes the hours that begin in its range
    since = (percona_time(m.first_event_time) - timedelta(minutes=5)).replace(minute=0, second=0, microsecond=0)
    until = percona_time(m.last_event_time) + timedelta(minutes=5)
    stack.wait_for("the hours summed from the minutes", lambda: (
        (n := sum(h["count"] for h in db[stack.cfg.store["stats_hourly_collection"]].find({"server": SERVER})))
        == stack.stats_total(SERVER), n), timeout=60)
    return m, since, until


DDL = ["CREATE TABLE sbtest.report_tmp (id INT PRIMARY KEY)", "DROP TABLE sbtest.report_tmp"]


def append_schema_changes(log, m) -> None:
    """The simulator writes no DDL: two schema changes (on an unclassified table, so no alert),
    continuing the record sequence, for in_change_window."""
    seq, start = m.last_record.split("_", 1)
    t = percona_time(m.last_event_time)
    with open(log, "a") as f:
        for i, sql in enumerate(DDL, start=1):
            f.write(json.dumps({"audit_record": {
                "name": "Query", "record": f"{int(seq) + i}_{start}", "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S UTC"),
                "command_class": sql.split()[0].lower() + "_table", "status": 0, "sqltext": sql, "connection_id": "1001",
                "user": "dba_bob[dba_bob] @ bastion [10.0.9.9]", "host": "bastion", "os_user": "", "ip": "10.0.9.9",
                "db": "sbtest"}}) + "\n")
    m.records += len(DDL)
    m.last_record = f"{int(seq) + len(DDL)}_{start}"


def run_panel(stack, target: dict, since: datetime, until: datetime) -> list[dict]:
    return stack.run_panel(target, since, until, [SERVER])


@pytest.fixture(scope="module")
def shown(stack, scenario) -> dict[str, tuple[dict, list[dict]]]:
    """Every panel's target and rows, run once (each query is a scan of the whole collection on FerretDB)."""
    _, since, until = scenario
    out = {}
    for p in (dashboards.OUT_DIR).glob("*.json"):
        d = json.loads(p.read_text())
        for title, t in dashboards.panel_targets(d):
            out[f"{p.stem}: {title}"] = (t, run_panel(stack, t, *dashboards.panel_range(d, title, since, until)))
    return out


def as_text(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def test_every_panel_answers_what_auditpipe_query_answers(stack, scenario, shown):
    """The panels' texts are the catalog's pipelines bound to the same values (unit-tested, every
    panel); here a sample is run both ways on the store, so the macros' expansion is checked against
    real documents (dates, the server list) without scanning the store twice for every panel. The
    evidence panels read the evidence collection, and answer what the events collection answers."""
    _, since, until = scenario
    assert len(shown) >= 19
    sample = ["pci-dss-10: Invalid logical access attempts", "pipeline-health: Events per minute by server",
              "pipeline-health: Events per hour by server",
              "pipeline-health: Last event per server (audit silence)", "sox-itgc: Account and privilege changes",
              "hipaa-164-312b: ePHI access by user"]
    for title in sample:
        t, rows = shown[title]
        same = tiers.run_saved(stack.cfg, t["auditpipeQuery"], since.isoformat(), until.isoformat(), servers=[SERVER],
                               params=t["auditpipeParams"], tier="store")
        assert as_text(rows) == as_text(same), title  # the same rows; ties in either order
    evidence = dashboards.default_collections()["evidence"]
    on_evidence = {title for title, (t, _) in shown.items() if t["collection"] == evidence}
    assert len(on_evidence) >= 10 and {title for title in sample if query.evidence_kind(shown[title][0]["auditpipeQuery"])
                                       } <= on_evidence
    assert all(shown[title][1] for title in sample), "each sampled panel shows the scenario's rows"
    for _title, (_t, rows) in shown.items():
        for r in rows:  # the plugin makes an embedded group key one JSON column; extractFields splits it
            if isinstance(r.get("_id"), dict):
                assert json.loads(json.dumps(r["_id"], default=str)).keys() == r["_id"].keys()


def test_each_rollup_form_gives_its_events_forms_rows_over_whole_days(stack, scenario):
    """docs/queries.md "Rollups": over the UTC days that hold the scenario, a query's rollup form (the
    daily counts the job writes) answers what its events form answers from the stored events."""
    _, since, until = scenario
    first_day = since.replace(hour=0, minute=0, second=0, microsecond=0)
    last_day = until.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    controls = {c for d in stack.db()[stack.cfg.store["events_collection"]].find({"server": SERVER}, {"controls": 1})
                for c in d.get("controls", [])}
    assert {"PCI-DSS-10.2.1.2", "PCI-DSS-10.2.1.4", "SOX-ITGC-ACCESS"} <= controls, controls
    compared = 0
    for name, q in query.saved_queries().items():
        if "rollup" not in q:
            continue
        used = query.params_used(q["pipeline"])
        for params in ([{"control": c} for c in sorted(controls)] if "control" in used
                       else [{"controls": sorted(controls)}] if "controls" in used else [{}]):
            bound = {**params, "since": since, "until": until, "servers": [SERVER]}
            from_rollups = query.run_pipeline(stack.cfg, "rollups", query.bind(q["rollup"], bound))
            from_events = query.run_pipeline(stack.cfg, "events", query.bind(
                q["pipeline"], {**bound, "since": first_day, "until": last_day}))
            assert as_text(from_rollups) == as_text(from_events), (name, params)
            compared += bool(from_events)
    assert compared >= len(controls), compared


def test_the_evidence_collection_holds_exactly_the_evidence_events(stack, scenario):
    """The job writes every stored event of an evidence kind (the contract's conditions) to the evidence
    collection too, the same document, and no other event."""
    db = stack.db()
    kinds = contract.evidence_kinds()
    stored = {d["_id"]: d for d in db[stack.cfg.store["events_collection"]].find(
        {"server": SERVER, "$or": list(kinds.values())})}
    evidence = db[stack.cfg.store["evidence_collection"]]
    kept = stack.wait_for("the evidence of every kind", lambda: (
        len(r := {d["_id"]: d for d in evidence.find({"server": SERVER})}) >= len(stored), r), timeout=60)
    assert kept.keys() == stored.keys() and kept == stored
    for kind, condition in kinds.items():
        assert evidence.count_documents({"server": SERVER, **condition}) > 0, kind


def test_the_panels_show_the_scenarios_known_answers(stack, scenario, shown):
    m, _, _ = scenario
    shown = {title: rows for title, (_, rows) in shown.items()}
    assert sum(r["attempts"] for r in shown["pci-dss-10: Invalid logical access attempts"]) == m.failed_logins
    per_minute = shown["pipeline-health: Events per minute by server"]
    assert sum(r["events"] for r in per_minute) == m.records
    assert {r["_id"]["server"] for r in per_minute} == {SERVER}
    assert all(isinstance(r["_id"]["minute"], datetime) for r in per_minute)  # convertFieldType makes it the time
    per_hour = shown["pipeline-health: Events per hour by server"]  # the documents, summed by the panel
    assert sum(r["count"] for r in per_hour) == m.records and {r["server"] for r in per_hour} == {SERVER}
    by_rule = Counter()
    for r in shown["pipeline-health: Alerts by rule"]:
        by_rule[r["_id"]["rule"]] += r["alerts"]
    assert by_rule == Counter(a["rule"] for a in m.expected_alerts)
    (last,) = shown["pipeline-health: Last event per server (audit silence)"]
    assert last["server"] == SERVER and last["last_seq"] == m.records
    assert last["last_event_time"].replace(tzinfo=timezone.utc) == percona_time(m.last_event_time)
    # the incidents: a privilege escalation, the audit log turned off, a service account reading patient data
    assert shown["pci-dss-10: Identification and authentication changes"]
    assert shown["sox-itgc: Account and privilege changes"] == shown["pci-dss-10: Identification and authentication changes"]
    assert shown["pci-dss-10: Audit logs started, stopped or paused"]
    assert any(r["_id"]["user"] == "batch" for r in shown["hipaa-164-312b: ePHI access by user"])
    assert any(r["_id"]["user"] == "batch" for r in shown["hipaa-164-312b: Access by principals not allowed for the class"])
    assert shown["hipaa-164-312b: ePHI access by table"]


def test_the_server_variable_lists_the_server(stack, scenario):
    d = json.loads((dashboards.OUT_DIR / "pipeline-health.json").read_text())
    (var,) = [v for v in d["templating"]["list"] if v["name"] == "server"]
    pipeline = json_util.loads(var["query"]["queryText"], json_options=EJSON)
    rows = query.run_pipeline(stack.cfg, "servers", pipeline)
    # the plugin's variable query reads `value` (and `text`, absent here, falls back to it)
    assert SERVER in [r["value"] for r in rows]
    assert all(isinstance(r["value"], str) for r in rows)


def business_hours(t: datetime) -> bool:
    """tests/helpers/stack.py's compliance.business_hours, mon-fri 08:00-18:00 Europe/Berlin, written here from the config."""
    from zoneinfo import ZoneInfo

    local = t.astimezone(ZoneInfo("Europe/Berlin"))
    return local.weekday() < 5 and 8 <= local.hour < 18


def change_window(t: datetime) -> bool:
    """tests/helpers/stack.py's compliance.change_windows, sat and sun 02:00-06:00 UTC."""
    t = t.astimezone(timezone.utc)
    return t.weekday() >= 5 and 2 <= t.hour < 6


def test_time_of_day_fields_and_their_panels(stack, scenario, shown):
    """The job answers the time-of-day questions FerretDB cannot ask ($hour): after_hours on access to
    classified data, in_change_window on schema changes; checked on every stored event of the run
    against the configured windows, and the after-hours panel against them."""
    events = stack.db()[stack.cfg.store["events_collection"]]
    ephi_after_hours = 0
    schema_changes = classified = 0
    for d in events.find({"server": SERVER}, {"event_time": 1, "data_classes": 1, "category": 1, "after_hours": 1,
                                               "in_change_window": 1}):
        t = d["event_time"].replace(tzinfo=timezone.utc)
        if d.get("data_classes"):
            classified += 1
            assert d.get("after_hours") is (not business_hours(t)), d
            ephi_after_hours += "hipaa_ephi" in d["data_classes"] and not business_hours(t)
        else:
            assert "after_hours" not in d, d
        if d.get("category") == "schema_change":
            schema_changes += 1
            assert d.get("in_change_window") is change_window(t), d
        else:
            assert "in_change_window" not in d, d
    assert classified and schema_changes
    _, rows = shown["hipaa-164-312b: After-hours ePHI access"]
    assert sum(r["events"] for r in rows) == ephi_after_hours


def test_the_kafka_lag_panel_shows_the_jobs_own_samples(stack, scenario, shown):
    """The job samples its consumer lag every kafka.lag-interval (15 s) into the store: the panel
    shows them in time order, and once the job has committed every record (`auditpipe status`'s
    figure is 0), the next sample says 0 with the topic's end offsets."""
    from auditpipe.stack.flink.job_settings import job_group_id
    from auditpipe.stack.kafka import topics

    _, rows = shown["pipeline-health: Kafka lag"]
    assert rows, "no lag sample in the scenario's range: the job's kafka-lag reporter wrote none"
    assert [r["at"] for r in rows] == sorted(r["at"] for r in rows)
    assert all(set(r) == {"at", "lag"} and r["lag"] >= 0 for r in rows), rows[:5]
    topic = topics.topic_name("raw")
    stack.wait_for("the job's committed offsets at the topic's end", lambda: (
        (lag := topics.consumer_lag(stack.cfg.kafka_client, topic, job_group_id())) == 0, lag), timeout=120)
    ends = topics.end_offsets(stack.cfg.kafka_client, topic)
    caught_up = datetime.now(timezone.utc)
    samples = stack.db()[stack.cfg.store["kafka_lag_collection"]]
    stack.wait_for("a lag sample taken after that", lambda: (
        (d := samples.find_one({"at": {"$gt": caught_up}})) is not None, d), timeout=60)
    d = samples.find_one({"at": {"$gt": caught_up}})
    assert d["topic"] == topic and d["group"] == job_group_id()
    assert d["lag"] == 0 and {p["partition"]: p["end"] for p in d["partitions"]} == ends, d
