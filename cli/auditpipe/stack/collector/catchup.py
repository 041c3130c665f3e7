"""Catch-up after a collector outage: ship what rsyslog can no longer read itself.

rsyslog's imfile follows the live file (``audit.log``) by its exact path. While it runs it reads a
renamed file to its end; what it still misses while it runs (a file renamed away before it opened
it, lines written to a rotated file after it closed it) is ``RotationWatch``'s, at the end of this
module. While it is down it sees nothing: files that
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
gap, loudly (``collector-gaps.log``), and to the job: a message whose key says ``lost`` and whose
value is that last shipped line, sent before everything still on disk is shipped, so that the job
knows where the loss begins (for Percona's numbered records, a ``collector_loss`` gap; the schema
``audit-raw-key.schema.json``).

Rotated files are found by either naming: ``<live name>.<number>`` (Percona's plugin, MariaDB), lower
numbers newer, or ``<stem>.<YYYYMMDDThhmmss>[-N]<suffix>`` (MySQL Enterprise, audit_log_filter).
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from auditpipe import formats
from auditpipe.errors import ComponentError
from auditpipe.stack.kafka.topics import client_config

SCAN_CHUNK = 20000
PRUNE_EVERY = 60.0  # seconds between the rotation watch's removals of state files whose file is gone
# a catch-up said to be at work for longer than this was cut short (its process killed before it could
# say it was done): the rotation watch goes on without waiting for it
CATCH_UP_STALE_S = 600.0
SCAN_LIMIT = 1_000_000  # messages per partition read backwards, at most, to find the sources' last lines
EARLIER = 16  # messages before a source's last one kept, for a last line found in several places


@dataclass
class LastShipped:
    partition: int
    offset: int
    line: bytes
    # the values of the key's messages just before ``line`` in its partition, newest first: where ``line``
    # says nothing of its place (a file's closing </AUDIT>, at the end of every rotated file), the newest
    # of these found once in the files does (``plan``)
    earlier: tuple[bytes, ...] = ()


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
                newest: dict[bytes, deque] = {}
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
                            newest.setdefault(msg.key(), deque(maxlen=EARLIER + 1)).append(msg)
                for key, msgs in newest.items():
                    missing.discard(key)
                    msg = msgs[-1]
                    ts = msg.timestamp()[1]
                    if key not in best or ts > best[key][0]:
                        earlier = tuple(m.value() or b"" for m in reversed(list(msgs)[:-1]))
                        best[key] = (ts, LastShipped(p, msg.offset(), msg.value() or b"", earlier))
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
    """rsyslog's saved read position in the live file (its state file, ``saved_state``), read before
    rsyslog starts: once it runs it saves newer positions. None: it reads the file from its start."""
    try:
        with open(live, "rb") as f:
            inode, head = os.fstat(f.fileno()).st_ino, f.read(FILE_ID_BYTES)
    except FileNotFoundError:
        return None
    saved = saved_state(work_dir, live, inode, head)
    return None if saved is None else ResumePoint(inode, saved[0])


FILE_ID_BYTES = 512


# the heads (512 bytes) of this many files: the rotation watch looks at every rotated file of every
# source each second, and a head, once whole, never changes; about 0.6 ms of pure Python per hash
# against a dict lookup (70 sources of 3 rotated files: 75 ms a look without it, 5 ms with it, 2026-12-03)
HASHED_HEADS = 8192


@functools.lru_cache(maxsize=HASHED_HEADS)
def _siphash24(key: bytes, data: bytes) -> bytes:
    """SipHash-2-4 (Aumasson and Bernstein, 2012) of ``data`` under the 16-byte ``key``: 8 bytes."""
    mask = (1 << 64) - 1

    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & mask

    def sipround(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
        v0 = (v0 + v1) & mask
        v1 = rotl(v1, 13) ^ v0
        v0 = rotl(v0, 32)
        v2 = (v2 + v3) & mask
        v3 = rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & mask
        v3 = rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & mask
        v1 = rotl(v1, 17) ^ v2
        v2 = rotl(v2, 32)
        return v0, v1, v2, v3

    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = (k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573)
    whole = len(data) - len(data) % 8
    words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, whole, 8)]
    words.append(int.from_bytes(data[whole:], "little") | ((len(data) & 0xFF) << 56))
    for m in words:
        v = sipround(*sipround(v[0], v[1], v[2], v[3] ^ m))
        v = (v[0] ^ m, v[1], v[2], v[3])
    v = (v[0], v[1], v[2] ^ 0xFF, v[3])
    for _ in range(4):
        v = sipround(*v)
    return (v[0] ^ v[1] ^ v[2] ^ v[3]).to_bytes(8, "little")


def imfile_file_id(head: bytes) -> str:
    """imfile's id of a file's content: SipHash-2-4 of its first 512 bytes under the key 0, 1, ... 15,
    in hex; '' while the file is shorter (rsyslog 8.2302 plugins/imfile). It tells apart files that
    reused an inode: a deleted file's state file stays behind (imfile does not see the deletion of a
    file it has closed) and the inode comes back with a later file."""
    if len(head) < FILE_ID_BYTES:
        return ""
    return _siphash24(bytes(range(16)), head[:FILE_ID_BYTES]).hex()


def saved_state(work_dir: Path, live: Path, inode: int, head: bytes) -> tuple[int, float] | None:
    """rsyslog's state file for the file with ``inode`` whose first bytes are ``head``, looked up as
    imfile looks it up (``imfile-state:<inode>:<file id>``, else ``imfile-state:<inode>``): (the offset
    it read to, the state file's mtime); None if there is none or it belongs to another source. The
    offset is where an unfinished multi-line record starts (strt_offs): imfile ships such a record
    whole from there after a restart, and drops it when it closes a renamed file."""
    file_id = imfile_file_id(head)
    for name in ([f"imfile-state:{inode}:{file_id}"] if file_id else []) + [f"imfile-state:{inode}"]:
        f = work_dir / name
        try:
            mtime = f.stat().st_mtime
            state = json.loads(f.read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            return None
        if state.get("filename") != str(live):
            return None
        return int(state.get("strt_offs", state.get("curr_offs", 0))), mtime
    return None


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


# the key's lost.problem when the last shipped line is in none of the source's files (audit-raw-key.schema.json)
ROTATED_AWAY = "rotated-away"


def lost_key(key: bytes, problem: str, file: Path | None) -> bytes:
    """The source key with the collector's report of lines it lost after the message's value, and from
    which file (the oldest still on disk) it went on shipping."""
    descriptor = json.loads(key)
    descriptor["lost"] = {"problem": problem, **({"file": str(file)} if file is not None else {})}
    return json.dumps(descriptor, separators=(",", ":")).encode()


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


def _finished_records(data: bytes, base: int, fmt: str) -> tuple[list[Line], int]:
    """The records of ``data`` that are finished, framed as rsyslog frames them, and how many bytes of
    ``data`` they take: a line without its newline yet, or the lines of a multi-line record whose end
    has not been written (a file's closing ``</AUDIT>``, which rsyslog holds and never sends), are left."""
    whole = data.rfind(b"\n") + 1
    lines = _lines(data[:whole], base)
    if not formats.FRAMING[fmt].multi_line:
        return lines, whole
    framer, out, used = formats.Framer(fmt), [], 0
    for line in lines:
        for record in framer.add(line):
            out.append(Line(b"\n".join(record), record[0].offset))
            used = line.offset + len(line) + 1 - base
    return out, used


def _places(data: bytes, line: bytes) -> list[int]:
    """Where ``line`` ends as a whole line of ``data`` (the offset after its newline), last first."""
    out, needle, i = [], line + b"\n", len(data)
    while (i := data.rfind(needle, 0, i)) >= 0:
        if i == 0 or data[i - 1:i] == b"\n":  # a whole line, not the end of a longer one
            out.append(i + len(needle))
    return out


def _after_last_shipped(files: list[Path], contents: dict[Path, bytes], last_line: bytes,
                        earlier: tuple[bytes, ...]) -> tuple[Path, int] | None:
    """The file and offset just after the last line shipped, files newest first; None if it is in none.

    A line found in one place says where shipping stopped. One found in several (a file's closing
    </AUDIT>, the "]" of a JSON array file) does not: then the newest of ``earlier`` found in exactly
    one place does, and what follows it is shipped again (re-sent lines are absorbed, skipped ones
    lost); if none is, the oldest place of the last line."""
    found = [(f, end) for f in files for end in _places(contents[f], last_line)]  # newest place first
    if len(found) <= 1:
        return found[0] if found else None
    for line in earlier:
        places = [(f, end) for f in files for end in _places(contents[f], line)]
        if len(places) == 1:
            return places[0]
    return found[-1]


class RotatedWhileRead(RuntimeError):
    """Every pass over a log's files saw it rotate: what they held at one moment is not known."""


def _read_all(live: Path, tries: int = 5) -> tuple[list[Path], dict[Path, bytes], dict[Path, int]]:
    """``live`` and its rotated files, newest first, with their contents and inodes, as they were at one
    moment: a rotation while they are read renames every one of them (the live file's content would be
    read again as ``.01`` and the oldest file's missed), so the names are read again until a pass ends
    with every name still on the file read under it. After ``tries`` passes that each saw a rotation,
    ``RotatedWhileRead``: the catch-up is tried again a little later (``Collector._catch_up``) rather
    than judged on files read across rotations (a loss that is none, or lines shipped twice)."""
    for _ in range(tries):
        files = [live] + rotated_files(live)
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

        def now(f: Path) -> int | None:
            try:
                return f.stat().st_ino
            except FileNotFoundError:
                return None

        if [f for f in [live] + rotated_files(live) if now(f) is not None] == files and all(
                now(f) == inodes[f] for f in files):
            return files, contents, inodes
    raise RotatedWhileRead(f"{live} rotated during each of {tries} reads of its files")


def plan(live: Path, last_line: bytes | None, resume: ResumePoint | None,
         fmt: str = "percona-json", shipped_to: dict[str, int] | None = None,
         earlier: tuple[bytes, ...] = ()) -> tuple[list[tuple[Path, list[bytes]]], str]:
    """What to ship: [(file, records)], oldest first, and a gap description ('' if none). ``shipped_to``
    gets, per file shipped from (``file_key``), the offset up to which it is shipped (for the rotation
    watch, which then does not ship it again).

    Records are lines, or for multi-line formats what rsyslog frames; ``last_line`` is the last
    record shipped (a message value), found in the files as it is written there.

    ``resume`` is where rsyslog picks up: in the file that was live when it was looked up (wherever
    that file is now) rsyslog reads from that offset on, and it reads every file newer than that one.
    Older files, and the stretch of that file between the last shipped line and the offset, are ours.
    """
    files, contents, inodes = _read_all(live)
    if not files or last_line is None:
        return [], ""  # first start: rsyslog reads the live file from its start; rotated history is not ours
    # rsyslog's part: the file it resumes in and everything newer; without a saved position, the live file
    resumed_in = next((f for f in files if resume and inodes[f] == resume.inode), None)
    first_ours = files.index(resumed_in) if resumed_in else 1  # index of the newest file that is (partly) ours

    where, after = _after_last_shipped(files, contents, last_line, earlier) or (None, 0)
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
        if shipped_to is not None and end > 0:
            shipped_to[file_key(inodes[f], contents[f][:FILE_ID_BYTES])] = end
        if end > start:
            records = _records(contents[f][start:end], start, fmt)
            if records:
                out.append((f, records))
    return out, gap


def ship(kafka: str | dict, topic: str, partition: int | None, key: bytes, batches: list[tuple[Path, list[bytes]]],
         max_line_bytes: int, message_bytes: int, first: tuple[bytes, bytes] | None = None) -> int:
    """Ships ``batches`` under ``key`` to ``partition``, after ``first`` (a key and a value: the report of
    lost lines) when given; answers how many lines it shipped."""
    from confluent_kafka import Producer

    producer = Producer({**client_config(kafka), "enable.idempotence": True, "acks": "all",
                         "compression.type": "lz4", "linger.ms": 20, "message.max.bytes": message_bytes,
                         "log_level": 0})
    failures = []

    def delivered(err, msg):  # noqa: ARG001
        if err is not None:
            failures.append(str(err))

    if first is not None:
        producer.produce(topic, value=first[1], key=first[0], on_delivery=delivered,
                         **({"partition": partition} if partition is not None else {}))
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


def remember_start(path: Path, before: dict[str, Before], catching_up: bool,
                   shipped_to: dict[str, dict[str, int]] | None = None) -> None:
    """What the rotation watch needs of a start of the collector: which file rsyslog is to resume per
    source (its inode), whether the catch-up is still at work (the watch waits for it), and how far it
    shipped each file (the watch does not ship that again). Written before rsyslog starts
    (``catching_up``) and when the catch-up is done."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"resumed": {p: b.resume.inode for p, b in before.items() if b.resume is not None},
                               "catching_up": catching_up, "shipped": shipped_to or {}}))
    tmp.replace(path)


def catch_up(kafka: str | dict, topic: str, sources: list[dict], key_of, before: dict[str, Before],
             max_line_bytes: int, message_bytes: int,
             shipped_to: dict[str, dict[str, int]] | None = None) -> list[CatchUpReport]:
    """Step 3, after rsyslog has started: ship what it cannot read. ``shipped_to``: per source, per
    file, how far it is shipped (``plan``)."""
    reports = []
    for s in sources:
        live = Path(s["path"])
        found = before[s["path"]].last
        ends: dict[str, int] = {}
        batches, gap = plan(live, found.line if found else None, before[s["path"]].resume, s.get("format", "percona-json"),
                            ends, found.earlier if found else ())
        report = CatchUpReport(s["path"], gap=gap)
        key = key_of(s).encode()
        # a gap has a last shipped line: where the loss begins, reported to the job before what follows it
        lost = (lost_key(key, ROTATED_AWAY, batches[0][0] if batches else None), found.line) if gap and found else None
        if batches or lost:
            report.shipped = ship(kafka, topic, found.partition if found else None, key, batches,
                                  max_line_bytes, message_bytes, first=lost)
            report.files = [f"{f.name}: {len(lines)}" for f, lines in batches]
        if shipped_to is not None:  # only once shipped: what failed to ship is the watch's after all
            shipped_to[s["path"]] = ends
        reports.append(report)
    return reports


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds, from /proc; rounded down by up to a second, so files
    written just before it count as written after it, which costs re-sent lines, never lost ones)."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[19])
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, IndexError, ValueError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def open_inodes(pid: int) -> set[int] | None:
    """The inodes of the files process ``pid`` has open; None if it is gone."""
    out = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            out.add(os.stat(f"/proc/{pid}/fd/{fd}").st_ino)
        except OSError:
            pass
    return out


@dataclass
class Unread:
    """A stretch of a rotated file that rsyslog will never read: [start, end) of ``path``."""

    path: Path
    inode: int
    key: str
    start: int
    end: int
    why: str


def file_key(inode: int, head: bytes) -> str:
    """Which file this is, for the rotation watch's memory: its inode and a digest of its first bytes
    (an inode alone comes back with later files)."""
    return f"{inode}:{_siphash24(bytes(range(16)), head[:FILE_ID_BYTES]).hex()}"


def unread_rotated(live: Path, work_dir: Path, reading: set[int], started: float,
                   shipped: dict[str, int], resumed: int | None = None, seen: set[str] | None = None) -> list[Unread]:
    """What of ``live``'s rotated files rsyslog, running since ``started`` with the files ``reading``
    open, will never read, while it runs. imfile follows the live file by its name: a file renamed away
    before imfile opened it is never opened, and a line written to a rotated file after imfile closed
    it is never read (docs/collectors.md). ``shipped``: file_key -> how far this watch has shipped it
(judged files are in it too, with their size); ``resumed``: the inode of the file rsyslog was to
resume when it started (the catch-up's ``ResumePoint``), if any; ``seen`` gets the file_key of every
rotated file there is.

    Per rotated file that rsyslog does not have open:
    - a state file whose offset is past the file's end or inside a line (``_line_start``): a place
      rsyslog reached in another file; nothing of this one counts as read (what this watch shipped
      of it excepted);
    - a state file written since rsyslog started: it read the file up to that offset, and closed it;
      what follows was written later;
    - only an older state file, and it is the file rsyslog was to resume: it was live when rsyslog
      started and rotated before rsyslog opened it; the catch-up shipped what came before the
      saved offset, the rest is this watch's. Any other file with an older state file was read by
      an earlier run and is the catch-up's (a killed run's unsaved progress included);
    - no state file, written to since rsyslog started: it was live while rsyslog ran, which never
      opened it: all of it;
    - no state file, last written before rsyslog started: rotated while the collector was down,
      the catch-up's (it ships from the last shipped line on), not this.
    ``RotationWatch`` ships finished records only (``_finished_records``)."""
    out = []
    for f in rotated_files(live):
        try:
            with open(f, "rb") as handle:
                st, head = os.fstat(handle.fileno()), handle.read(FILE_ID_BYTES)
                inode, size, key = st.st_ino, st.st_size, file_key(st.st_ino, head)
                if seen is not None:
                    seen.add(key)
                if inode in reading or shipped.get(key, -1) >= size:
                    continue
                saved = saved_state(work_dir, live, inode, head)
                elsewhere = saved is not None and not _line_start(handle, saved[0], size)
        except FileNotFoundError:
            continue
        if elsewhere:  # rsyslog saved a place it reached in another file under this one's identity
            start, why = shipped.get(key, 0), "the collector's saved position for it is no line start of it"
        elif key in shipped:
            start = max(shipped[key], saved[0] if saved and saved[1] >= started else 0)
            why = "written to after it was rotated and read"
        elif saved and saved[1] >= started:
            start, why = saved[0], "written to after the collector read it to its end"
        elif saved and inode == resumed:
            start, why = saved[0], "rotated before the collector resumed it"
        elif not saved and st.st_mtime >= started:
            start, why = 0, "rotated before the collector opened it"
        else:
            start, why = size, "the catch-up's"
        if start >= size:
            shipped[key] = size
            continue
        out.append(Unread(f, inode, key, start, size, why))
    return out


def _line_start(f, offset: int, size: int) -> bool:
    """Whether ``offset`` can be where rsyslog stopped reading the open file ``f`` of ``size`` bytes:
    its start, or just after one of its newlines. imfile can save, under a file's identity, a place it
    reached in another file: a file renamed away while rsyslog was frozen and a new live file in its
    place left the first file's state file holding the second's offset (rsyslog 8.2302); taken for
    the first file's, it marked lines nobody read as read."""
    if offset == 0:
        return True
    if offset > size:
        return False
    f.seek(offset - 1)
    return f.read(1) == b"\n"


def open_unread(part: Unread, live: Path):
    """``part``'s file opened for reading, under whichever name it has now, or None when it is gone. A
    rotation renames every kept file (``audit.log.01`` becomes ``.02``, the live file ``.01``), and the
    server can rotate between the look that found ``part`` and this read: the name then holds another
    file, whose lines would be shipped in ``part``'s place (seen in a fleet of 40 sources rotating every
    second: one file's records never shipped, the next one's twice)."""
    for f in [part.path] + [p for p in rotated_files(live) if p != part.path]:
        try:
            handle = open(f, "rb")
        except FileNotFoundError:
            continue
        st = os.fstat(handle.fileno())
        if st.st_ino == part.inode and file_key(st.st_ino, handle.read(FILE_ID_BYTES)) == part.key:
            return handle
        handle.close()
    return None


def stale_state_files(work_dir: Path, lives: list[Path], older_than: float) -> list[Path]:
    """rsyslog's state files for ``lives`` whose file is gone (written more than ``older_than``
    seconds ago): imfile keeps them (deleteStateOnFileDelete off, collectors/rsyslog/source.conf.tmpl)."""
    current, ours = set(), {str(live) for live in lives}
    for live in lives:
        for f in [live] + rotated_files(live):
            try:
                with open(f, "rb") as handle:
                    inode, head = os.fstat(handle.fileno()).st_ino, handle.read(FILE_ID_BYTES)
            except FileNotFoundError:
                continue
            current.add(f"imfile-state:{inode}")
            if file_id := imfile_file_id(head):
                current.add(f"imfile-state:{inode}:{file_id}")
    out, now = [], time.time()
    for f in work_dir.glob("imfile-state:*"):
        try:
            if f.name in current or now - f.stat().st_mtime < older_than:
                continue
            if json.loads(f.read_text()).get("filename") in ours:
                out.append(f)
        except (OSError, ValueError, AttributeError):
            continue
    return out


def _age(path: Path) -> float:
    """Seconds since ``path`` was last written; 0 when it cannot be read."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


class RotationWatch:
    """Ships, while rsyslog runs, what it will never read of rotated files (``unread_rotated``), the
    same way the catch-up ships: the source's key, records framed as rsyslog frames them. What it has
    shipped is kept in ``memory`` (a JSON file) across restarts of whoever runs it; ``resume_file``
    holds, per source, the inode of the file rsyslog was to resume at its last start
    (``remember_resume_points``)."""

    def __init__(self, kafka: str | dict, topic: str, key_of, work_dir: Path, memory: Path, resume_file: Path,
                 max_line_bytes: int, message_bytes: int):
        self.kafka, self.topic, self.key_of, self.work_dir, self.memory = kafka, topic, key_of, work_dir, memory
        self.resume_file, self.resumed, self.resumed_started = resume_file, {}, None
        self.next_prune = 0.0
        self.max_line_bytes, self.message_bytes = max_line_bytes, message_bytes
        try:
            kept = json.loads(memory.read_text())
        except (OSError, ValueError):
            kept = None
        # a memory of another shape (hand-edited, cut short) is no memory: files are judged again,
        # which can only re-send
        self.shipped: dict[str, dict[str, int]] = {
            path: {k: n for k, n in per.items() if isinstance(n, int)}
            for path, per in (kept.items() if isinstance(kept, dict) else ()) if isinstance(per, dict)}

    def check(self, sources: list[dict], pid: int) -> list[CatchUpReport]:
        """One look at every source while rsyslog runs as ``pid``; a failure to ship raises (nothing is
        marked shipped: the next look ships it again)."""
        started, reading = process_started(pid), open_inodes(pid)
        if started is None or reading is None:
            return []  # rsyslog is gone: its next start's catch-up is in charge
        try:  # the collector's start: written before rsyslog started, and when its catch-up is done
            start = json.loads(self.resume_file.read_text())
        except (OSError, ValueError):
            start = {}
        if not isinstance(start, dict):
            start = {}
        if start.get("catching_up") and _age(self.resume_file) < CATCH_UP_STALE_S:
            return []  # the catch-up is at work: what it ships is not the watch's to ship again
        if self.resumed_started != started:
            try:
                self.resumed = {path: int(i) for path, i in (start.get("resumed") or {}).items()}
                ends = {path: {key: int(end) for key, end in files.items()}
                        for path, files in (start.get("shipped") or {}).items()}
            except (AttributeError, TypeError, ValueError):  # another shape: nothing known of the start
                self.resumed, ends = {}, {}
            for path, files in ends.items():
                mine = self.shipped.setdefault(path, {})
                for key, end in files.items():
                    mine[key] = max(mine.get(key, 0), end)
            self.resumed_started = started
        reports = []
        if time.monotonic() >= self.next_prune:
            self.next_prune = time.monotonic() + PRUNE_EVERY
            for f in stale_state_files(self.work_dir, [Path(s["path"]) for s in sources], PRUNE_EVERY):
                f.unlink(missing_ok=True)
        looked = []
        for s in sources:
            live = Path(s["path"])
            shipped = self.shipped.setdefault(str(live), {})
            before = dict(shipped)
            resumed = self.resumed.get(str(live)) if self.resumed_started == started else None
            present: set[str] = set()
            looked.append((s, live, shipped, before, present,
                           unread_rotated(live, self.work_dir, reading, started, shipped, resumed, present)))
        # listed again once every source's files were looked at, once for all: a file that ends in an
        # unfinished record (every rotated Percona XML file) is a part at every look, and each listing is a
        # stat per descriptor of rsyslog's, one per source and more
        opened_since = open_inodes(pid) if any(parts for *_, parts in looked) else set()
        if opened_since is None:
            return []  # rsyslog died since the first listing: its next start's catch-up is in charge
        for s, live, shipped, before, present, parts in looked:
            for part in parts:
                if part.inode in opened_since:
                    continue  # opened just before it was renamed: rsyslog reads it
                if process_started(pid) != started:
                    return reports  # rsyslog died meanwhile: what it did not read is its catch-up's
                f = open_unread(part, live)
                if f is None:
                    continue  # deleted since it was looked at (the server keeps only so many files)
                with f:
                    f.seek(part.start)
                    data = f.read(part.end - part.start)
                records, used = _finished_records(data, part.start, s.get("format", "percona-json"))
                report = CatchUpReport(f"{live}: {part.path.name}, {part.why}")
                if records:
                    report.shipped = ship(self.kafka, self.topic, None, self.key_of(s).encode(), [(part.path, records)],
                                          self.max_line_bytes, self.message_bytes)
                    report.files = [f"{part.path.name}: {len(records)}"]
                    reports.append(report)
                shipped[part.key] = part.start + used
            for key in [k for k in shipped if k not in present]:  # deleted
                del shipped[key]
            if shipped != before:
                self._remember()
        return reports

    def _remember(self) -> None:
        tmp = self.memory.with_name(self.memory.name + ".tmp")
        tmp.write_text(json.dumps(self.shipped))
        tmp.replace(self.memory)


__all__ = ["before_start", "catch_up", "plan", "rotated_files", "unread_rotated", "CatchUpReport", "ResumePoint",
           "RotationWatch"]
