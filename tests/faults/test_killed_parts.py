"""Fault injection on the real local stack: a part of it dies mid-stream (kill -9) or freezes, and
nobody runs `auditpipe up`. Each test checks that the part comes back by itself (the supervisor),
that `status` shows the restart, and that the store ends with exactly the generated events, whose
one-minute counts sum to them, whatever was re-sent on the way."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from auditpipe.simulate import simulate

pytestmark = pytest.mark.faults

RATE = 2000


def _write_in_background(stack, server: str, seconds: float, **kw):
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("m", simulate(
        stack.log_path(server), rate=RATE, duration=seconds, speedup=1, seed=hash(server) % 1000, **kw)))
    t.start()
    return t, result


def _assert_exactly_stored_and_counted(stack, server: str, m, raw_before: int, timeout: float = 300):
    stack.wait_for(f"{m.records} events of {server}", lambda: ((n := stack.count(server)) >= m.records, n),
                   timeout=timeout)
    ids = stack.stored_ids(server)
    assert len(ids) == m.records, f"exactly N documents: {len(ids)} for {m.records}"
    assert set(ids) == {f"{i}_{m.log_start}" for i in range(1, m.records + 1)}, "the generated ones"
    total = stack.wait_for("stats that add up to N", lambda: ((t := stack.stats_total(server)) >= m.records, t))
    assert total == m.records, f"each event counted once: {total} for {m.records}"
    shipped = stack.raw_messages() - raw_before
    assert shipped >= m.records
    return shipped - m.records  # re-sent by the collector (or the broker)


def _restarts(stack, part: str) -> str:
    return next(r["detail"] for r in stack.status() if r["component"] == part)


@pytest.mark.parametrize("part,server", [("collector", "fault-collector"), ("kafka", "fault-kafka"),
                                         ("store", "fault-store"), ("flink", "fault-job")])
def test_a_killed_part_comes_back_by_itself_and_nothing_is_lost_or_counted_twice(stack, part, server):
    raw_before = stack.raw_messages()
    writer, result = _write_in_background(stack, server, 12, rotate_on_size=0)
    try:
        stack.wait_for(f"{server} events arriving", lambda: ((n := stack.count(server)) > 2000, n), timeout=120,
                       every=0.5)
        old = stack.kill(part)
        stack.wait_back(part, old)
    finally:
        writer.join()
    assert "restarted" in _restarts(stack, part), "status shows the restart"
    resent = _assert_exactly_stored_and_counted(stack, server, result["m"], raw_before)
    print(f"kill -9 of {part}: {resent} records re-sent, absorbed")


def test_a_frozen_store_holds_the_pipeline_back_and_nothing_is_lost(stack):
    """SIGSTOP for 90 s: writes time out and are retried, the job may restart from its checkpoint;
    the store is alive, so nothing restarts it. After SIGCONT everything arrives, once."""
    server = "fault-frozen-store"
    raw_before = stack.raw_messages()
    writer, result = _write_in_background(stack, server, 10, rotate_on_size=0)
    stack.wait_for(f"{server} events arriving", lambda: ((n := stack.count(server)) > 1000, n), timeout=120,
                   every=0.5)
    pid = stack.kill("store", signal.SIGSTOP)
    try:
        time.sleep(90)  # the fault itself lasts this long; nothing is awaited here
        assert stack.pid("store") == pid, "a frozen store is not restarted"
    finally:
        stack.kill("store", signal.SIGCONT)
        writer.join()
    _assert_exactly_stored_and_counted(stack, server, result["m"], raw_before, timeout=400)
