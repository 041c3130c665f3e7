"""Reading the event stream as a SIEM does (docs/stream.md): committed messages only, and each OCSF message
checked against OCSF 1.8.0, the schema files the ocsf-json-schema package carries. What the demo shows and
tests/e2e/job/test_event_stream.py holds the job to."""

from __future__ import annotations

import time
from collections.abc import Callable

from auditpipe.config import Config
from auditpipe.stack.kafka.topics import QUIET_CLIENT, topic_name

OCSF_VERSION = "1.8.0"


def read_committed(cfg: Config, roles: tuple[str, ...], wanted: Callable[[str, str], bool],
                   complete: Callable[[dict[str, list]], bool], since_ms: int | None = None, timeout: float = 120,
                   settle: float = 5, group: str = "auditpipe-stream-reader") -> dict[str, list]:
    """The messages (confluent_kafka's) of the topics of ``roles`` whose key ``wanted(role, key)``
    accepts, read with isolation.level=read_committed from the messages timed ``since_ms`` on (None:
    the beginning), until ``complete(messages)`` holds and ``settle`` seconds more have brought none
    (a second copy of one would have come by then). TimeoutError after ``timeout`` seconds."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({**cfg.kafka_client, "group.id": group, "enable.auto.commit": False,
                  "isolation.level": "read_committed", "auto.offset.reset": "earliest", **QUIET_CLIENT})
    by_topic = {topic_name(role): role for role in roles}
    out: dict[str, list] = {role: [] for role in roles}
    try:
        parts = []
        for topic in by_topic:
            md = c.list_topics(topic, timeout=10).topics[topic]
            parts += [TopicPartition(topic, p, since_ms if since_ms is not None else 0) for p in md.partitions]
        if since_ms is not None:
            parts = [p if p.offset >= 0 else TopicPartition(p.topic, p.partition, 0)
                     for p in c.offsets_for_times(parts, timeout=10)]
        c.assign(parts)
        deadline, quiet_since = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            batch = [m for m in c.consume(1000, timeout=1) if not m.error()]
            for m in batch:
                role = by_topic[m.topic()]
                if m.key() is not None and wanted(role, m.key().decode("utf-8", "replace")):
                    out[role].append(m)
            if batch or not complete(out):
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= settle:
                return out
        raise TimeoutError(f"the stream's topics did not deliver what was wanted within {timeout:.0f} s: "
                           + ", ".join(f"{len(v)} message(s) of {topic_name(r)}" for r, v in out.items()))
    finally:
        c.close()


class OcsfCheck:
    """Each OCSF message against its class of OCSF 1.8.0 (no profiles), the validators made once."""

    def __init__(self) -> None:
        from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema

        self._schema = OcsfJsonSchemaEmbedded(get_ocsf_schema(version=OCSF_VERSION))
        self._validators: dict[int, tuple[str, object]] = {}

    def class_of(self, doc: dict) -> str:
        return self._validator(doc)[0]

    def problems(self, doc: dict) -> list[str]:
        """What makes ``doc`` invalid for its class ([] when valid); an unknown class is one."""
        try:
            name, validator = self._validator(doc)
        except (KeyError, TypeError, ValueError) as e:
            return [f"class_uid {doc.get('class_uid')!r} is no OCSF {OCSF_VERSION} class ({e})"]
        return [f"{name}: {'/'.join(map(str, e.path))}: {e.message[:200]}" for e in validator.iter_errors(doc)]

    def _validator(self, doc: dict):
        import jsonschema

        uid = doc["class_uid"]
        if uid not in self._validators:
            name = self._schema.lookup_class_name_from_uid(class_uid=uid)
            self._validators[uid] = (name, jsonschema.Draft202012Validator(
                self._schema.get_class_schema(class_name=name, profiles=[])))
        return self._validators[uid]
