"""Saved queries: parameters, time parsing, table output. (They run against the real store in e2e.)"""

import re
from datetime import datetime, timedelta, timezone

import pytest

from auditpipe.errors import UserError
from auditpipe.evidence import query, tiers

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def test_relative_and_absolute_times():
    assert query.parse_time("15m", query.EPOCH, NOW) == NOW - timedelta(minutes=15)
    assert query.parse_time("7d", query.EPOCH, NOW) == NOW - timedelta(days=7)
    assert query.parse_time("2026-11-22T10:00:00Z", query.EPOCH) == datetime(2026, 11, 22, 10, tzinfo=timezone.utc)
    assert query.parse_time("2026-11-22T10:00:00", query.EPOCH).tzinfo == timezone.utc
    assert query.parse_time(None, query.EPOCH) == query.EPOCH
    with pytest.raises(UserError, match="neither a duration"):
        query.parse_time("yesterday", query.EPOCH)


def test_bind_replaces_params_everywhere():
    p = [{"$match": {"t": {"$gte": {"$param": "since"}}, "x": [{"$param": "until"}]}}]
    assert query.bind(p, {"since": 1, "until": 2}) == [{"$match": {"t": {"$gte": 1}, "x": [2]}}]
    with pytest.raises(UserError, match="parameter 'since'"):
        query.bind(p, {})


def test_every_saved_query_names_a_known_collection_and_binds():
    saved = query.saved_queries()
    assert {"events-by-name", "failed-statements", "failed-logins"} <= set(saved)
    for name, q in saved.items():
        assert q["collection"] in query.COLLECTION_ROLES, name
        assert q["description"], name
        bound = query.bind(q["pipeline"], {"since": query.EPOCH, "until": query.FAR_FUTURE,
                                           "control": "PCI-DSS-10.2.1.4", "controls": ["PCI-DSS-10.2.1.4"]})
        assert "$param" not in repr(bound), name


def test_bad_pipelines_are_user_errors():
    with pytest.raises(UserError, match="not valid JSON"):
        query.parse_pipeline_json("[{")


def test_table_flattens_group_ids():
    rows = [{"_id": {"user": "app", "host": "h"}, "attempts": 3, "first": NOW}]
    text = query.format_table(rows)
    header = text.splitlines()[0].split()
    assert header == ["user", "host", "attempts", "first"]
    assert "2026-11-22 12:00:00" in text
    assert query.format_table([]) == "(no rows)"


@pytest.mark.parametrize("pipeline", [
    [{"$match": {}}, {"$out": "audit_stats_1m"}],
    [{"$merge": {"into": "dead_letters"}}],
    [{"$facet": {"a": [{"$match": {}}], "b": [{"$out": "x"}]}}],
    [{"$unionWith": {"coll": "audit_events", "pipeline": [{"$merge": "dead_letters"}]}}],
])
def test_queries_cannot_write_into_the_store(pipeline):
    with pytest.raises(UserError, match=r"queries only read: \$(out|merge) would write into the store"):
        query.run_pipeline(None, "events", pipeline)  # refused before any connection


@pytest.mark.parametrize("pipeline", [
    [{"$match": {"$where": "sleep(100000) || true"}}],
    [{"$project": {"x": {"$function": {"body": "function() {}", "args": [], "lang": "js"}}}}],
    [{"$group": {"_id": None, "x": {"$accumulator": {"init": "function() {}", "lang": "js"}}}}],
    [{"$lookup": {"from": "alerts", "pipeline": [{"$match": {"$where": "true"}}], "as": "a"}}],
])
def test_queries_run_no_javascript(pipeline):
    with pytest.raises(UserError, match=r"queries run no code: \$(where|function|accumulator) would run JavaScript"):
        query.run_pipeline(None, "events", pipeline)  # refused before any connection


def test_credentials_are_redacted_wherever_a_uri_is_printed(tmp_path):
    from auditpipe import config
    from auditpipe.stack.components.store import LocalStore

    assert config.redact_uri("mongodb://auditor:s3cr%40t@db.example:27017/?authSource=admin") == \
        "mongodb://auditor:***@db.example:27017/?authSource=admin"
    assert config.redact_uri("failed: mongodb+srv://a:b@c.example/x") == "failed: mongodb+srv://a:***@c.example/x"
    assert config.redact_uri("mongodb://db.example:27017/") == "mongodb://db.example:27017/"
    # a password with an unencoded '/' or '@' is still hidden whole; so are the options that hold secrets
    assert config.redact_uri("mongodb://u:pa/ss@h:1/db") == "mongodb://u:***@h:1/db"
    assert config.redact_uri("mongodb://u:p@ss@h/") == "mongodb://u:***@h/"
    assert config.redact_uri("mongodb://h/?tlsCertificateKeyFilePassword=k3y&authSource=admin") == \
        "mongodb://h/?tlsCertificateKeyFilePassword=***&authSource=admin"
    assert config.redact_uri("x mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN:abc y") == \
        "x mongodb://h/?authMechanismProperties=*** y"
    f = tmp_path / "auditpipe.yaml"
    f.write_text("store:\n  uri: mongodb://auditor:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=200\n")
    row = LocalStore(config.load(f)).status()
    assert "hunter2" not in f"{row.endpoint} {row.detail}" and "auditor:***@" in row.endpoint


def test_an_optional_parameter_not_given_removes_its_condition():
    declared = {"since": {"kind": "time"}, "servers": {"kind": "list", "optional": True}}
    p = [{"$match": {"t": {"$gte": {"$param": "since"}}, "server": {"$in": {"$param": "servers"}}}},
         {"$group": {"_id": "$server", "n": {"$sum": 1}}}]
    assert query.bind(p, {"since": 1}, declared) == [{"$match": {"t": {"$gte": 1}}},
                                                    {"$group": {"_id": "$server", "n": {"$sum": 1}}}]
    assert query.bind(p, {"since": 1, "servers": ["a"]}, declared)[0] == {
        "$match": {"t": {"$gte": 1}, "server": {"$in": ["a"]}}}
    with pytest.raises(UserError, match="parameter 'since'"):
        query.bind(p, {"servers": ["a"]}, declared)


def test_every_saved_query_takes_the_servers_and_declares_its_parameters():
    declared = query.parameters()
    for name, q in query.saved_queries().items():
        used = set(re.findall(r"'\$param': '([a-z_]+)'", repr(q["pipeline"])))
        assert used <= set(declared), (name, used - set(declared))
        assert used == query.params_used(q["pipeline"]), name
        if q["collection"] in query.SERVERLESS_COLLECTIONS:
            assert "servers" not in used, name
        else:
            assert "servers" in used, f"{name}: every figure can be narrowed to servers"
        bound = query.bind(q["pipeline"], {"since": query.EPOCH, "until": query.FAR_FUTURE, "servers": ["x"],
                                           "control": "PCI-DSS-10.2.1.4", "controls": ["PCI-DSS-10.2.1.4"]})
        assert "$param" not in repr(bound), name


def test_params_from_the_command_line_are_checked():
    assert query.parse_params(["control=PCI-DSS-10.2.1.1"]) == {"control": "PCI-DSS-10.2.1.1"}
    with pytest.raises(UserError, match="no such parameter; the catalog's: since"):
        query.parse_params(["colour=red"])
    with pytest.raises(UserError, match="name=value"):
        query.parse_params(["control"])
    with pytest.raises(UserError, match="own option"):
        query.parse_params(["servers=a"])
    # a list as the reports print it under a table: comma-separated
    assert query.parse_params(["rules=brute_force,password_spray"]) == {"rules": ["brute_force", "password_spray"]}
    with pytest.raises(UserError, match="one or more values"):
        query.parse_params(["controls="])


def test_on_mongodb_every_saved_query_on_a_large_collection_starts_with_an_indexed_filter():
    """QUERY_INDEXES (MongoDB only, docs/queries.md "Indexes"): each catalog query's first $match on
    events, stats or alerts holds every field of an index that begins with an equality field and
    ends with the time range, so a planner can use it. A new query filtering on no indexed prefix fails here."""
    from auditpipe.store.collections import BASE_INDEXES, QUERY_INDEXES

    by_collection: dict[str, list[list[str]]] = {}
    for role, key, _name in BASE_INDEXES + QUERY_INDEXES:
        by_collection.setdefault(role, []).append([field for field, _ in key])
    for name, q in query.saved_queries().items():
        role = query.COLLECTION_ROLES[q["collection"]]
        if q["collection"] == "servers":  # one document per server
            continue
        first = q["pipeline"][0].get("$match")
        assert isinstance(first, dict), f"{name}: the pipeline does not start with $match"
        # a collection without servers (kafka_lag) needs only its time field indexed
        usable = [key for key in by_collection[role]
                  if (len(key) > 1 or "server" not in first) and all(f in first for f in key)]
        assert usable, f"{name}: its $match {sorted(first)} covers no compound index of {role}"


def test_a_query_not_per_server_refuses_server(tmp_path):
    from auditpipe.config import Config

    with pytest.raises(UserError, match="'kafka-lag' is not per server"):
        tiers.run_saved(Config(data={}, file=tmp_path / "auditpipe.yaml"), "kafka-lag", servers=["db-1"])


def test_a_rollup_form_gives_the_rows_of_its_events_form():
    """A query's rollup form (docs/queries.md "Rollups") groups, sums and sorts as its events form does,
    over the rollups' day bounds instead of event_time, with the same other conditions; and it only
    asks about events the rollups count (those evidencing a control, and what administrators do)."""
    forms = {n: q for n, q in query.saved_queries().items() if "rollup" in q}
    assert {"events-for-control", "privileged-activity"} <= set(forms)
    for name, q in forms.items():
        events, rollup = q["pipeline"], q["rollup"]
        assert q["collection"] == "events" and len(events) == len(rollup), name
        e_match, r_match = dict(events[0]["$match"]), dict(rollup[0]["$match"])
        assert e_match.pop("event_time") == {"$gte": {"$param": "since"}, "$lt": {"$param": "until"}}, name
        assert r_match.pop("day_end") == {"$gt": {"$param": "since"}} and r_match.pop("day") == {"$lt": {"$param": "until"}}
        assert e_match == r_match, name
        assert "controls" in e_match or e_match.get("principal_class") == "administrator", name
        assert set(e_match) <= {"server", "user", "principal_class", "category", "action", "controls"}, name
        for e_stage, r_stage in zip(events[1:], rollup[1:]):
            if "$group" in e_stage:
                e_group, r_group = dict(e_stage["$group"]), dict(r_stage["$group"])
                assert e_group.pop("_id") == r_group.pop("_id"), name
                assert all(v == {"$sum": 1} for v in e_group.values()) and r_group == {k: {"$sum": "$events"} for k in e_group}
                assert set(e_stage["$group"]["_id"].values()) <= {"$user", "$principal_class", "$category", "$action"}
            else:
                assert e_stage == r_stage, name
