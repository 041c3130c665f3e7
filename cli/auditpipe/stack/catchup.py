"""Catch-up after a collector outage: ship what rsyslog can no longer read itself.

rsyslog's imfile follows the live file (``audit.log``) by its exact path. While it runs it reads a
renamed file to its end, so rotations lose nothing. While it is down it sees nothing: files that
the server rotated in the meantime (``audit.log.01``, ``.02`` ...) are never opened after the
restart, and lines it had read but not yet handed to Kafka when it was killed (its queue is in
memory; its saved read position is ahead of them) are never read again. Measured without the
catch-up: two kill -9 of the collector during fast rotation lose 8,819 of 120,000 records.

So every start of the collector (``up``, or the supervisor after a crash) does this per source:

1. Before rsyslog starts: find the last line shipped for the source, the newest message with the
   source's key on ``audit.raw`` (the topic is the record of what was shipped), and where rsyslog
   will resume: its saved read offset in the live file (its state file for that inode).
2. Start rsyslog; it resumes that file from that offset, and reads every file created after it.
3. Find the last shipped line in the source's files, newest first, and ship what follows it up to
   where rsyslog resumes: the rest of the rotated file that holds it, every rotated file newer than
   that, and in the file rsyslog resumes the lines before its offset (the ones its queue lost).

Reading after rsyslog has started leaves no gap (a line written since is rsyslog's), except when the
server rotates in the fraction of a second between step 1 and rsyslog opening the live file: then
the rest of the file that was live is not read. The price is a few re-sent lines (rsyslog's saved
offset lags its reading by up to persistStateInterval lines), which the store and the stats absorb
by event id. If the last shipped line is no longer in any file (the server rotated through all its kept
files while the collector was down), the lines between are gone from disk: that is reported as a
gap, loudly, and everything still on disk is shipped.

Rotated files are found by either naming: ``<live name>.<number>`` (Percona's plugin, MariaDB), lower
numbers newer, or ``<stem>.<YYYYMMDDThhmmss>[-N]<suffix>`` (MySQL Enterprise, audit_log_filter).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditpipe import formats
from auditpipe.errors import ComponentError
from auditpipe.stack.topics import client_config

SCAN_CHUNK = 20000
SCAN_LIMIT = 1_000_000  # messages per partition read backwards, at most, to find the sources' last lines


@dataclass
class LastShipped:
    partition: int
    offset: int
    line: bytes


@dataclass
class CatchUpReport:
    source: str
    shipped: int = 0
    files: list[str] = field(default_factory=list)
    gap: str = ""

    def summary(self) -> str:
        if self.gap:
            return f"{self.source}: {self.gap}; shipped {self.shipped} lines still on disk"
        if not self.shipped:
            return ""
        return f"{self.source}: shipped {self.shipped} lines rsyslog could not read itself ({', '.join(self.files)})"


def rotated_files(live: Path) -> list[Path]:
    """The rotated files of ``live`` that exist, newest first, in either naming scheme: the rename
    chain ``audit.log.01``, ``.02`` ... (lower numbers newer: Percona's plugin, MariaDB) or the
    rotation time ``audit.20261122T090000.log``, ``audit.20261122T090000-2.log`` for the second one
    in the same second (MySQL Enterprise Audit, Percona's audit_log_filter)."""
    chain = re.compile(re.escape(live.name) + r"\.(\d+)$")
    stamped = re.compile(re.escape(live.stem) + r"\.(\d{8}T\d{6})(?:-(\d+))?" + re.escape(live.suffix) + "$")
    found = []
    if live.parent.is_dir():
        for p in live.parent.iterdir():
            if not p.is_file():
                continue
            if m := chain.match(p.name):
                found.append(((0, -int(m.group(1)), 0), p))
            elif live.suffix and (m := stamped.match(p.name)):
                found.append(((1, m.group(1), int(m.group(2) or 1)), p))
    return [p for _, p in sorted(found, reverse=True)]


def last_shipped(kafka: str | dict, topic: str, keys: set[bytes]) -> dict[bytes, LastShipped]:
    """The newest message on ``topic`` for each of ``keys``, in one backward pass over each partition.

    The pass over a partition ends when every key was found there or SCAN_LIMIT messages were read;
    a key not found (never shipped, or only longer ago than that) gets no catch-up.
    """
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**client_config(kafka), "group.id": "auditpipe-catchup", "enable.auto.commit": False,
                         "log_level": 0, "fetch.max.bytes": 64 * 1024 * 1024,
                         "max.partition.fetch.bytes": 16 * 1024 * 1024, "fetch.wait.max.ms": 10})
    best: dict[bytes, tuple[int, LastShipped]] = {}
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            missing = set(keys)
            end = high
            while end > low and missing and high - end < SCAN_LIMIT:
                start = max(low, end - SCAN_CHUNK)
                consumer.assign([TopicPartition(topic, p, start)])
                newest: dict[bytes, object] = {}
                position = start
                while position < end:
                    # never ask for more than the chunk holds: a batch waits for its full count
                    batch = consumer.consume(num_messages=min(1000, end - position), timeout=10)
                    if not batch:
                        raise ComponentError(f"catch-up: reading {topic}[{p}] at offset {position} timed out")
                    for msg in batch:
                        if msg.error():
                            continue
                        position = msg.offset() + 1
                        if msg.offset() < end and msg.key() in missing:
                            newest[msg.key()] = msg
                for key, msg in newest.items():
                    missing.discard(key)
                    ts = msg.timestamp()[1]
                    if key not in best or ts > best[key][0]:
                        best[key] = (ts, LastShipped(p, msg.offset(), msg.value() or b""))
                end = start
        return {key: found for key, (_, found) in best.items()}
    finally:
        consumer.close()


@dataclass(frozen=True)
class ResumePoint:
    """Where rsyslog will resume: the live file's inode and its saved read offset in it."""

    inode: int
    offset: int


def resume_point(work_dir: Path, live: Path) -> ResumePoint | None:
    """rsyslog's saved read position in the live file (the newest state file for its inode), read
    before rsyslog starts: once it runs it saves newer positions. None: it reads the file from its start."""
    try:
        inode = live.stat().st_ino
    except FileNotFoundError:
        return None
    newest, newest_mtime = None, -1.0
    for f in work_dir.glob(f"imfile-state:{inode}:*"):
        try:
            mtime = f.stat().st_mtime
            state = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if state.get("filename") == str(live) and mtime > newest_mtime:
            # a multi-line record not finished yet: rsyslog keeps what it read of it (prev_msg_segment)
            # and ships it whole from strt_offs, where the record starts; before that it is ours
            newest, newest_mtime = int(state.get("strt_offs", state.get("curr_offs", 0))), mtime
    return None if newest is None else ResumePoint(inode, newest)


class Line(bytes):
    """A line of a file (without its newline), and where it starts in the file."""

    offset: int

    def __new__(cls, data: bytes, offset: int):
        line = super().__new__(cls, data)
        line.offset = offset
        return line


def _lines(data: bytes, base: int = 0) -> list[Line]:
    out, pos = [], 0
    for piece in data.split(b"\n"):
        if piece:  # rsyslog skips empty lines too
            out.append(Line(piece, base + pos))
        pos += len(piece) + 1
    return out


def cut_report(line: bytes, max_line_bytes: int) -> tuple[str, bytes, int] | None:
    """What rsyslog does with a line it cannot ship whole, done the same way here: None for a line
    that ships as it is; else (problem, the bytes that are shipped, the length read). rsyslog reads at
    most max_line_bytes + 1 bytes of a line and ends a message at a NUL byte
    (collectors/rsyslog/source.conf.tmpl; schemas/audit-raw-message.md)."""
    read = line[:max_line_bytes + 1]
    if len(read) > max_line_bytes:
        return "too-long", read.split(b"\0", 1)[0], len(read)
    if b"\0" in read:
        return "nul-byte", read.split(b"\0", 1)[0], len(read)
    return None


def cut_key(key: bytes, problem: str, line_bytes: int, file: Path, offset: int) -> bytes:
    """The source key with the collector's report of a line it could not ship whole."""
    descriptor = json.loads(key)
    descriptor["cut"] = {"problem": problem, "line_bytes": line_bytes, "file": str(file), "offset": offset}
    return json.dumps(descriptor, separators=(",", ":")).encode()


def _records(data: bytes, base: int, fmt: str) -> list[Line]:
    """The records in ``data`` framed as rsyslog frames the format (formats.Framer): for one-line
    formats its lines, else each record's lines joined with LF, with the offset of its first line."""
    lines = _lines(data, base)
    if not formats.FRAMING[fmt].multi_line:
        return lines
    return [Line(b"\n".join(record), record[0].offset) for record in formats.frame(lines, fmt)]


def plan(live: Path, last_line: bytes | None, resume: ResumePoint | None,
         fmt: str = "percona-json") -> tuple[list[tuple[Path, list[bytes]]], str]:
    """What to ship: [(file, records)], oldest first, and a gap description ('' if none).

    Records are lines, or for multi-line formats what rsyslog frames; ``last_line`` is the last
    record shipped (a message value), found in the files as it is written there.

    ``resume`` is where rsyslog picks up: in the file that was live when it was looked up (wherever
    that file is now) rsyslog reads from that offset on, and it reads every file newer than that one.
    Older files, and the stretch of that file between the last shipped line and the offset, are ours.
    """
    files = [live] + rotated_files(live)  # newest first
    contents: dict[Path, bytes] = {}
    inodes: dict[Path, int] = {}
    for f in files:
        try:
            with open(f, "rb") as handle:
                inodes[f] = os.fstat(handle.fileno()).st_ino
                contents[f] = handle.read()
        except FileNotFoundError:  # rotated away since we listed it
            pass
    files = [f for f in files if f in contents]
    if not files or last_line is None:
        return [], ""  # first start: rsyslog reads the live file from its start; rotated history is not ours
    # rsyslog's part: the file it resumes in and everything newer; without a saved position, the live file
    resumed_in = next((f for f in files if resume and inodes[f] == resume.inode), None)
    first_ours = files.index(resumed_in) if resumed_in else 1  # index of the newest file that is (partly) ours

    where, after = None, 0
    for f in files:
        data = contents[f]
        i = data.rfind(last_line + b"\n")
        while i > 0 and data[i - 1:i] != b"\n":  # a whole line, not the end of a longer one
            i = data.rfind(last_line + b"\n", 0, i)
        if i >= 0:
            where, after = f, i + len(last_line) + 1
            break
    gap = ""
    if where is None:
        gap = (f"the last line shipped for {live} is in none of its files any more: lines written between it "
               "and the oldest kept file are lost (the server rotated through all its kept files while the "
               "collector was down)")
        where, after = files[-1], 0
    out = []
    for index in range(files.index(where), first_ours - 1, -1):  # oldest first
        f = files[index]
        start = after if f == where else 0
        if f == resumed_in:
            end = resume.offset  # rsyslog reads on from here
        elif index < first_ours:
            continue
        else:
            end = len(contents[f])
        if end > start:
            records = _records(contents[f][start:end], start, fmt)
            if records:
                out.append((f, records))
    return out, gap


def ship(kafka: str | dict, topic: str, partition: int | None, key: bytes, batches: list[tuple[Path, list[bytes]]],
         max_line_bytes: int, message_bytes: int) -> int:
    from confluent_kafka import Producer

    producer = Producer({**client_config(kafka), "enable.idempotence": True, "acks": "all",
                         "compression.type": "lz4", "linger.ms": 20, "message.max.bytes": message_bytes,
                         "log_level": 0})
    failures = []

    def delivered(err, msg):  # noqa: ARG001
        if err is not None:
            failures.append(str(err))

    n = 0
    for f, lines in batches:
        for line in lines:
            kwargs = {"partition": partition} if partition is not None else {}
            value, message_key = line, key
            cut = cut_report(line, max_line_bytes)
            if cut:
                problem, value, read = cut
                message_key = cut_key(key, problem, read, f, getattr(line, "offset", -1))
            while True:
                try:
                    producer.produce(topic, value=value, key=message_key, on_delivery=delivered, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.5)
            n += 1
    remaining = producer.flush(120)
    if remaining or failures:
        raise ComponentError(f"catch-up: {remaining} lines not delivered to {topic}"
                             + (f" ({failures[0]})" if failures else ""))
    return n


@dataclass
class Before:
    """What step 1 found for one source, before rsyslog started."""

    last: LastShipped | None
    resume: ResumePoint | None


def before_start(kafka: str | dict, topic: str, sources: list[dict], key_of, work_dir: Path) -> dict[str, Before]:
    """Step 1, before rsyslog starts: the last shipped line and rsyslog's resume point of every source."""
    with_files = [s for s in sources if Path(s["path"]).exists() or rotated_files(Path(s["path"]))]
    found = last_shipped(kafka, topic, {key_of(s).encode() for s in with_files}) if with_files else {}
    return {s["path"]: Before(found.get(key_of(s).encode()), resume_point(work_dir, Path(s["path"])))
            for s in sources}


def catch_up(kafka: str | dict, topic: str, sources: list[dict], key_of, before: dict[str, Before],
             max_line_bytes: int, message_bytes: int) -> list[CatchUpReport]:
    """Step 3, after rsyslog has started: ship what it cannot read."""
    reports = []
    for s in sources:
        live = Path(s["path"])
        found = before[s["path"]].last
        batches, gap = plan(live, found.line if found else None, before[s["path"]].resume, s.get("format", "percona-json"))
        report = CatchUpReport(s["path"], gap=gap)
        if batches:
            report.shipped = ship(kafka, topic, found.partition if found else None, key_of(s).encode(), batches,
                                  max_line_bytes, message_bytes)
            report.files = [f"{f.name}: {len(lines)}" for f, lines in batches]
        reports.append(report)
    return reports


__all__ = ["before_start", "catch_up", "plan", "rotated_files", "CatchUpReport", "ResumePoint"]
