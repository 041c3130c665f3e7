"""Kafka topic definitions (schemas/topics.yaml) and the admin operations on them."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from auditpipe import paths
from auditpipe.errors import ComponentError
from auditpipe.stack.limits import Limits


@dataclass(frozen=True)
class TopicDef:
    role: str
    name: str
    partitions: int
    retention_ms: int
    segment_ms: int | None = None  # when the broker closes a segment (and can delete it); None: the broker's default
    producers: tuple[str, ...] = ()  # the parts that write it, each as its own user (kafka_acls.py)
    consumers: tuple[str, ...] = ()  # the parts that read it


# The CLI's clients only probe; failures surface as exceptions, so librdkafka's own log stays quiet.
QUIET_CLIENT = {"log_level": 0}


def definitions() -> dict[str, TopicDef]:
    data = yaml.safe_load((paths.SCHEMAS / "topics.yaml").read_text())
    return {t["role"]: TopicDef(t["role"], t["name"], int(t["partitions"]), int(t["retention_ms"]),
                                int(t["segment_ms"]) if "segment_ms" in t else None,
                                tuple(t["producers"]), tuple(t["consumers"]))
            for t in data["topics"]}


def topic_name(role: str) -> str:
    return definitions()[role].name


def client_config(kafka: str | dict) -> dict:
    """librdkafka settings from a connection: ``Config.kafka_client`` (bootstrap servers and
    security), or a bare bootstrap string for a broker without security."""
    return {"bootstrap.servers": kafka} if isinstance(kafka, str) else dict(kafka)


def admin(kafka: str | dict):
    from confluent_kafka.admin import AdminClient

    return AdminClient({**client_config(kafka), "socket.timeout.ms": 5000, **QUIET_CLIENT})


def ensure_topics(kafka: str | dict, lim: Limits, replication_factor: int = 1, min_insync_replicas: int = 1,
                  partitions: dict[str, int] | None = None) -> list[str]:
    """Creates missing topics (with ``replication_factor`` replicas) and brings max.message.bytes and
    min.insync.replicas of existing ones to what the config says (max.message.bytes is derived from
    max_line_size: a topic left with a smaller limit after max_line_size grew would refuse long lines
    or dead letters). ``partitions``: by role, instead of schemas/topics.yaml's. Returns notes about
    differences left as they are (partitions, replicas)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    client = admin(kafka)
    existing = client.list_topics(timeout=10).topics
    notes = []
    missing = []
    present = []
    for t in definitions().values():
        wanted_partitions = (partitions or {}).get(t.role, t.partitions)
        if t.name in existing:
            have = len(existing[t.name].partitions)
            if have != wanted_partitions:
                notes.append(f"topic {t.name} has {have} partitions, the configuration says {wanted_partitions}; "
                             "left as it is")
            replicas = min(len(p.replicas) for p in existing[t.name].partitions.values())
            if replicas != replication_factor:
                notes.append(f"topic {t.name} has {replicas} replicas, kafka.replication_factor says "
                             f"{replication_factor}; left as it is (changing it is a partition reassignment)")
            present.append(t)
            continue
        missing.append(NewTopic(t.name, num_partitions=wanted_partitions, replication_factor=replication_factor, config={
            "retention.ms": str(t.retention_ms), "max.message.bytes": str(lim.topic_max_message_bytes(t.role)),
            "min.insync.replicas": str(min_insync_replicas),
            **({"segment.ms": str(t.segment_ms)} if t.segment_ms else {})}))
    if missing:
        for name, future in client.create_topics(missing, operation_timeout=30).items():
            try:
                future.result()
            except Exception as e:  # noqa: BLE001
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise ComponentError(f"creating Kafka topic {name} failed: {e}") from None
    for t in present:
        resource = ConfigResource(ConfigResource.Type.TOPIC, t.name)
        current = client.describe_configs([resource])[resource].result()
        for name, wanted, why in (("max.message.bytes", str(lim.topic_max_message_bytes(t.role)), "derived from max_line_size"),
                                  ("min.insync.replicas", str(min_insync_replicas), "kafka.min_insync_replicas"),
                                  # audit.raw holds lines unmasked: an older, longer retention is brought down
                                  ("retention.ms", str(t.retention_ms), "schemas/topics.yaml"),
                                  *([("segment.ms", str(t.segment_ms), "schemas/topics.yaml")] if t.segment_ms else [])):
            have = current.get(name)
            if have is not None and have.value == wanted:
                continue
            update = ConfigResource(ConfigResource.Type.TOPIC, t.name, incremental_configs=[
                ConfigEntry(name, wanted, incremental_operation=AlterConfigOpType.SET)])
            try:
                client.incremental_alter_configs([update])[update].result()
            except Exception as e:  # noqa: BLE001
                raise ComponentError(f"setting {name}={wanted} on Kafka topic {t.name} failed: {e}") from None
            notes.append(f"topic {t.name}: {name} {have.value if have else '?'} -> {wanted} ({why})")
    return notes


def max_message_bytes(kafka: str | dict, topic: str) -> int:
    """The topic's max.message.bytes as the broker reports it."""
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    client = admin(kafka)  # held until the answer is in: a collected client cancels its requests
    return int(client.describe_configs([resource])[resource].result()["max.message.bytes"].value)


def end_offsets(kafka: str | dict, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({**client_config(kafka), "group.id": "auditpipe-cli-probe", "enable.auto.commit": False,
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


def consumer_lag(kafka: str | dict, topic: str, group: str) -> int | None:
    """Records in ``topic`` not yet committed by ``group`` (the Flink job commits on checkpoints)."""
    from confluent_kafka import Consumer, TopicPartition

    ends = end_offsets(kafka, topic)
    c = Consumer({**client_config(kafka), "group.id": group, "enable.auto.commit": False, **QUIET_CLIENT})
    try:
        committed = c.committed([TopicPartition(topic, p) for p in ends], timeout=5)
        lag = 0
        for tp in committed:
            done = tp.offset if tp.offset >= 0 else 0
            lag += max(ends[tp.partition] - done, 0)
        return lag
    finally:
        c.close()
