"""Kafka topic definitions (schemas/topics.yaml) and the admin operations on them."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from auditpipe import paths
from auditpipe.errors import ComponentError
from auditpipe.limits import Limits


@dataclass(frozen=True)
class TopicDef:
    role: str
    name: str
    partitions: int
    retention_ms: int


# The CLI's clients only probe; failures surface as exceptions, so librdkafka's own log stays quiet.
QUIET_CLIENT = {"log_level": 0}


def definitions() -> dict[str, TopicDef]:
    data = yaml.safe_load((paths.SCHEMAS / "topics.yaml").read_text())
    return {t["role"]: TopicDef(t["role"], t["name"], int(t["partitions"]), int(t["retention_ms"]))
            for t in data["topics"]}


def topic_name(role: str) -> str:
    return definitions()[role].name


def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000, **QUIET_CLIENT})


def ensure_topics(bootstrap: str, lim: Limits) -> list[str]:
    """Creates missing topics and brings max.message.bytes of existing ones to what ``lim`` derives
    from max_line_size (a topic left with a smaller limit after max_line_size grew would refuse long
    lines or dead letters). Returns notes about differences left as they are."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    client = admin(bootstrap)
    existing = client.list_topics(timeout=10).topics
    notes = []
    missing = []
    present = []
    for t in definitions().values():
        if t.name in existing:
            have = len(existing[t.name].partitions)
            if have != t.partitions:
                notes.append(f"topic {t.name} has {have} partitions, schemas/topics.yaml says {t.partitions}; "
                             "left as it is")
            present.append(t)
            continue
        missing.append(NewTopic(t.name, num_partitions=t.partitions, replication_factor=1, config={
            "retention.ms": str(t.retention_ms), "max.message.bytes": str(lim.topic_max_message_bytes(t.role)),
            "min.insync.replicas": "1"}))
    if missing:
        for name, future in client.create_topics(missing, operation_timeout=30).items():
            try:
                future.result()
            except Exception as e:  # noqa: BLE001
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise ComponentError(f"creating Kafka topic {name} failed: {e}") from None
    for t in present:
        wanted = str(lim.topic_max_message_bytes(t.role))
        resource = ConfigResource(ConfigResource.Type.TOPIC, t.name)
        current = client.describe_configs([resource])[resource].result().get("max.message.bytes")
        if current is not None and current.value == wanted:
            continue
        update = ConfigResource(ConfigResource.Type.TOPIC, t.name, incremental_configs=[
            ConfigEntry("max.message.bytes", wanted, incremental_operation=AlterConfigOpType.SET)])
        try:
            client.incremental_alter_configs([update])[update].result()
        except Exception as e:  # noqa: BLE001
            raise ComponentError(f"setting max.message.bytes={wanted} on Kafka topic {t.name} failed: {e}") from None
        notes.append(f"topic {t.name}: max.message.bytes {current.value if current else '?'} -> {wanted} "
                     "(derived from max_line_size)")
    return notes


def max_message_bytes(bootstrap: str, topic: str) -> int:
    """The topic's max.message.bytes as the broker reports it."""
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    client = admin(bootstrap)  # held until the answer is in: a collected client cancels its requests
    return int(client.describe_configs([resource])[resource].result()["max.message.bytes"].value)


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
