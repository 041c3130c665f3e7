"""Bad input on the real stack: it is kept as a dead letter with its reason, and it never stops the
pipeline or changes the numbers (tests/faults/ covers failing components)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from auditpipe.stack import limits
from auditpipe.stack.collector.rsyslog import source_key
from auditpipe.stack.kafka import topics
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e


def test_long_unparsable_lines_are_kept_whole_and_the_lines_after_them_arrive(stack):
    """A 600 KiB unparsable line once stopped the pipeline for good: its dead letter (base64 plus text)
    exceeded the job's Kafka producer limit, the job failed, replayed it from its checkpoint and
    failed again, and nothing after it was ever stored."""
    server = "e2e-long-lines"
    binary = bytes(b for b in range(256) if b not in (0, 10, 13))  # no NUL, LF, CR: one line (NUL: tests/faults)
    long_lines = [b'{"audit_record":{"name":"Query","sqltext":"' + b"x" * (1536 * 1024),  # 1.5 MiB, cut off
                  b"binary " + binary * 2400]                                               # ~600 KiB, invalid UTF-8
    m = simulate(stack.log_path(server), rate=1000, duration=4, speedup=20, seed=31, rotate_on_size=0,
                 malformed=2, bad_lines=long_lines)
    docs = stack.stored_documents(server, m.records)
    assert sorted(d["record_id"] for d in docs) == sorted(f"{i}_{m.log_start}" for i in range(1, m.records + 1))
    assert stack.assert_stored_as_written(server, docs=docs) == m.records

    dead = stack.wait_for("2 dead letters", lambda: (len(d := stack.dead_letters(server)) >= 2, d))
    assert len(dead) == 2
    by_length = {d["original"]["length"]: d for d in dead}
    for line in long_lines:
        d = by_length[len(line)]
        assert base64.b64decode(d["original"]["base64"]) == line, "kept whole, byte for byte"
        assert d["original"]["sha256"] == hashlib.sha256(line).hexdigest()
        assert "truncated" not in d["original"]
        assert d["stage"] == "parse" and d["reason"]


def test_topic_limits_follow_max_line_size_and_up_repairs_them(stack):
    lim = limits.from_config(stack.cfg)
    raw, dead = topics.topic_name("raw"), topics.topic_name("deadletter")
    assert topics.max_message_bytes(stack.cfg.kafka_client, raw) == lim.raw_message_bytes
    assert topics.max_message_bytes(stack.cfg.kafka_client, dead) == lim.dead_letter_message_bytes

    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    shrunk = ConfigResource(ConfigResource.Type.TOPIC, dead, incremental_configs=[
        ConfigEntry("max.message.bytes", "1048576", incremental_operation=AlterConfigOpType.SET)])
    client = topics.admin(stack.cfg.kafka_client)
    client.incremental_alter_configs([shrunk])[shrunk].result()
    assert topics.max_message_bytes(stack.cfg.kafka_client, dead) == 1048576
    stack.cli("up")
    assert topics.max_message_bytes(stack.cfg.kafka_client, dead) == lim.dead_letter_message_bytes


def test_resent_lines_are_stored_and_counted_once(stack):
    """Collectors re-send lines (a restart from the last saved position, a broker failover): the store
    absorbs the copies by _id, and the one-minute counts, the hours, the rollups and the evidence
    must count or keep each event id once too."""
    from confluent_kafka import Producer

    server = "e2e-types"
    m = simulate(stack.log_path(server), rate=1000, duration=3, speedup=20, seed=41, rotate_on_size=0)
    lines = stack.log_path(server).read_bytes().splitlines()
    assert len(lines) == m.records
    stack.stored_documents(server, m.records)

    repeats_before = stack.job_metric_sum("repeatedEventsNotCounted") or 0
    # the collector's first 500 lines again, on the same partition (same key), as a restart would send them
    key = source_key(server, "percona-json", str(stack.log_path(server))).encode()
    p = Producer({**stack.cfg.kafka_client, "enable.idempotence": True, "log_level": 0})
    for line in lines[:500]:
        p.produce(topics.topic_name("raw"), value=line, key=key)
    assert p.flush(30) == 0
    # plus two records that break the type rules: "record" as a number
    bad = [json.dumps({"audit_record": {"name": "Query", "record": 5, "timestamp": "2026-11-22T10:00:00 UTC"}}).encode(),
           json.dumps({"audit_record": {"name": "Query", "record": 5, "timestamp": "2026-11-22T10:00:01 UTC"}}).encode()]
    for line in bad:
        p.produce(topics.topic_name("raw"), value=line, key=key)
    assert p.flush(30) == 0

    dead = stack.wait_for("2 dead letters for the wrong types", lambda: (len(d := stack.dead_letters(server)) >= 2, d))
    assert sorted(d["reason"] for d in dead) == ["field 'record' is a number, expected a string"] * 2
    # the copies reached the counting path and were recognized there (a job without the check has no
    # such metric, and this wait fails), so no count can still change because of them
    stack.wait_for("500 copies recognized", lambda: ((n := stack.job_metric_sum("repeatedEventsNotCounted")) is not None
                                                      and n >= repeats_before + 500, n), timeout=60)
    total = stack.wait_for("stats that add up to N", lambda: ((t := stack.stats_total(server)) >= m.records, t))
    assert total == m.records, f"each event id counted once, got {total} for {m.records}"
    assert stack.count(server) == m.records, "the store kept one document per id"
    stack.assert_evidence_and_counts_follow(server, stack.stored_documents(server, m.records))


def assert_verify_explains_one_refused_event(stack, server: str, links: int) -> None:
    """Once the chain's last head covers ``links`` events, `verify` passes and names the one event
    the store refused (found in its dead letter, not taken for a deletion)."""
    stack.wait_for_heads_at(server, links)
    verified = stack.cli("verify", "--server", server, "--where", "store", check=False)
    assert verified.returncode == 0, verified.stdout
    assert "1 event(s) the store refused" in verified.stdout


def test_a_record_that_cannot_be_bson_is_a_dead_letter_and_what_follows_is_stored(stack):
    """JSON allows a NUL character in a field name ("\\u0000"); BSON does not, and the driver refuses
    to encode the document. The batch failed outside the store's errors, the job failed, and every
    restart replayed the record and failed again: the pipeline stopped for good on one line. Now the
    writer finds the document, makes it a dead letter with the reason, and writes the rest."""
    server = "e2e-unwritable"
    m = simulate(stack.log_path(server), rate=1000, duration=2, speedup=20, seed=72, rotate_on_size=0)
    line = {"name": "Query", "timestamp": "2026-11-22T10:00:00 UTC", "command_class": "select", "status": 0,
            "sqltext": "SELECT 1", "connection_id": "7", "user": "app", "host": "h", "ip": "", "db": "d"}
    unwritable = json.dumps({"audit_record": {**line, "record": "nul_1", "a\u0000b": "1"}}, separators=(",", ":"))
    after = json.dumps({"audit_record": {**line, "record": "after_nul_1"}}, separators=(",", ":"))
    assert "\\u0000" in unwritable and "\0" not in unwritable, "the line holds the escape, not a NUL byte"
    with open(stack.log_path(server), "ab") as f:
        f.write(unwritable.encode() + b"\n" + after.encode() + b"\n")
    stored = stack.stored_documents(server, m.records + 1)
    assert f"{server}/after_nul_1" in {d["_id"] for d in stored}, "the record after it is stored"
    wanted = f"store:{stack.cfg.store['events_collection']}:{server}/nul_1"
    dead = stack.wait_for("the unwritable document in dead_letters", lambda: (
        (d := stack.db()[stack.cfg.store["dead_letter_collection"]].find_one({"_id": wanted})) is not None, d))
    assert dead["stage"] == "store" and "cannot be written as BSON" in dead["reason"], dead["reason"]
    assert "\0" not in dead["reason"]
    assert json.loads(dead["original"]["text"])["extra"] == {"a\u0000b": "1"}, "the document, whole, as JSON text"
    assert len(stored) == m.records + 1, "each other record stored once"
    assert_verify_explains_one_refused_event(stack, server, links=m.records + 2)


def test_a_document_the_store_refuses_is_a_dead_letter_in_the_store_and_on_the_topic(stack):
    """FerretDB refuses field names that start with '$' (error 2, BadValue: permanent). Such a record's
    dead letter goes to the store and to the topic, where consumers of dead letters look."""
    server = "e2e-rejected"
    m = simulate(stack.log_path(server), rate=1000, duration=2, speedup=20, seed=71, rotate_on_size=0)
    refused = json.dumps({"audit_record": {"name": "Query", "record": "refused_1", "timestamp": "2026-11-22T10:00:00 UTC",
                                           "$where": "1"}}, separators=(",", ":")).encode()
    with open(stack.log_path(server), "ab") as f:
        f.write(refused + b"\n")
    stack.stored_documents(server, m.records)
    wanted = f"store:{stack.cfg.store['events_collection']}:{server}/refused_1"
    stored = stack.wait_for("the rejection in dead_letters", lambda: (
        (d := stack.db()[stack.cfg.store["dead_letter_collection"]].find_one({"_id": wanted})) is not None, d))
    assert stored["stage"] == "store" and "error 2" in stored["reason"], stored["reason"]
    # the dead letter cannot hold the document as a document (the store refuses it there too): as JSON text
    assert json.loads(stored["original"]["text"])["extra"] == {"$where": "1"}, "the refused document, whole"
    on_topic = stack.wait_for("the rejection on audit.deadletter", lambda: (
        (found := [d for d in stack.dead_letters_on_topic() if d["_id"] == wanted]) != [], found))
    assert on_topic[0]["stage"] == "store" and on_topic[0]["reason"] == stored["reason"]
    assert stack.count(server) == m.records
    # the refused event has its link in the chain; verify finds it in the dead letter, not a deletion
    assert_verify_explains_one_refused_event(stack, server, links=m.records + 1)
