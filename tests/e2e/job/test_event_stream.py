"""The event stream (docs/stream.md) from the real job: a run with incidents through the collector, Kafka and
the job; a consumer reading committed messages gets each stored event once on each format's topic and each
alert once as an OCSF Detection Finding and an ECS alert; every OCSF message is valid against OCSF 1.8.0
(the schema ocsf-json-schema packages), every auditpipe message against schemas/audit-event.schema.json,
and no card number or password reaches a topic."""

from __future__ import annotations

import json
import time
from collections import Counter

import jsonschema
import pytest

from auditpipe import paths
from auditpipe.stack.kafka.stream import OcsfCheck, read_committed
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-stream"
ROLES = ("events", "ocsf", "ecs")


def test_each_stored_event_once_in_each_format_valid_and_masked(stack):
    # the messages are timed by their events, which the simulator times from a minute before now: read
    # from some minutes before that, not from the start of topics every earlier module's events went to
    since_ms = int((time.time() - 60 - 300) * 1000)
    # the incidents' alerts all come within a minute of event time (as tests/e2e/evidence/test_compliance.py)
    m = simulate(stack.log_path(SERVER), rate=100, duration=60, speedup=10, seed=23, failed_login_burst=8,
                 incidents=True)
    stack.assert_stored_and_counted_exactly_once(SERVER, m)
    events = {d["_id"]: d for d in stack.db()[stack.cfg.store["events_collection"]].find({"server": SERVER})}
    alerts_coll = stack.db()[stack.cfg.store["alerts_collection"]]
    expected = Counter((a["rule"], a["subject"]) for a in m.expected_alerts)
    stack.wait_for("the incidents' alerts", lambda: (
        not expected - Counter((a["rule"], a["subject"]) for a in alerts_coll.find({"server": SERVER})), None), timeout=120)
    alerts = {a["_id"]: a for a in alerts_coll.find({"server": SERVER})}
    wanted = {"events": set(events), "ocsf": set(events) | set(alerts), "ecs": set(events) | set(alerts)}
    got = read_committed(stack.cfg, ROLES, lambda role, key: key in wanted[role],
                         lambda out: all(wanted[r] <= {m.key().decode() for m in out[r]} for r in ROLES),
                         since_ms=since_ms, group="tests-stream-reader")

    # each once: the events on each topic, the alerts on the OCSF and ECS ones
    for role in ROLES:
        keys = Counter(msg.key().decode() for msg in got[role])
        assert [k for k, n in keys.items() if n > 1] == [], f"{role}: a message twice"
        assert set(keys) == set(events) | (set(alerts) if role != "events" else set()), role

    # auditpipe: the stored document, times as ISO-8601; one validator for all (jsonschema.validate
    # checks the schema itself on every call: about 18 ms each, minutes over a run's messages)
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    for msg in got["events"]:
        doc = json.loads(msg.value())
        validator.validate(doc)
        stored = events[doc["_id"]]
        assert (doc["chain_seq"], doc["chain_digest"], doc.get("sqltext")) == (
            stored["chain_seq"], stored["chain_digest"], stored.get("sqltext")), doc["_id"]
        assert doc["event_time"].endswith("Z") and not msg.headers(), "nothing cut"

    # OCSF 1.8.0: every message valid for its class
    ocsf, classes = OcsfCheck(), Counter()
    for msg in got["ocsf"]:
        doc = json.loads(msg.value())
        assert ocsf.problems(doc) == [], doc
        name = ocsf.class_of(doc)
        classes[name] += 1
        if name == "detection_finding":
            a = alerts[doc["finding_info"]["uid"]]
            assert (doc["finding_info"]["title"], doc["severity"].lower()) == (a["rule"], a["severity"])
            assert [r["uid"] for r in doc["finding_info"]["related_events"]] == a["evidence"]
    logins = sum(1 for d in events.values() if d.get("category") == "authentication")
    assert classes == {"authentication": logins, "datastore_activity": len(events) - logins,
                       "detection_finding": len(alerts)}, classes

    # ECS with OpenTelemetry's db.*: events and alerts
    kinds = Counter()
    for msg in got["ecs"]:
        doc = json.loads(msg.value())
        kinds[doc["event"]["kind"]] += 1
        assert doc["@timestamp"].endswith("Z") and doc["ecs"]["version"] and doc["host"]["name"] == SERVER
        if doc["event"]["kind"] == "event":
            stored = events[doc["event"]["id"]]
            assert doc["db"]["system"]["name"] == "mysql"
            assert doc["db"].get("query", {}).get("text") == stored.get("sqltext"), doc
            assert doc["event"]["outcome"] == stored.get("outcome", "unknown")
    assert kinds == {"event": len(events), "alert": len(alerts)}

    # masked as stored: no card number and no password of the run on any topic
    texts = [msg.value().decode() for role in ROLES for msg in got[role]]
    for secret in [*m.card_numbers, *("".join(c for c in pan if c.isdigit()) for pan in m.card_numbers), *m.secrets]:
        assert not any(secret in t for t in texts), f"{secret} on the stream"
