"""Kafka topic definitions (schemas/topics.yaml) and the admin operations on them."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from auditpipe import paths
from auditpipe.errors import ComponentError


@dataclass(frozen=True)
class TopicDef:
    role: str
    name: str
    partitions: int
    retention_ms: int
    max_message_bytes: int


# The CLI's clients only probe; failures surface as exceptions, so librdkafka's own log stays quiet.
QUIET_CLIENT = {"log_level": 0}


def definitions() -> dict[str, TopicDef]:
    data = yaml.safe_load((paths.SCHEMAS / "topics.yaml").read_text())
    return {t["role"]: TopicDef(t["role"], t["name"], int(t["partitions"]), int(t["retention_ms"]),
                                int(t["max_message_bytes"])) for t in data["topics"]}


def topic_name(role: str) -> str:
    return definitions()[role].name


def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000, **QUIET_CLIENT})


def ensure_topics(bootstrap: str) -> list[str]:
    """Creates missing topics; returns notes about existing ones that differ from their definition."""
    from confluent_kafka.admin import NewTopic

    client = admin(bootstrap)
    existing = client.list_topics(timeout=10).topics
    notes = []
    missing = []
    for t in definitions().values():
        if t.name in existing:
            have = len(existing[t.name].partitions)
            if have != t.partitions:
                notes.append(f"topic {t.name} has {have} partitions, schemas/topics.yaml says {t.partitions}; "
                             "left as it is")
            continue
        missing.append(NewTopic(t.name, num_partitions=t.partitions, replication_factor=1, config={
            "retention.ms": str(t.retention_ms), "max.message.bytes": str(t.max_message_bytes),
            "min.insync.replicas": "1"}))
    if missing:
        for name, future in client.create_topics(missing, operation_timeout=30).items():
            try:
                future.result()
            except Exception as e:  # noqa: BLE001
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise ComponentError(f"creating Kafka topic {name} failed: {e}") from None
    return notes


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "auditpipe-cli-probe", "enable.auto.commit": False,
                  **QUIET_CLIENT})
    try:
        md = c.list_topics(topic, timeout=5).topics[topic]
        out = {}
        for p in md.partitions:
            _, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=5)
            out[p] = high
        return out
    finally:
        c.close()


def consumer_lag(bootstrap: str, topic: str, group: str) -> int | None:
    """Records in ``topic`` not yet committed by ``group`` (the Flink job commits on checkpoints)."""
    from confluent_kafka import Consumer, TopicPartition

    ends = end_offsets(bootstrap, topic)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False, **QUIET_CLIENT})
    try:
        committed = c.committed([TopicPartition(topic, p) for p in ends], timeout=5)
        lag = 0
        for tp in committed:
            done = tp.offset if tp.offset >= 0 else 0
            lag += max(ends[tp.partition] - done, 0)
        return lag
    finally:
        c.close()
