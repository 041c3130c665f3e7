"""End to end on the real stack: rotating audit log -> rsyslog -> Kafka -> Flink -> FerretDB."""

from __future__ import annotations

import base64
import threading
import time
from collections import Counter

import pytest

from auditpipe.tools.simulate import MALFORMED_LINES, simulate

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]


def test_rotating_log_arrives_exactly_once(stack):
    server = "e2e-rotation"
    # 10k lines/s with a rotation every ~160 ms: far more often than a real server rotates, but slower
    # than the collector's reaction (a file renamed away before imfile opened it would be missed;
    # docs/collectors.md).
    m = simulate(stack.log_path(server), rate=2000, duration=10, speedup=5, seed=11,
                 rotate_on_size=512 * 1024, rotations=50, late_writes=3, malformed=5, failed_login_burst=30)
    assert m.rotations >= 5 and m.late_writes == 3 * m.rotations

    docs = stack.stored_documents(server, m.records)
    ids = [d["record_id"] for d in docs]
    counts = Counter(ids)
    assert len(ids) == m.records, "exactly N documents"
    assert max(counts.values()) == 1, "no duplicates"
    assert set(ids) == {f"{i}_{m.log_start}" for i in range(1, m.records + 1)}
    assert stack.assert_stored_as_written(server, docs=docs) == m.records, "every line compared, field by field"

    total = stack.wait_for("stats that add up to N", lambda: ((t := stack.stats_total(server)) == m.records, t))
    assert total == m.records
    stack.assert_evidence_and_counts_follow(server, docs)

    dead = stack.wait_for("5 dead letters", lambda: (len(d := stack.dead_letters(server)) >= 5, d))
    assert len(dead) == m.malformed == 5
    assert all(d["stage"] == "parse" and d["reason"] for d in dead)
    originals = {base64.b64decode(d["original"]["base64"]) for d in dead}
    assert originals == set(MALFORMED_LINES), "the original bytes, exactly, invalid UTF-8 included"
    reasons = " | ".join(sorted(d["reason"] for d in dead))
    assert "invalid UTF-8" in reasons and "missing required field 'record'" in reasons


def test_a_file_rotated_before_the_collector_opened_it_and_lines_written_after_it_closed_one_arrive(stack, tmp_path):
    """The two things imfile never reads while it runs (docs/collectors.md), made to happen for sure: a
    file written and renamed away while rsyslog is frozen (SIGSTOP), and lines appended to a rotated
    file rsyslog has read and closed. The supervisor's rotation watch ships both: every record once."""
    import os
    import signal

    from auditpipe.stack.collector.catchup import open_inodes

    server = "e2e-unopened"
    scratch = tmp_path / "audit.log"
    m = simulate(scratch, rate=1000, duration=1.2, speedup=1000, seed=23, rotate_on_size=1 << 30, rotations=0,
                 late_writes=0)
    lines = scratch.read_bytes().splitlines(keepends=True)
    assert len(lines) == m.records == 1200
    first, second, third, late = lines[:400], lines[400:800], lines[800:1100], lines[1100:]
    live = stack.log_path(server)
    one, two = live.with_name("audit.log.01"), live.with_name("audit.log.02")
    live.parent.mkdir(parents=True, exist_ok=True)
    shipped_before = stack.raw_messages()
    rsyslog = stack.pid("collector")
    os.kill(rsyslog, signal.SIGSTOP)
    try:
        live.write_bytes(b"".join(first))
        live.rename(one)  # renamed away before rsyslog could open it
        live.write_bytes(b"".join(second))
    finally:
        os.kill(rsyslog, signal.SIGCONT)
    stack.wait_for("both files on audit.raw", lambda: ((n := stack.raw_messages() - shipped_before) >= 800, n),
                   timeout=120, every=0.5)
    one.rename(two)
    live.rename(one)
    second_file = one.stat().st_ino
    live.write_bytes(b"".join(third))
    stack.wait_for("the third file on audit.raw", lambda: ((n := stack.raw_messages() - shipped_before) >= 1100, n),
                   timeout=120, every=0.5)
    stack.wait_for("rsyslog to close the second file", lambda: (second_file not in (r := open_inodes(rsyslog)), r),
                   timeout=60, every=0.2)
    with open(one, "ab", buffering=0) as f:
        f.write(b"".join(late))  # a late writer: after the collector moved on

    try:
        docs = stack.stored_documents(server, m.records)
    except AssertionError as e:  # which of the four parts is missing, and what the rotation watch said
        stored = {d["record_id"] for d in stack.db()[stack.cfg.store["events_collection"]].find(
            {"server": server}, {"record_id": 1})}
        parts = {"first (the watch)": (1, 400), "second (rsyslog)": (401, 800), "third (rsyslog)": (801, 1100),
                 "late (the watch)": (1101, 1200)}
        held = {name: sum(f"{i}_{m.log_start}" in stored for i in range(a, b + 1)) for name, (a, b) in parts.items()}
        log = (stack.cfg.state_dir / "logs" / "supervisor.log").read_text().splitlines()
        raise AssertionError(f"{e}\nstored per part: {held}\nsupervisor log:\n" + "\n".join(log[-25:])) from None
    ids = [d["record_id"] for d in docs]
    assert len(ids) == m.records and set(ids) == m.record_ids(), "every record, once"
    assert stack.assert_stored_as_written(server, docs=docs) == m.records
    total = stack.wait_for("stats that add up to N", lambda: ((t := stack.stats_total(server)) >= m.records, t))
    assert total == m.records
    log = (stack.cfg.state_dir / "logs" / "supervisor.log").read_text()
    # the first file: never opened, or (rsyslog acting on the file's creation once it runs again, when the
    # name is the second file's) opened and closed with nothing read, its state file at offset 0, or holding
    # the offset rsyslog reached in the second file (past the first one's end): the watch ships it, named as
    # it was when the watch looked (audit.log.01, or audit.log.02 once the test has rotated again). Or
    # rsyslog, acting on that creation, read it whole before the watch looked: nothing for the watch to
    # ship (every record is stored once either way, counted above)
    whys = ("rotated before the collector opened it", "written to after the collector read it to its end",
            "the collector's saved position for it is no line start of it")
    first = [line for line in log.splitlines() if "shipped 400 lines rsyslog will not read" in line]
    assert all(any(f"{live}: audit.log.0{n}, {why}" in line for n in (1, 2) for why in whys) for line in first), first
    assert len(first) <= 1, first
    assert f"shipped 100 lines rsyslog will not read: {live}: audit.log.01, written to after" in log, log[-2000:]


def test_flink_killed_mid_stream_restarts_from_checkpoint(stack):
    """kill -9 of the job after a checkpoint of this run: the supervisor restarts it (nobody runs `up`),
    it restores the window state and offsets of that checkpoint, and every event is stored and counted once."""
    server = "e2e-crash"
    from auditpipe.stack.flink.job import FlinkJob

    flink = FlinkJob(stack.cfg)
    result, stop = {}, threading.Event()
    # written until the job runs again and some seconds after: records before the checkpoint, between
    # it and the kill, while the job is down and after it is back (at most 240 s)
    writer = threading.Thread(target=lambda: result.setdefault("m", simulate(
        stack.log_path(server), rate=300, duration=240, speedup=1, seed=12, rotate_on_size=512 * 1024,
        rotations=90, late_writes=2, stop=stop)))
    shipped_before, stored_before = stack.raw_messages(), stack.estimate()
    started_ms = int(time.time() * 1000)  # the records are timed from 240 s before it (simulate)
    writer.start()
    try:
        stack.wait_for_a_checkpoint_of_this_run(shipped_before)
        assert writer.is_alive(), "the kill must come mid-stream"
        killed_pid = stack.kill("flink")
        stack.wait_for("the job process to be gone", lambda: (not flink.proc.running() or flink.proc.pid() != killed_pid,
                                                               None), timeout=30, every=0.2)
        stored_at_kill = stack.estimate()  # this module's events: the other test's and this one's so far
        stack.wait_back("flink", killed_pid)
        stack.wait_for("the restarted job to run", lambda: (flink.job_state() == "RUNNING", flink.job_state()),
                       timeout=180)
        assert writer.is_alive(), "records are written while the job is down and after it is back"
        time.sleep(5)
    finally:
        stop.set()
        writer.join()
    m = result["m"]
    assert stored_at_kill < stored_before + m.records, "the kill happened mid-stream"
    restore_log = (stack.cfg.state_dir / "logs" / "flink.log").read_text()
    assert "Restoring job" in restore_log, "the job restarted from its retained checkpoint"
    flink_row = next(r for r in stack.status() if r["component"] == "flink")
    assert "restarted" in flink_row["detail"], f"status shows the restart: {flink_row}"

    docs = stack.stored_documents(server, m.records, timeout=240)
    ids = [d["record_id"] for d in docs]
    assert len(ids) == m.records and set(ids) == {f"{i}_{m.log_start}" for i in range(1, m.records + 1)}
    stack.assert_stored_as_written(server, docs=docs)
    total = stack.wait_for("stats that add up to N after the restart",
                           lambda: ((t := stack.stats_total(server)) >= m.records, t))
    assert total == m.records, "restored window state: no event counted twice or lost"
    stack.assert_evidence_and_counts_follow(server, docs)
    # the chain was restored too: every event's link is the one it had before the kill (a stored
    # document keeps the link it was first written with), the archive holds each event once
    # (FileSink's commit on checkpoints) with the same links, and verify agrees
    stack.assert_archived_exactly(server)
    verified = stack.cli("verify", "--server", server, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # the event stream (docs/stream.md) across the kill: what the job wrote before it and had not committed
    # with a checkpoint is aborted and written again, so a consumer reading committed messages gets each
    # event of the run once on each format's topic (one reading uncommitted ones may see some twice)
    from auditpipe.stack.kafka.stream import read_committed

    wanted, roles = {f"{server}/{i}" for i in ids}, ("events", "ocsf", "ecs")
    got = read_committed(stack.cfg, roles, lambda role, key: key in wanted,
                         lambda out: all(wanted <= {x.key().decode() for x in out[r]} for r in roles),
                         since_ms=started_ms - 300_000, group="tests-crash-stream", timeout=240)
    for role in roles:
        keys = Counter(x.key().decode() for x in got[role])
        assert set(keys) == wanted and max(keys.values()) == 1, (role, [k for k, n in keys.items() if n > 1][:5])
