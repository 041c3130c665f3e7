"""Every size limit on the way of one audit line, derived from one value: ``max_line_size``.

A line is shipped whole up to ``max_line_size`` (default 4 MiB, at most 8 MiB). Each hop must
accept what the one before it may send, or a single long line stops the pipeline: a dead letter
larger than the job's Kafka producer allows fails the job, which replays the line from its
checkpoint and fails again, for ever. So the CLI computes every limit of the collectors, the topics
and the broker here, from ``max_line_size`` and the job's own limits (schemas/job-contract.json,
read through auditpipe.contract; tests/unit/test_contract.py checks that they fit):

=============================  ==========================================================
raw_message_bytes              collectors (rsyslog maxMessageSize is the line itself; its
                               producer's message.max.bytes; Fluentd's batches) and topic
                               audit.raw
dead_letter_message_bytes      the job's dead-letter producer (max.request.size), topic
                               audit.deadletter; the job never writes a larger dead letter
broker_message_bytes           the broker's message.max.bytes: the larger of the two
=============================  ==========================================================

A dead letter keeps its line whole as base64 (4/3 of it) plus a reading copy of at most 64 KiB,
the key, and the other fields, hence its allowance. The 8 MiB cap keeps a dead letter of the
longest line (about 10.7 MiB) within the job's largest dead-letter document (15 MiB, under
MongoDB's 16 MiB). What happens to a line longer than max_line_size depends on the collector
(docs/collectors.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from auditpipe import contract
from auditpipe.config import size_bytes

KEY_AND_FRAMING = 64 * 1024        # the source key (small) and Kafka's record and batch framing
# Fluentd (collectors/fluentd) sends each buffer chunk as one Kafka batch: a chunk holds up to
# max_line_size + 64 KiB of lines and at most FLUENTD_CHUNK_RECORDS records, each of which also
# carries the source key (~150 bytes) and record framing in the batch. Without this room a backlog
# after a restart makes batches larger than the topic allows (MessageSizeTooLarge, retried for ever:
# the collector stands still; measured).
FLUENTD_CHUNK_RECORDS = 5000
BATCH_ALLOWANCE = 2 * 1024 * 1024
DEAD_LETTER_TEXT_COPY = contract.limit("dead_letter_text_excerpt_bytes")  # the job's reading copy of the line
DEAD_LETTER_FIELDS = 64 * 1024     # reason, ids, the key in base64 and as text


@dataclass(frozen=True)
class Limits:
    max_line_bytes: int

    @property
    def raw_message_bytes(self) -> int:
        return self.max_line_bytes + KEY_AND_FRAMING + BATCH_ALLOWANCE

    @property
    def dead_letter_message_bytes(self) -> int:
        base64 = (self.max_line_bytes + 2) // 3 * 4
        return base64 + DEAD_LETTER_TEXT_COPY + DEAD_LETTER_FIELDS + KEY_AND_FRAMING

    @property
    def broker_message_bytes(self) -> int:
        return max(self.raw_message_bytes, self.dead_letter_message_bytes)

    @property
    def listen_queue_messages(self) -> int:
        """A syslog listener's rsyslog action queue, in messages: LISTEN_QUEUE_BYTES of the longest lines."""
        return max(16, LISTEN_QUEUE_BYTES // self.max_line_bytes)

    @property
    def producer_queue_kbytes(self) -> int:
        """librdkafka's queue.buffering.max.kbytes for the collector: PRODUCER_QUEUE_BYTES, and room for
        two of the largest messages whatever max_line_size is."""
        return max(PRODUCER_QUEUE_BYTES, 2 * self.raw_message_bytes) // 1024

    def topic_max_message_bytes(self, role: str) -> int:
        # an alert is a few KiB at most (a summary of <= 600 characters, <= 50 evidence ids): the default
        return {"raw": self.raw_message_bytes, "deadletter": self.dead_letter_message_bytes,
                "alerts": ALERT_MESSAGE_BYTES, "events": STREAM_MESSAGE_BYTES, "ocsf": STREAM_MESSAGE_BYTES,
                "ecs": STREAM_MESSAGE_BYTES}[role]


#: What a syslog listener's queue to Kafka may hold in memory, in bytes: its messages come from the
#: network, up to max_line_size each, so the queue's length in messages follows from it
#: (``listen_queue_messages``); beyond it the queue spills to disk (queue.maxDiskSpace), and beyond that
#: the receiver stops reading, which holds TCP senders back.
LISTEN_QUEUE_BYTES = 1024 * 1024 * 1024
#: What the collector's Kafka producer (librdkafka) may hold unsent, in bytes, for each action.
PRODUCER_QUEUE_BYTES = 256 * 1024 * 1024
#: rsyslog's action queue for a file source, in messages: imfile reads a local file the audited server
#: writes, at the pace the queue takes its lines
FILE_QUEUE_MESSAGES = 200_000
#: a queue starts spilling to disk when this share of it is full
HIGH_WATERMARK = 3 / 4

ALERT_MESSAGE_BYTES = 1024 * 1024
# the event stream's largest message (the job cuts long texts, then leaves them out) and its framing
STREAM_MESSAGE_BYTES = contract.limit("stream_max_message_bytes") + KEY_AND_FRAMING


def from_config(cfg) -> Limits:
    return Limits(size_bytes(cfg.data["max_line_size"]))
