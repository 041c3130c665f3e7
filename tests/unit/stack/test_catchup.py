"""The collector's catch-up plan (cli/auditpipe/stack/collector/catchup.py) on files laid out as Percona rotates them.
(Against the real rsyslog and Kafka: tests/faults/test_killed_parts.py, kill -9 during rotation.)"""

import json
import os
import time
from pathlib import Path

import pytest

from auditpipe.stack.collector.catchup import (
    ResumePoint,
    cut_key,
    cut_report,
    file_key,
    imfile_file_id,
    plan,
    rotated_files,
    unread_rotated,
)
from auditpipe.stack.collector.rsyslog import source_key


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


def rotate(live: Path) -> None:
    """The server rotates ``layout``'s files: each kept file one number older, the live file .01, a new
    live file (lines 101-109)."""
    for n in (3, 2, 1):
        os.rename(live.with_name(f"audit.log.{n:02d}"), live.with_name(f"audit.log.{n + 1:02d}"))
    os.rename(live, live.with_name("audit.log.01"))
    write(live, lines(101, 110))


def state_name(f: Path) -> str:
    """The name imfile gives the state file of ``f``: its inode, and its content's id once it has one."""
    file_id = imfile_file_id(f.read_bytes())
    return f"imfile-state:{f.stat().st_ino}" + (f":{file_id}" if file_id else "")


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


def test_a_rotation_while_the_files_are_read_is_read_again_not_taken_for_a_gap(tmp_path, monkeypatch):
    """A rotation between reading the live file and its rotated files renames them all: read by the
    names listed before it, the live file's lines come again as .01 and the oldest file is missed
    (its last shipped line with it: a gap that is none)."""
    from auditpipe.stack.collector import catchup

    live = layout(tmp_path)
    resume = resume_after(live, b"line 80")
    opened = []

    def open_and_rotate_after_the_live_file(f, mode="r", *a, **kw):
        opened.append(f)
        if len(opened) == 2:
            rotate(live)
        return open(f, mode, *a, **kw)

    monkeypatch.setattr(catchup, "open", open_and_rotate_after_the_live_file, raising=False)
    batches, gap = plan(live, b"line 10", resume)
    assert gap == ""
    assert shipped(batches) == lines(11, 81)


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



def test_the_report_of_lost_lines_is_the_source_key_saying_lost_as_the_job_reads_it():
    from auditpipe import paths
    from auditpipe.stack.collector.catchup import ROTATED_AWAY, lost_key

    key = source_key("db-01", "percona-json", "/logs/audit.log").encode()
    assert json.loads(lost_key(key, ROTATED_AWAY, Path("/logs/audit.log.09"))) == {
        **json.loads(key), "lost": {"problem": "rotated-away", "file": "/logs/audit.log.09"}}
    assert "file" not in json.loads(lost_key(key, ROTATED_AWAY, None))["lost"]
    schema = json.loads((paths.SCHEMAS / "audit-raw-key.schema.json").read_text())["properties"]
    assert schema["lost"]["properties"]["problem"]["enum"] == [ROTATED_AWAY]
    assert set(schema["cut"]["properties"]["problem"]["enum"]) == {
        cut_report(b"a\0", 10)[0], cut_report(b"a" * 11, 10)[0]}


def xml_record(i: int) -> bytes:
    return f'<AUDIT_RECORD\n  NAME="Query"\n  RECORD="{i}_2026-11-22T09:00:00"\n  SQLTEXT="a&#10;b"\n/>'.encode()


def test_multi_line_records_are_shipped_whole_as_rsyslog_frames_them(tmp_path):
    """XML: the declaration and <AUDIT> go with a file's first record, </AUDIT> alone at its end; the
    last record shipped is found in the files as written; rsyslog resumes at the start of a record
    (its state file's strt_offs when one was unfinished)."""
    from auditpipe.stack.collector.catchup import resume_point

    live = tmp_path / "audit.log"
    head, foot = b'<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n', b"</AUDIT>\n"
    (tmp_path / "audit.log.01").write_bytes(head + b"\n".join(xml_record(i) for i in range(1, 5)) + b"\n" + foot)
    live.write_bytes(head + b"\n".join(xml_record(i) for i in range(5, 9)) + b"\n" + xml_record(9)[:30])
    # rsyslog's saved state: it resumes at record 7, which it had begun to read (strt_offs); 3-6 are ours
    data = live.read_bytes()
    strt = data.index(b"<AUDIT_RECORD\n  NAME=\"Query\"\n  RECORD=\"7_")
    work = tmp_path / "work"
    work.mkdir()
    (work / state_name(live)).write_text(json.dumps(
        {"filename": str(live), "prev_was_nl": 0, "curr_offs": strt + 40, "strt_offs": strt,
         "prev_msg_segment": "<AUDIT_RECORD"}))
    resume = resume_point(work, live)
    assert resume.offset == strt, "an unfinished record is rsyslog's from its start"
    batches, gap = plan(live, xml_record(2), resume, "percona-xml")
    assert gap == ""
    assert shipped(batches) == [xml_record(3), xml_record(4), b"</AUDIT>", head.rstrip(b"\n") + b"\n" + xml_record(5),
                                xml_record(6)]
    assert [b.offset for _, b in batches for b in b][:1] == [(tmp_path / "audit.log.01").read_bytes().index(xml_record(3))]


def test_a_last_line_found_at_the_end_of_every_rotated_file_is_placed_by_the_lines_before_it(tmp_path):
    """The catch-up ships a file's closing </AUDIT> as a record: when rsyslog was killed during the
    catch-up, that is the source's newest message, and every rotated file ends with it. Taken as the
    end of the newest rotated file, the files rotated during the outage (records 5-8) were skipped;
    the record shipped before it (4, found once) places it."""
    live = tmp_path / "audit.log"
    head, foot = b'<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n', b"</AUDIT>\n"
    (tmp_path / "audit.log.02").write_bytes(head + b"\n".join(xml_record(i) for i in range(1, 5)) + b"\n" + foot)
    (tmp_path / "audit.log.01").write_bytes(head + b"\n".join(xml_record(i) for i in range(5, 9)) + b"\n" + foot)
    live.write_bytes(head + xml_record(9) + b"\n")
    batches, gap = plan(live, b"</AUDIT>", None, "percona-xml", earlier=(xml_record(4), xml_record(3)))
    assert gap == ""
    assert shipped(batches) == [b"</AUDIT>", head.rstrip(b"\n") + b"\n" + xml_record(5), xml_record(6), xml_record(7),
                                xml_record(8), b"</AUDIT>"]
    # nothing before it found once: from its oldest place (re-sent, not skipped)
    batches, _ = plan(live, b"</AUDIT>", None, "percona-xml", earlier=(b"</AUDIT>",))
    assert shipped(batches)[0] == head.rstrip(b"\n") + b"\n" + xml_record(5)


def test_csv_records_end_with_their_last_columns_even_with_a_statement_of_several_lines(tmp_path):
    from auditpipe.formats import frame

    recs = [b'"Audit","1_2026-11-22T09:00:00","2026-11-22T09:00:00 UTC","8.0","--x","x86_64-Linux"',
            b'"Query","2_2026-11-22T09:00:00","2026-11-22T09:00:01 UTC","insert","11",0,"INSERT INTO t\nVALUES (""a"",\n""b"")","app[app] @ h [10.0.0.5]","h","","10.0.0.5","shop"',  # noqa: E501
            b'"Connect","3_2026-11-22T09:00:00","2026-11-22T09:00:02 UTC","12",1045,"bob","","","","h","::1",""']
    lines = b"\n".join(recs).split(b"\n")
    assert [b"\n".join(r) for r in frame(lines, "percona-csv")] == recs


def test_timestamp_renamed_files_are_found_newest_first_and_shipped_from_the_last_line(tmp_path):
    live = tmp_path / "audit.log"
    write(tmp_path / "audit.20261122T085959.log", lines(0, 20))
    write(tmp_path / "audit.20261122T090000.log", lines(20, 40))
    write(tmp_path / "audit.20261122T090000-2.log", lines(40, 60))
    write(live, lines(60, 100))
    (tmp_path / "audit.manifest.json").write_text("{}")
    assert [p.name for p in rotated_files(live)] == ["audit.20261122T090000-2.log", "audit.20261122T090000.log",
                                                      "audit.20261122T085959.log"]
    batches, gap = plan(live, b"line 25", resume_after(live, b"line 69"))
    assert gap == "" and shipped(batches) == lines(26, 70)


# --- the rotation watch: what rsyslog never reads while it runs (catchup.unread_rotated)
# (against the real rsyslog: tests/e2e/job/test_pipeline.py, a file rotated while rsyslog was frozen)

def state_file(work: Path, live: Path, f: Path, offset: int, mtime: float) -> None:
    """An imfile state file for ``f`` as rsyslog writes it: named by inode, holding the live name."""
    work.mkdir(exist_ok=True)
    s = work / state_name(f)
    s.write_text(json.dumps({"filename": str(live), "prev_was_nl": 1, "curr_offs": offset, "strt_offs": offset}))
    os.utime(s, (mtime, mtime))


def aged(f: Path, mtime: float) -> None:
    os.utime(f, (mtime, mtime))


def stretches(parts) -> list[tuple[str, int, int]]:
    return [(p.path.name, p.start, p.end) for p in parts]


def test_a_file_rotated_before_rsyslog_opened_it_is_unread_whole_and_only_once(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    started = time.time() - 60
    for f in ("audit.log.03", "audit.log.02"):
        state_file(work, live, tmp_path / f, (tmp_path / f).stat().st_size, started + 1)  # read to its end
    shipped: dict[str, int] = {}
    parts = unread_rotated(live, work, set(), started, shipped)
    size = (tmp_path / "audit.log.01").stat().st_size
    assert stretches(parts) == [("audit.log.01", 0, size)]
    assert "before the collector opened it" in parts[0].why
    shipped[parts[0].key] = size
    assert unread_rotated(live, work, set(), started, shipped) == [], "shipped once"


def test_lines_written_to_a_rotated_file_after_rsyslog_closed_it_are_unread(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    started = time.time() - 60
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        state_file(work, live, tmp_path / f, (tmp_path / f).stat().st_size, started + 1)
    shipped: dict[str, int] = {}
    assert unread_rotated(live, work, set(), started, shipped) == []
    late = tmp_path / "audit.log.02"
    end = late.stat().st_size
    with open(late, "ab") as f:
        f.write(b"line 40a\nline 40b\n")
    parts = unread_rotated(live, work, set(), started, shipped)
    assert stretches(parts) == [("audit.log.02", end, end + 18)]
    assert late.read_bytes()[parts[0].start:parts[0].end] == b"line 40a\nline 40b\n"


def test_a_saved_position_that_is_no_line_start_of_the_file_marks_nothing_read(tmp_path):
    """rsyslog 8.2302 can save, under a frozen-then-renamed file's identity, the offset it reached in
    the live file that took its name: past the file's end, or inside one of its lines."""
    live, work = layout(tmp_path), tmp_path / "work"
    started = time.time() - 60
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        state_file(work, live, tmp_path / f, (tmp_path / f).stat().st_size, started + 1)
    one, two = tmp_path / "audit.log.01", tmp_path / "audit.log.02"
    state_file(work, live, one, one.stat().st_size + 100, started + 1)
    state_file(work, live, two, two.read_bytes().index(b"\n") - 2, started + 1)
    parts = unread_rotated(live, work, set(), started, {})
    assert sorted(stretches(parts)) == [("audit.log.01", 0, one.stat().st_size), ("audit.log.02", 0, two.stat().st_size)]
    assert all("no line start" in p.why for p in parts)
    shipped = {p.key: p.end for p in parts}
    assert unread_rotated(live, work, set(), started, shipped) == [], "shipped once"


def test_a_file_rsyslog_has_open_is_its_own(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    reading = {(tmp_path / f).stat().st_ino for f in ("audit.log.01", "audit.log.02", "audit.log.03")}
    assert unread_rotated(live, work, reading, time.time() - 60, {}) == []


def test_files_rotated_while_rsyslog_was_down_are_the_catch_ups(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    started = time.time()
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        aged(tmp_path / f, started - 30)
    shipped: dict[str, int] = {}
    assert unread_rotated(live, work, set(), started, shipped) == []
    assert len(shipped) == 3, "judged once: not looked at again"


def test_a_file_rsyslog_was_to_resume_but_never_opened_is_unread_from_its_saved_offset(tmp_path):
    """The catch-up's limit: the live file rotated between its look-up and rsyslog opening it. The
    catch-up shipped the lines before rsyslog's saved offset; the rest is the watch's."""
    live, work = layout(tmp_path), tmp_path / "work"
    started = time.time()
    one = tmp_path / "audit.log.01"
    for f in ("audit.log.03", "audit.log.02"):
        state_file(work, live, tmp_path / f, (tmp_path / f).stat().st_size, started - 100)
    offset = one.read_bytes().index(b"line 50\n")
    state_file(work, live, one, offset, started - 5)  # saved by the collector that ran before
    parts = unread_rotated(live, work, set(), started, {}, resumed=one.stat().st_ino)
    assert stretches(parts) == [("audit.log.01", offset, one.stat().st_size)]
    assert "before the collector resumed it" in parts[0].why
    # not the file it was to resume: one a killed run was reading, whose rest the catch-up shipped
    assert unread_rotated(live, work, set(), started, {}, resumed=live.stat().st_ino) == []


def test_state_files_of_another_source_in_the_same_directory_do_not_count(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    started = time.time() - 60
    one = tmp_path / "audit.log.01"
    state_file(work, tmp_path / "other.log", one, one.stat().st_size, started + 1)
    assert [p.path.name for p in unread_rotated(live, work, set(), started, {})] == \
        ["audit.log.01", "audit.log.02", "audit.log.03"]


def test_imfile_names_a_file_by_inode_and_the_siphash_of_its_first_512_bytes():
    from auditpipe.stack.collector.catchup import _siphash24

    # the reference vector of SipHash-2-4 (Aumasson and Bernstein, appendix A)
    assert _siphash24(bytes(range(16)), bytes(range(15))).hex() == "e545be4961ca29a1"
    assert imfile_file_id(b"x" * 511) == "", "shorter files have no id yet"
    assert imfile_file_id(b"x" * 512) == imfile_file_id(b"x" * 512 + b"more") != imfile_file_id(b"y" * 512)


def test_a_state_file_left_by_a_deleted_file_whose_inode_came_back_is_not_this_files(tmp_path):
    """imfile keeps the state file of a file it closed after the file is deleted, and the file system
    gives the inode to a later file: that state file says nothing about the later file."""
    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    started = time.time() - 60
    one = tmp_path / "audit.log.01"
    big = [f"line {i} ".encode() + b"x" * 40 for i in range(40, 60)]
    write(one, big)
    (work / f"imfile-state:{one.stat().st_ino}:{imfile_file_id(b'another file' * 60)}").write_text(json.dumps(
        {"filename": str(live), "prev_was_nl": 1, "curr_offs": 600, "strt_offs": 600}))
    parts = [p for p in unread_rotated(live, work, set(), started, {}) if p.path == one]
    assert [(p.start, p.end) for p in parts] == [(0, one.stat().st_size)], "all of it: never opened"
    assert state_name(one).startswith(f"imfile-state:{one.stat().st_ino}:")
    state_file(work, live, one, one.stat().st_size, started + 1)  # its own, named by its content's id
    assert [p for p in unread_rotated(live, work, set(), started, {}) if p.path == one] == []


def test_what_the_watch_shipped_of_a_deleted_file_does_not_cover_a_later_file_with_its_inode(tmp_path):
    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    one = tmp_path / "audit.log.01"
    shipped = {file_key(one.stat().st_ino, b"the deleted file's first line\n"): 10 ** 6}
    parts = [p for p in unread_rotated(live, work, set(), time.time() - 60, shipped) if p.path == one]
    assert [(p.start, p.end) for p in parts] == [(0, one.stat().st_size)]


def test_the_watch_ships_finished_records_only():
    """A line without its newline, and a multi-line record whose end is not written (a file's closing
    </AUDIT>, which rsyslog never sends), wait."""
    from auditpipe.stack.collector.catchup import _finished_records

    records, used = _finished_records(b"line 1\nline 2\nline 3 still being wri", 100, "percona-json")
    assert records == [b"line 1", b"line 2"] and used == 14 and records[1].offset == 107
    head = b'<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n'
    data = head + xml_record(1) + b"\n" + xml_record(2) + b"\n</AUDIT>\n"
    records, used = _finished_records(data, 0, "percona-xml")
    assert records == [head.rstrip(b"\n") + b"\n" + xml_record(1), xml_record(2)]
    assert data[used:] == b"</AUDIT>\n"


def test_state_files_whose_file_is_gone_are_stale_the_others_kept(tmp_path):
    from auditpipe.stack.collector.catchup import stale_state_files

    live, work = layout(tmp_path), tmp_path / "work"
    old = time.time() - 3600
    for f in ("audit.log.03", "audit.log.01", "audit.log"):
        state_file(work, live, tmp_path / f, 1, old)
    gone = work / "imfile-state:1:0123456789abcdef"
    gone.write_text(json.dumps({"filename": str(live), "curr_offs": 5, "strt_offs": 5}))
    os.utime(gone, (old, old))
    another = work / "imfile-state:2:0123456789abcdef"
    another.write_text(json.dumps({"filename": "/elsewhere/audit.log", "curr_offs": 5, "strt_offs": 5}))
    os.utime(another, (old, old))
    recent = work / "imfile-state:3:0123456789abcdef"
    recent.write_text(json.dumps({"filename": str(live), "curr_offs": 5, "strt_offs": 5}))
    assert stale_state_files(work, [live], 60) == [gone]


@pytest.mark.parametrize("memory", ['["not", "a", "map"]', '{"/logs/audit.log": 5}', '{"/logs/audit.log": {"k": "x", "j": 7}}',
                                    '{"cut short'])
def test_a_rotation_watch_memory_of_another_shape_is_no_memory(tmp_path, memory):
    from auditpipe.stack.collector.catchup import RotationWatch

    f = tmp_path / "rotations-shipped.json"
    f.write_text(memory)
    watch = RotationWatch("127.0.0.1:1", "audit.raw", str, tmp_path, f, tmp_path / "resume.json", 100, 200)
    assert watch.shipped in ({}, {"/logs/audit.log": {}}, {"/logs/audit.log": {"j": 7}})


def test_the_catch_up_tells_the_watch_how_far_it_shipped_each_file(tmp_path):
    """After a restart, a file the catch-up shipped is not the rotation watch's to ship again, whether
    rsyslog opens it or not; the file rsyslog resumes is shipped up to where rsyslog reads on."""
    live = layout(tmp_path)
    resume = resume_after(live, b"line 69")
    ends: dict[str, int] = {}
    batches, _ = plan(live, b"line 25", resume, shipped_to=ends)
    key = {f.name: file_key(f.stat().st_ino, f.read_bytes()[:512]) for f in tmp_path.glob("audit.log*")}
    assert ends == {key["audit.log.02"]: (tmp_path / "audit.log.02").stat().st_size,
                    key["audit.log.01"]: (tmp_path / "audit.log.01").stat().st_size,
                    key["audit.log"]: resume.offset}
    work = tmp_path / "work"
    work.mkdir()
    started = time.time() - 60
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        aged(tmp_path / f, started - 30)  # rotated while the collector was down
    live.rename(tmp_path / "audit.log.00")  # rotated before rsyslog opened it (a made-up name: the chain's first)
    assert [(p.path.name, p.start) for p in unread_rotated(live, work, set(), started, dict(ends))] == \
        [("audit.log.00", resume.offset)], "the files the catch-up shipped are not; the rest of the resumed one is"


def test_the_rotation_watch_waits_for_a_catch_up_at_work_but_not_for_one_cut_short(tmp_path, monkeypatch):
    """A file never opened is the watch's to ship, once the collector's start says its catch-up is done;
    a catch-up said to be at work for longer than CATCH_UP_STALE_S was cut short (its process killed)."""
    from auditpipe.stack.collector import catchup

    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        aged(tmp_path / f, time.time() + 5)  # written since rsyslog (this process) started: never opened
    shipped = []
    monkeypatch.setattr(catchup, "ship", lambda kafka, topic, partition, key, batches, *a: shipped.append(
        batches[0][0].name) or sum(len(r) for _, r in batches))
    resume = tmp_path / "resume-points.json"
    watch = catchup.RotationWatch("127.0.0.1:1", "audit.raw", str, work, tmp_path / "shipped.json", resume, 100, 200)
    sources = [{"path": str(live), "server": "db", "format": "percona-json"}]
    resume.write_text(json.dumps({"resumed": {}, "catching_up": True, "shipped": {}}))
    assert watch.check(sources, os.getpid()) == [] and shipped == [], "the catch-up is at work"
    aged(resume, time.time() - catchup.CATCH_UP_STALE_S - 1)
    watch.check(sources, os.getpid())
    assert sorted(shipped) == ["audit.log.01", "audit.log.02", "audit.log.03"], "cut short: the watch goes on"


def test_the_rotation_watch_lists_rsyslogs_open_files_once_a_look_however_many_files_wait(tmp_path, monkeypatch):
    """Rotated files that end in an unfinished record (every rotated Percona XML file ends in its
    </AUDIT>) are parts again at every look, each second: rsyslog's open files (a stat per descriptor,
    one per source and more) are listed twice a look, before and after the files are looked at, not
    once per such file or source."""
    from auditpipe.stack.collector import catchup

    sources = []
    for server in ("db-1", "db-2"):
        (tmp_path / server).mkdir()
        live = layout(tmp_path / server)
        for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
            (tmp_path / server / f).write_bytes(b"unfinished record")
            aged(tmp_path / server / f, time.time() + 5)  # written since rsyslog (this process) started: never opened
        sources.append({"path": str(live), "server": server, "format": "percona-json"})
    work = tmp_path / "work"
    work.mkdir()
    listed = []
    monkeypatch.setattr(catchup, "open_inodes", lambda pid: listed.append(pid) or set())
    monkeypatch.setattr(catchup, "ship", lambda *a: pytest.fail("nothing is finished: nothing ships"))
    resume = tmp_path / "resume-points.json"
    resume.write_text(json.dumps({"resumed": {}, "catching_up": False, "shipped": {}}))
    watch = catchup.RotationWatch("127.0.0.1:1", "audit.raw", str, work, tmp_path / "shipped.json", resume, 100, 200)
    for look in (1, 2):
        assert watch.check(sources, os.getpid()) == []
        assert len(listed) == 2 * look, "once before the files are looked at, once after"
    assert set(watch.shipped) == {s["path"] for s in sources}


def test_a_file_the_server_renames_between_the_look_and_the_read_is_shipped_under_its_new_name(tmp_path, monkeypatch):
    """The watch looks at every source's files, lists rsyslog's open files, then reads what it found: a
    rotation in between renames every kept file (.01 -> .02, the live file -> .01), and reading by the
    old name ships another file's lines in its place while its own are never shipped."""
    from auditpipe.stack.collector import catchup

    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        aged(tmp_path / f, time.time() + 5)  # written since rsyslog (this process) started: never opened
    listings = []

    def rotate_at_the_second_listing(pid):
        listings.append(pid)
        if len(listings) == 2:
            rotate(live)
        return set()

    sent = []
    monkeypatch.setattr(catchup, "open_inodes", rotate_at_the_second_listing)
    monkeypatch.setattr(catchup, "ship", lambda kafka, topic, partition, key, batches, *a: sent.extend(
        shipped(batches)) or sum(len(r) for _, r in batches))
    resume = tmp_path / "resume-points.json"
    resume.write_text(json.dumps({"resumed": {}, "catching_up": False, "shipped": {}}))
    watch = catchup.RotationWatch("127.0.0.1:1", "audit.raw", str, work, tmp_path / "shipped.json", resume, 100, 200)
    watch.check([{"path": str(live), "server": "db", "format": "percona-json"}], os.getpid())
    assert sorted(sent, key=lambda x: int(x.split()[1])) == lines(0, 60), "each file's own lines, once"


def test_a_collector_that_dies_while_the_watch_looks_leaves_its_files_to_the_catch_up(tmp_path, monkeypatch):
    """rsyslog killed between the watch's two listings of its open files: the files it had not opened
    are its next start's catch-up's to ship, from where it got to, not the watch's (seen: the watch, held
    by a stopped supervisor across the kill, shipped a kept file the catch-up then counted from)."""
    from auditpipe.stack.collector import catchup

    live, work = layout(tmp_path), tmp_path / "work"
    work.mkdir()
    for f in ("audit.log.03", "audit.log.02", "audit.log.01"):
        aged(tmp_path / f, time.time() + 5)  # written since rsyslog (this process) started: never opened
    listings = []
    monkeypatch.setattr(catchup, "open_inodes", lambda pid: listings.append(pid) or (set() if len(listings) == 1 else None))
    monkeypatch.setattr(catchup, "ship", lambda *a: pytest.fail("rsyslog is gone: the watch ships nothing"))
    resume = tmp_path / "resume-points.json"
    resume.write_text(json.dumps({"resumed": {}, "catching_up": False, "shipped": {}}))
    watch = catchup.RotationWatch("127.0.0.1:1", "audit.raw", str, work, tmp_path / "shipped.json", resume, 100, 200)
    assert watch.check([{"path": str(live), "server": "db", "format": "percona-json"}], os.getpid()) == []
    assert len(listings) == 2, "it looked, then found rsyslog gone"


def test_a_failing_catch_up_is_tried_again_and_recorded_as_a_gap_when_it_never_succeeds(tmp_path, monkeypatch):
    """rsyslog already runs when the catch-up ships: a catch-up that fails is tried again from what was
    found before rsyslog started, and one that fails every time is never silent (collector-gaps.log)."""
    from auditpipe import config
    from auditpipe.stack import limits
    from auditpipe.stack.collector import catchup, rsyslog

    (tmp_path / "a.yaml").write_text(f"state_dir: {tmp_path / 'state'}\nsources:\n"
                                     f"  - {{path: {tmp_path}/db-01/audit.log, server: db-01}}\n"
                                     f"  - {{path: {tmp_path}/db-02/audit.log, server: db-02}}\n")
    cfg = config.load(tmp_path / "a.yaml")
    sources = [s for s in cfg.collector_sources() if s["server"] in ("db-01", "db-02")]
    before = {sources[0]["path"]: catchup.Before(catchup.LastShipped(0, 7, b"x"), None),
              sources[1]["path"]: catchup.Before(None, None)}  # never shipped: nothing to catch up on
    calls = []

    def catch_up(*args):
        calls.append(args)
        if len(calls) < 3:
            raise RuntimeError("catch-up: reading audit.raw[0] at offset 7 timed out")
        return ["shipped"]

    monkeypatch.setattr(catchup, "catch_up", catch_up)
    monkeypatch.setattr(rsyslog, "CATCH_UP_PAUSE_S", 0)
    part, lim = rsyslog.RsyslogCollector(cfg), limits.from_config(cfg)
    assert part._catch_up("audit.raw", sources, before, lim, {}) == ["shipped"] and len(calls) == 3
    assert rsyslog.recorded_gaps(cfg) == {}, "a catch-up that succeeds in the end leaves no gap"

    calls.clear()
    with pytest.raises(RuntimeError):
        part._catch_up("audit.raw", sources, before, lim, {}, attempts=2)
    assert len(calls) == 2
    gaps = rsyslog.recorded_gaps(cfg)
    assert list(gaps) == ["db-01"], "the source that had lines to catch up on, not the one never shipped"
    assert "the catch-up failed 2 times (catch-up: reading audit.raw[0] at offset 7 timed out)" in gaps["db-01"][0]["gap"]


def test_the_collector_comes_back_sooner_than_a_source_rotates_through_its_kept_files():
    """The fault suite's fastest rotation (a file every ~0.4 s, 90 kept: 36 s) outlasts every wait of the
    supervisor before it restarts a collector that keeps dying; other parts wait up to a minute."""
    from auditpipe.stack.collector.rsyslog import RsyslogCollector
    from auditpipe.stack.components.base import Component

    assert RsyslogCollector.longest_restart_wait * 2 < 90 * 0.4 < Component.longest_restart_wait


def test_a_log_rotating_during_every_read_is_not_judged_but_tried_again(tmp_path, monkeypatch):
    """Files read across rotations each time are not what they held at one moment: no plan from them."""
    import pytest

    from auditpipe.stack.collector import catchup

    live = layout(tmp_path)
    resume = resume_after(live, b"line 80")

    def open_and_rotate(f, mode="r", *a, **kw):
        if f == live.with_name("audit.log.01"):  # the live file read, the others not yet
            rotate(live)
        return open(f, mode, *a, **kw)

    monkeypatch.setattr(catchup, "open", open_and_rotate, raising=False)
    with pytest.raises(catchup.RotatedWhileRead, match="rotated during each of 5 reads"):
        plan(live, b"line 10", resume)
