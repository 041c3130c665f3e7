"""The supervisor keeps each part's log under a size: the log's content moves to <name>.1 and the
part, still running with its file open, writes on at the start of the emptied file."""

import sys
import time
from types import SimpleNamespace

from auditpipe.process import ManagedProcess
from auditpipe.stack.supervisor import LogCapping, cap_log, stack_lock

WRITER = """
import sys, time
n = 0
while True:
    print(f"line {n:08d} " + "x" * 60, flush=True)  # to the log ManagedProcess opened
    n += 1
    time.sleep(0.0002)
# MARKER
"""


def _numbers(text: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith("line ")]


def _wait_for_size(path, size: int) -> None:
    deadline = time.monotonic() + 30
    while path.stat().st_size <= size:
        assert time.monotonic() < deadline, f"{path} stayed under {size} bytes"
        time.sleep(0.01)


def test_a_log_over_its_cap_moves_aside_and_the_running_part_writes_on_from_its_start(tmp_path):
    part = ManagedProcess("writer", tmp_path)
    part.start([sys.executable, "-c", WRITER.replace("MARKER", str(tmp_path))])
    try:
        cap = 64 * 1024
        _wait_for_size(part.log_file, cap)
        assert cap_log(part.log_file, cap)
        _wait_for_size(part.log_file, 16 * 1024)  # the part has written on
    finally:
        part.stop(timeout=5)
    previous = part.log_file.with_name("writer.log.1").read_bytes()
    current = part.log_file.read_bytes()
    assert len(previous) > cap
    assert b"\0" not in current, "a hole: the part wrote at its old offset, not at the emptied file's end"
    assert len(current) < len(previous) + 64 * 1024, "the log was not emptied"
    before, after = _numbers(previous.decode()), _numbers(current.decode(errors="replace"))
    assert before == list(range(len(before))), "the moved log holds every line from the first"
    assert after == list(range(after[0], after[0] + len(after))), "the new log holds every line after its first"
    assert before[-1] < after[0] <= before[-1] + 200, "at most the lines written during the copy are lost"


def test_a_log_under_its_cap_or_missing_is_left_alone(tmp_path):
    log = tmp_path / "x.log"
    assert not cap_log(log, 10)
    log.write_text("short\n")
    assert not cap_log(log, 10)
    assert log.read_text() == "short\n" and not (tmp_path / "x.log.1").exists()


def test_the_supervisor_caps_its_parts_logs_only_while_up_and_down_are_not_at_work(tmp_path, capsys):
    cfg = SimpleNamespace(state_dir=tmp_path)
    logs = [tmp_path / "logs" / "kafka.log", tmp_path / "logs" / "flink.log"]
    logs[0].parent.mkdir()
    logs[0].write_text("k" * 200)
    logs[1].write_text("f" * 50)
    gaps = tmp_path / "logs" / "collector-gaps.log"
    gaps.write_text("g" * 200)
    capping = LogCapping(cfg, logs, cap=100, every=0)
    with stack_lock(cfg):  # `up` at work
        capping.maybe_run()
    assert logs[0].stat().st_size == 200, "not while a part may be starting"
    capping.maybe_run()
    assert logs[0].stat().st_size == 0 and (tmp_path / "logs" / "kafka.log.1").read_text() == "k" * 200
    assert logs[1].read_text() == "f" * 50 and gaps.read_text() == "g" * 200
    assert "kafka.log: over 100 bytes, moved to kafka.log.1" in capsys.readouterr().out
