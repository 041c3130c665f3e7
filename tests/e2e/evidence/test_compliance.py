"""Compliance enrichment and alerts end to end: the simulator's incidents (a brute force, a password
spray, a privilege escalation, card numbers in statements, a service account reading PHI, the audit
log turned off, a record deleted from the log) go through the real collector, Kafka, job and store. Each raises exactly its alert,
once; the clean traffic around them raises none; and no card number, nor the password the GRANT
sets, is kept anywhere: not in the events, the dead letters, the alerts, nor on the dead-letter and
alert topics. Gaps in a server's record numbers are classified: a restart, records that became dead
letters, records simply missing."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter

import pytest

from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

# a malformed record carrying a card number: its dead letter must not keep it either
BAD_LINE_WITH_PAN = b'{"audit_record":{"name":"Query","record":"1_x","sqltext":"INSERT INTO cards VALUES (\'4111-1111-1111-1111\')"'  # noqa: E501


def pan_forms(pan: str) -> set[str]:
    digits = "".join(c for c in pan if c.isdigit())
    return {pan, digits, pan.replace(" ", "-"), pan.replace("-", " ")}


def test_incidents_raise_exactly_their_alerts_and_no_card_number_is_kept(stack):
    server = "e2e-compliance"
    m = simulate(stack.log_path(server), rate=150, duration=60, speedup=10, seed=7, rotate_on_size=1024 * 1024,
                 rotations=3, failed_login_burst=12, malformed=1, bad_lines=[BAD_LINE_WITH_PAN], incidents=True)
    expected = sorted((a["rule"], a["subject"]) for a in m.expected_alerts)
    assert [r for r, _ in expected] == sorted(["brute_force", "password_spray", "account_change",
                                               "unauthorized_data_access", "audit_stopped", "record_gap", "record_gap"])

    stack.assert_stored_and_counted_exactly_once(server, m)  # field by field, masked as docs/compliance.md says
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]

    def raised():
        return sorted((a["rule"], a["subject"]) for a in alerts.find({"server": server}))

    # each one, counted: the sequence's start and the deleted record are both record_gap of one sequence, and
    # the deleted record's comes record_gap.grace of event time after the start's
    stack.wait_for("the incidents' alerts", lambda: (not Counter(expected) - Counter(got := raised()), got),
                   timeout=120)
    # every event is stored and the expected alerts are in; an alert the clean traffic raised would be too
    assert raised() == expected, "each incident's alert once, and nothing from the clean traffic"
    # the sequence's start (its plugin start record, number 1) is a record_gap too, classified restart
    by_rule = {a["rule"]: a for a in alerts.find({"server": server}) if a.get("gap_class") != "restart"}
    (start,) = alerts.find({"server": server, "gap_class": "restart"})
    assert (start["severity"], start["_id"]) == ("low", f"record_gap/{server}/{m.log_start}/0"), start
    jsonschema_alerts = [start]
    import jsonschema

    from auditpipe import paths

    schema = json.loads((paths.SCHEMAS / "alert.schema.json").read_text())
    for a in [*by_rule.values(), *jsonschema_alerts]:
        jsonschema.validate(a, schema)
    assert by_rule["record_gap"]["_id"].endswith("/" + str(m.deleted_records[0])), by_rule["record_gap"]
    assert (by_rule["record_gap"]["gap_class"], by_rule["record_gap"]["severity"]) == ("unexplained", "high")
    # raised at the threshold, with its evidence; the burst's later failures are the same episode
    assert by_rule["brute_force"]["evidence_count"] == 5 and by_rule["brute_force"]["severity"] == "high"
    assert by_rule["audit_stopped"]["severity"] == "critical"
    assert "GRANT ALL PRIVILEGES" in by_rule["account_change"]["summary"]
    assert "hipaa_ephi" in by_rule["unauthorized_data_access"]["summary"]
    events = stack.db()[stack.cfg.store["events_collection"]]
    for a in by_rule.values():  # the evidence is there, and is what the rule says
        assert events.count_documents({"_id": {"$in": a["evidence"]}}) == len(a["evidence"]), a
    assert "PCI-DSS-10.2.1.5" in by_rule["account_change"]["controls"]
    # each alert carries the requirements its rule serves, as the CLI's reading of the tables says
    from auditpipe.evidence import frameworks

    for a in by_rule.values():
        assert a["frameworks"] == frameworks.of_subject(a["rule"]), a
    assert by_rule["password_spray"]["frameworks"]["mitre-attack"] == ["T1110.003"]

    # the GRANT's password: masked in the event (the statement kept), and nowhere in any form
    grant = events.find_one({"server": server, "_id": {"$in": by_rule["account_change"]["evidence"]}})
    assert grant["masked"] == ["credentials"] and "IDENTIFIED BY '*" in grant["sqltext"], grant["sqltext"]
    assert m.secrets and not any(p in by_rule["account_change"]["summary"] for p in m.secrets)

    # card numbers: masked where they were, and nowhere else in any form
    masked = list(events.find({"server": server, "masked": "pan"}))
    assert len(masked) == 3, [d.get("sqltext") for d in masked]
    assert all(d["tables"] == ["shop.cards"] and "PCI-DSS-10.2.1.1" in d["controls"] for d in masked)
    dead = stack.wait_for("the malformed line's dead letter", lambda: (len(d := stack.dead_letters(server)) == 1, d))
    assert dead[0]["masked"] == ["pan"] and dead[0]["original"]["length"] == len(BAD_LINE_WITH_PAN)
    assert "****-****-****-1111" in dead[0]["original"]["text"]
    kept = {
        "events": [json.dumps(d, default=str) for d in events.find({"server": server})],
        "dead letters": [json.dumps(d, default=str) for d in stack.dead_letters(server)],
        "alerts": [json.dumps(d, default=str) for d in alerts.find({"server": server})],
        "audit.deadletter": [json.dumps(v) for v in stack.topic_messages("deadletter")],
        "audit.alerts": [json.dumps(v) for v in stack.topic_messages("alerts")],
    }
    assert kept["audit.alerts"], "the alerts are published"
    pans = set().union(*(pan_forms(p) for p in m.card_numbers + ["4111-1111-1111-1111"]))
    for where, texts in kept.items():
        for text in texts:
            decoded = [text] + [base64.b64decode(b).decode("latin-1") for b in
                                re.findall(r'"base64": "([A-Za-z0-9+/=]*)"', text)]
            leaked = [p for p in pans for t in decoded if p in t]
            assert not leaked, f"card number {leaked[0]} kept in {where}: {text[:300]}"
            leaked = [p for p in m.secrets for t in decoded if p in t]
            assert not leaked, f"password {leaked[0]} kept in {where}: {text[:300]}"


def test_a_restart_and_a_dead_letter_are_classified_gaps_not_alarms(stack, tmp_path):
    server = "e2e-gaps"
    # a minute of traffic (the dead letter's gap comes once the watermark passes the record after it plus
    # the rule's 30 s grace), the server restarting half way; one record's line cut in half, its id legible
    made = tmp_path / "audit.log"
    m = simulate(made, rate=100, duration=60, speedup=1e6, seed=41, rotate_on_size=0, restart_at=0.5)
    lines = made.read_bytes().splitlines(keepends=True)
    broken = json.loads(lines[300])["audit_record"]["record"]
    lines[300] = lines[300][:len(lines[300]) // 2] + b"\n"
    assert broken.encode() in lines[300]
    log = stack.log_path(server)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"".join(lines))

    want = m.record_ids() - {broken}
    docs = stack.stored_documents(server, len(want))
    assert {d["record_id"] for d in docs} == want and len(docs) == len(want)
    stack.wait_for("the cut line's dead letter", lambda: (len(d := stack.dead_letters(server)) == 1, d))
    (dead,) = stack.dead_letters(server)
    first, second = m.log_starts()
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]

    def raised():
        return sorted((a["rule"], a.get("gap_class") or "", a["severity"], a["subject"])
                      for a in alerts.find({"server": server}))

    expected = sorted([("audit_stopped", "", "high", "(no user)"), ("record_gap", "restart", "low", first),
                       ("record_gap", "restart", "low", second), ("record_gap", "dead_letter", "medium", first)])
    assert sorted((a["rule"], a["subject"]) for a in m.expected_alerts) == sorted(
        (rule, subject) for rule, c, _, subject in expected if c != "dead_letter")
    stack.wait_for("the restarts' and the dead letter's classified gaps", lambda: ((got := raised()) == expected, got),
                   timeout=150)
    (gap,) = alerts.find({"server": server, "gap_class": "dead_letter"})
    number = int(broken.split("_")[0])
    assert gap["_id"] == f"record_gap/{server}/{first}/{number}" and dead["_id"] in gap["summary"], gap
    out = stack.cli("verify", "--server", server, check=False).stdout
    assert "(3, alert record_gap: 1 dead_letter, 2 restart)" in out, out
    assert f"SOURCE GAP {server} (dead_letter, medium): record {number} is missing" in out, out
