"""The job's contract (schemas/job-contract.json, printed by the job, kept current by its
JobContractTest) against what the CLI, the config schema, the docs and the test oracle say."""

from __future__ import annotations

import csv
import json
import re

from auditpipe import config, contract, paths
from auditpipe.cli import build_parser
from auditpipe.stack import limits


def test_the_cli_offers_the_jobs_rules_and_severities():
    alerts = build_parser()._subparsers._group_actions[0].choices["alerts"]
    options = {a.dest: a for a in alerts._actions}
    assert tuple(options["rule"].choices) == contract.alert_rules()
    assert tuple(options["severity"].choices) == contract.alert_severities()
    assert len(contract.alert_rules()) == 14


def test_the_alert_schema_names_the_jobs_rules_severities_and_gap_classes():
    props = json.loads((paths.SCHEMAS / "alert.schema.json").read_text())["properties"]
    assert tuple(props["rule"]["enum"]) == contract.alert_rules()
    assert tuple(props["severity"]["enum"]) == contract.alert_severities()
    assert tuple(props["gap_class"]["enum"]) == tuple(contract.record_gap_classes())
    gap_rule = next(r for r in contract.contract()["alert_rules"] if r["rule"] == contract.rule("record_gap"))
    assert set(gap_rule["severities"]) == set(contract.record_gap_classes().values())


def test_every_control_a_rule_names_is_in_the_control_mapping():
    known = {r["control"] for r in csv.DictReader((paths.SCHEMAS / "compliance-controls.csv").read_text().splitlines())}
    for rule in contract.contract()["alert_rules"]:
        # integrity is about the stored evidence itself (PCI DSS 10.3.2, 10.3.4), review_overdue about the review
        # (10.4.1): no event control covers either
        assert (rule["controls"] or rule["rule"] in (contract.rule("integrity"), contract.rule("review_overdue"))) \
            and set(rule["controls"]) <= known, rule


def test_docs_alerts_describe_every_rule_with_its_severities():
    doc = (paths.REPO / "docs" / "alerts.md").read_text()
    for rule in contract.contract()["alert_rules"]:
        row = re.search(rf"^\| `{rule['rule']}` \| ([^|]+) \|", doc, re.M)
        assert row, f"docs/alerts.md has no row for {rule['rule']}"
        for severity in rule["severities"]:
            assert severity in row.group(1), (rule["rule"], severity)
        line = doc[row.start():doc.index("\n", row.start())]
        assert line.rstrip().endswith(f"| {', '.join(rule['controls'])} |"), (rule["rule"], "its controls, last")


def test_the_config_schemas_data_classes_are_the_jobs():
    schema = json.loads((paths.SCHEMAS / "config.schema.json").read_text())
    classes = schema["properties"]["compliance"]["properties"]["data_classes"]["properties"]
    assert tuple(classes) == contract.data_classes()


def test_the_size_limits_the_cli_derives_fit_the_jobs():
    assert limits.DEAD_LETTER_TEXT_COPY == contract.limit("dead_letter_text_excerpt_bytes")
    longest = limits.Limits(config.MAX_OF_MAX_LINE)
    assert longest.dead_letter_message_bytes <= contract.limit("store_max_dead_letter_bytes"), \
        "a dead letter of the longest line fits a store document"
    shortest = limits.Limits(config.size_bytes("1k"))
    assert shortest.dead_letter_message_bytes >= contract.limit("dead_letter_min_message_bytes")


def test_the_test_oracle_knows_the_events_fields():
    from helpers import oracle

    schema = json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text())["properties"]
    assert tuple(oracle.ENRICHMENT_FIELDS) == contract.event_fields("enrichment_fields")
    assert set(oracle.ENRICHMENT_FIELDS) <= set(schema)
    line = (b'{"audit_record":{"name":"Query","record":"7_2026-11-22T09:00:00","timestamp":"2026-11-22T10:00:00 UTC",'
            b'"command_class":"select","connection_id":"5","status":0,"sqltext":"SELECT 1",'
            b'"user":"app[app] @ web [10.0.0.1]","host":"web","os_user":"","ip":"10.0.0.1","db":"shop"}}')
    doc = oracle.expected_document("db-01", paths.REPO / "audit.log", "rsyslog", line)
    assert set(doc) <= set(schema), set(doc) - set(schema)


def test_the_cli_names_a_rule_only_through_the_contract():
    """A rule's name in the CLI's code is always contract.rule("..."), which fails for a name the job
    does not have; no bare string spells one."""
    import ast

    rules = set(contract.alert_rules())
    bare = []
    for f in (paths.REPO / "cli" / "auditpipe").rglob("*.py"):
        tree = ast.parse(f.read_text())
        checked = {id(call.args[0]) for call in ast.walk(tree) if isinstance(call, ast.Call)
                   and isinstance(call.func, ast.Attribute) and call.func.attr == "rule" and call.args}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in rules and id(node) not in checked:
                bare.append(f"{f.relative_to(paths.REPO)}:{node.lineno}: {node.value}")
    assert bare == []
    import pytest

    with pytest.raises(KeyError):
        contract.rule("brute_forse")
