"""The fault suite's input faults, on the real local stack: a log with 1000 malformed lines of every
kind, and a log rotated every second at 5,000 events/s. The store ends with exactly the generated
events, each as written; the stats sum to them; every bad line is a dead letter with its reason."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter

import pytest

from auditpipe.stack import limits
from auditpipe.stack.collector.catchup import cut_report
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.faults

MiB = 1024 * 1024


def _record(i: int, **fields) -> dict:
    return {"name": "Query", "record": f"bad{i}_x", "timestamp": "2026-11-22T10:00:00 UTC", **fields}


def _line(rec) -> bytes:
    return json.dumps({"audit_record": rec}, separators=(",", ":")).encode()


def malformed_lines(n: int) -> list[tuple[str, bytes]]:
    """``n`` distinct bad lines, (kind, line), every kind in turn; the multi-MiB ones once each."""
    kinds = [
        ("truncated", lambda i: _line(_record(i, sqltext="SELECT 1"))[:-7]),
        ("invalid UTF-8", lambda i: _line(_record(i, sqltext="x")).replace(b'"x"', b'"\xc3\x28 \xff%d"' % i)),
        ("NUL after a valid record", lambda i: _line(_record(i)) + b"\0trailing bytes %d" % i),
        ("NUL inside a string", lambda i: _line(_record(i, sqltext="SELECT 'a@b'")).replace(b"@", b"\0")),
        ("NUL bytes before a record", lambda i: b"\0" * (i % 7 + 1) + _line(_record(i))),
        ("deep nesting", lambda i: b'{"audit_record":{"name":"Query","extra":' + b"[" * 10_000 + b"%d" % i
         + b"]" * 10_000 + b"}}"),
        ("record is a number", lambda i: _line({**_record(i), "record": i})),
        ("status is text", lambda i: _line(_record(i, status=f"failed {i}"))),
        ("user is an object", lambda i: _line(_record(i, user={"name": f"u{i}"}))),
        ("top-level array", lambda i: json.dumps([_record(i)]).encode()),
        ("audit_record is an array", lambda i: b'{"audit_record":[%d]}' % i),
        ("whitespace only", lambda i: b" " * (i + 1) + b"\t"),
        ("empty", lambda i: b""),
    ]
    out = [("3 MiB unparsable", b'{"audit_record":{"sqltext":"' + b"a" * (3 * MiB)),
           ("3 MiB invalid UTF-8", b"\xff" * (3 * MiB)),
           ("longer than max_line_size", b'{"audit_record":{"name":"Query","sqltext":"' + b"b" * (5 * MiB) + b'"}}')]
    i = 0
    while len(out) < n:
        kind, make = kinds[i % len(kinds)]
        out.append((kind, make(i)))
        i += 1
    return out


def test_a_log_with_1000_malformed_lines_of_every_kind(stack):
    server = "fault-malformed"
    bad = malformed_lines(1000)
    assert len({line for _, line in bad if line}) == len([1 for _, line in bad if line]), "distinct lines"
    # One rotation, far from the file's creation: the multi-MiB lines come first, and at a 4 MiB
    # rotation size the first file was renamed milliseconds after it was created, which rsyslog's
    # imfile does not read (15 records lost in one of three runs; docs/collectors.md). That is a
    # rotation limit, tested apart; this test is about what the lines hold.
    m = simulate(stack.log_path(server), rate=2000, duration=10, speedup=4, seed=61, rotate_on_size=16 * MiB,
                 rotations=90, late_writes=2, malformed=len(bad), bad_lines=[line for _, line in bad])
    assert m.malformed == len(bad)
    stack.assert_stored_and_counted_exactly_once(server, m)

    max_line = limits.from_config(stack.cfg).max_line_bytes
    # what each bad line must become: a dead letter of its whole bytes (stage parse), or, for a line the
    # collector cannot ship whole, one of the bytes it could ship with the report of what was cut
    # (stage collect). An empty line is no record and no dead letter: the collector never sees one.
    expected = Counter()
    for _kind, line in bad:
        if not line:
            continue
        cut = cut_report(line, max_line)
        expected[("collect", cut[0], hashlib.sha256(cut[1]).hexdigest(), cut[2]) if cut
                 else ("parse", hashlib.sha256(line).hexdigest())] += 1
    n_expected = sum(expected.values())
    dead = stack.wait_for(f"{n_expected} dead letters", lambda: (len(d := stack.dead_letters(server)) >= n_expected,
                                                                 len(d)), timeout=300)
    dead = stack.dead_letters(server)
    got = Counter()
    for d in dead:
        assert d["reason"], d["_id"]
        if d["stage"] == "collect":
            report = json.loads(d["key"]["text"])["cut"]
            got[("collect", report["problem"], d["original"]["sha256"], report["line_bytes"])] += 1
            assert report["file"].startswith(str(stack.log_path(server))) and report["offset"] >= 0
            assert f"byte offset {report['offset']}" in d["reason"]
        else:
            got[(d["stage"], d["original"]["sha256"])] += 1
    assert got == expected, f"missing: {expected - got}; unexpected: {got - expected}"

    reasons = {kind: [] for kind, _ in bad}
    by_digest = {d["original"]["sha256"]: d for d in dead}
    for kind, line in bad:
        d = by_digest.get(hashlib.sha256(line).hexdigest())
        if d:
            reasons[kind].append(d["reason"])
            if len(line) <= max_line:
                assert base64.b64decode(d["original"]["base64"]) == line, f"{kind}: kept whole"
    assert all("nesting depth" in r for r in reasons["deep nesting"]), reasons["deep nesting"][:1]
    assert all(r == "field 'record' is a number, expected a string" for r in reasons["record is a number"])
    assert all("invalid UTF-8" in r for r in reasons["invalid UTF-8"])
    nul = [d for d in dead if d["stage"] == "collect" and "NUL byte" in d["reason"]]
    assert len(nul) == sum(1 for kind, _ in bad if kind.startswith("NUL")), "every NUL line reported as cut"


def test_a_log_rotated_every_second_at_5000_events_per_second(stack):
    server = "fault-fast-rotation"
    raw_before = stack.raw_messages()
    # ~330 bytes a record: 1.6 MiB is about one second of writing; every file kept to compare them all
    m = simulate(stack.log_path(server), rate=5000, duration=9, speedup=1, seed=62,
                 rotate_on_size=1600 * 1024, rotations=90, late_writes=3)
    assert m.wall_seconds < 12, f"the writer kept the pace ({m.wall_seconds:.0f}s for 9s of records)"
    assert m.rotations >= 7, m.rotations
    stack.assert_stored_and_counted_exactly_once(server, m, timeout=600)
    assert stack.raw_messages() - raw_before == m.records, "shipped once: no line lost or re-sent"
