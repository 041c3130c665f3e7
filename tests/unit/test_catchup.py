"""The collector's catch-up plan (cli/auditpipe/catchup.py) on files laid out as Percona rotates them.
(Against the real rsyslog and Kafka: tests/faults/test_killed_parts.py, kill -9 during rotation.)"""

import json
from pathlib import Path

from auditpipe.catchup import ResumePoint, cut_key, cut_report, plan, rotated_files
from auditpipe.components.collector import source_key


def lines(a: int, b: int) -> list[bytes]:
    return [f"line {i}".encode() for i in range(a, b)]


def write(path: Path, ls: list[bytes], partial: bytes = b"") -> None:
    path.write_bytes(b"".join(x + b"\n" for x in ls) + partial)


def layout(tmp_path: Path) -> Path:
    """audit.log.03 (oldest) .. .01, then the live file: lines 0-99 in order."""
    live = tmp_path / "audit.log"
    write(tmp_path / "audit.log.03", lines(0, 20))
    write(tmp_path / "audit.log.02", lines(20, 40))
    write(tmp_path / "audit.log.01", lines(40, 60))
    write(live, lines(60, 100), partial=b"line 100 still being writ")
    return live


def shipped(batches) -> list[bytes]:
    return [x for _, ls in batches for x in ls]


def resume_after(f: Path, line: bytes) -> ResumePoint:
    """rsyslog's saved position in ``f``: just after ``line``."""
    data = f.read_bytes()
    return ResumePoint(f.stat().st_ino, data.index(line + b"\n") + len(line) + 1)


def test_rotated_files_newest_first(tmp_path):
    live = layout(tmp_path)
    (tmp_path / "audit.log.manifest.json").write_text("{}")
    assert [p.name for p in rotated_files(live)] == ["audit.log.01", "audit.log.02", "audit.log.03"]


def test_files_rotated_while_down_are_shipped_from_the_last_shipped_line_on(tmp_path):
    live = layout(tmp_path)
    # shipped up to line 25 (in .02); rsyslog will resume the live file at line 70
    batches, gap = plan(live, b"line 25", resume_after(live, b"line 69"))
    assert gap == ""
    assert shipped(batches) == lines(26, 70), "rest of .02, all of .01, live file up to rsyslog's position"
    assert [f.name for f, _ in batches] == ["audit.log.02", "audit.log.01", "audit.log"]


def test_lines_its_queue_lost_in_the_live_file_are_shipped(tmp_path):
    live = layout(tmp_path)
    batches, gap = plan(live, b"line 80", resume_after(live, b"line 95"))
    assert shipped(batches) == lines(81, 96) and gap == ""


def test_nothing_when_rsyslog_resumes_before_the_last_shipped_line(tmp_path):
    live = layout(tmp_path)
    batches, _ = plan(live, b"line 90", resume_after(live, b"line 85"))
    assert batches == []


def test_a_live_file_without_saved_position_is_left_to_rsyslog(tmp_path):
    live = layout(tmp_path)
    batches, _ = plan(live, b"line 55", None)
    assert shipped(batches) == lines(56, 60), "rsyslog reads the new live file from its start"


def test_a_last_line_no_longer_on_disk_is_a_gap_and_everything_kept_is_shipped(tmp_path):
    live = layout(tmp_path)
    batches, gap = plan(live, b"line -5", None)
    assert "in none of its files any more" in gap
    assert shipped(batches) == lines(0, 60)


def test_a_file_rotated_after_rsyslog_looked_is_still_resumed_by_rsyslog(tmp_path):
    live = layout(tmp_path)
    resume = resume_after(live, b"line 70")
    # the server rotates after step 1: the file rsyslog resumes is now audit.log.01
    for n in (3, 2, 1):
        (tmp_path / f"audit.log.{n:02d}").rename(tmp_path / f"audit.log.{n + 1:02d}")
    live.rename(tmp_path / "audit.log.01")
    write(live, lines(101, 110))
    batches, _ = plan(live, b"line 65", resume)
    assert shipped(batches) == lines(66, 71), "up to rsyslog's offset in that file; the newer ones are rsyslog's"


def test_first_start_ships_no_history(tmp_path):
    live = layout(tmp_path)
    assert plan(live, None, None) == ([], "")


def test_a_line_is_matched_whole_not_as_a_suffix(tmp_path):
    live = tmp_path / "audit.log"
    write(tmp_path / "audit.log.01", [b"xline 5", b"a"])
    write(live, [b"line 5", b"b"])
    batches, _ = plan(live, b"line 5", resume_after(live, b"b"))
    assert shipped(batches) == [b"b"]


def test_lines_know_where_they_start_in_their_file(tmp_path):
    live = tmp_path / "audit.log"
    write(tmp_path / "audit.log.01", [b"first", b"second", b"", b"third"])
    write(live, [b"fourth"])
    batches, _ = plan(live, b"first", None)
    assert [f.name for f, _ in batches] == ["audit.log.01"] and batches[0][1] == [b"second", b"third"]
    for f, lines in batches:
        data = f.read_bytes()
        for line in lines:
            assert data[line.offset:line.offset + len(line)] == line


def test_a_line_rsyslog_cannot_ship_whole_is_reported_the_way_rsyslog_reports_it():
    assert cut_report(b"x" * 10, 10) is None
    assert cut_report(b"ab\0cd", 10) == ("nul-byte", b"ab", 5)
    assert cut_report(b"y" * 30, 10) == ("too-long", b"y" * 11, 11), "rsyslog reads max_line_size + 1 bytes"
    key = source_key("db-01", "percona-json", "/logs/audit.log").encode()
    report = json.loads(cut_key(key, "nul-byte", 5, Path("/logs/audit.log.02"), 640))
    assert report == {**json.loads(key), "cut": {"problem": "nul-byte", "line_bytes": 5,
                                                 "file": "/logs/audit.log.02", "offset": 640}}
