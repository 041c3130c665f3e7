"""The Fluentd collector (collectors/fluentd) against the real Kafka and store of the e2e stack, put
through the scenarios the rsyslog collector goes through: rotation with late writes, a restart and a
kill -9 mid-rotation, a line at the maximum size. The Fluentd itself: tests/helpers/fluentd.py.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess

import pytest
from helpers.e2e_stack import MTLS_PEER, mutual_tls_files, send_over_mutual_tls
from helpers.fluentd import Fluentd, faults_while_writing
from helpers.fluentd import fluentd_command as find_fluentd

from auditpipe.stack import limits
from auditpipe.tools.simulate import simulate

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]


@pytest.fixture(scope="module")
def fluentd_command(stack) -> str:
    return find_fluentd(stack.cfg.tools_dir)


def _assert_exactly_once(stack, server: str, m, fluentd: Fluentd) -> None:
    stack.assert_stored_and_counted_exactly_once(server, m, collector="fluentd", fmt=fluentd.fmt)
    assert not fluentd.problems(), "\n".join(fluentd.problems())


def test_fluentd_ships_a_rotating_log_with_late_writes_exactly_once(stack, fluentd_command, tmp_path):
    """in_tail on the live path and its rotated names: with the live path alone and follow_inodes, whole
    rotated files are lost (3,252 of 60,000, measured; docs/collectors.md)."""
    server = "e2e-fluentd-rotation"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    try:
        # ~0.4 s between rotations, three late writes each, every file kept (none deleted unread)
        m = simulate(fluentd.log, rate=2000, duration=12, speedup=1, seed=51, rotate_on_size=256 * 1024,
                     rotations=90, late_writes=3)
        assert m.rotations >= 20
        _assert_exactly_once(stack, server, m, fluentd)
    finally:
        fluentd.stop()


@pytest.mark.parametrize("style", ["xml-old", "xml-new", "csv", "enterprise-json"])
def test_fluentd_frames_multi_line_records_whole_through_rotations(stack, fluentd_command, tmp_path, style):
    """Records of several lines, framed by their first line (in_tail's multiline parser), the last one of
    each rotated file flushed after a second of quiet; the XML files' declaration and <AUDIT> are skipped."""
    from auditpipe.tools.simulate import STYLES

    server = f"e2e-fluentd-{style}"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path, fmt=STYLES[style])
    fluentd.start()
    try:
        m = simulate(fluentd.log, rate=1000, duration=6, speedup=1, seed=53, rotate_on_size=128 * 1024,
                     rotations=90, late_writes=3, failed_login_burst=10, style=style)
        assert m.rotations >= 5
        if style.startswith("enterprise"):  # the last record's line ends when the file does (tests/e2e/job/test_formats.py)
            with open(fluentd.log, "ab") as f:
                f.write(b"\n]\n")
        _assert_exactly_once(stack, server, m, fluentd)
        assert stack.dead_letters(server) == [], "no record cut in two or glued to another"
    finally:
        fluentd.stop()


def test_fluentd_follows_timestamp_renamed_rotation_exactly_once(stack, fluentd_command, tmp_path):
    """audit.log -> audit.<time>.log (MySQL Enterprise, audit_log_filter): the renamed files match the
    path's <stem>.*<extension>, follow_inodes keeps one position per file, late writes are read."""
    server = "e2e-fluentd-stamped"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    try:
        m = simulate(fluentd.log, rate=2000, duration=6, speedup=1, seed=54, rotate_on_size=256 * 1024,
                     rotations=90, late_writes=3, rotation="timestamp")
        assert m.rotations >= 5
        _assert_exactly_once(stack, server, m, fluentd)
    finally:
        fluentd.stop()


def test_fluentd_restarted_and_killed_mid_rotation_loses_nothing(stack, fluentd_command, tmp_path):
    """A SIGTERM restart and a kill -9 while the log rotates lose nothing (with the live path alone, a
    restart loses 6,848 of 40,000 and a kill -9 2,284, measured). Rotations about 3.3 s apart, Fluentd
    down 4 s each time: closer, Fluentd's in_tail can lose a whole rotated file (docs/collectors.md: keep
    rotations seconds apart)."""
    server = "e2e-fluentd-restarts"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    try:
        # what Fluentd ships, as soon as it ships it
        m = faults_while_writing(stack, fluentd, stack.raw_messages, 2000, rate=2000, duration=600, speedup=1,
                                 seed=52, rotate_on_size=2 * 1024 * 1024, rotations=200, late_writes=3)
        _assert_exactly_once(stack, server, m, fluentd)
    finally:
        fluentd.stop()  # never left running, whatever failed: it would ship into later stacks


def test_fluentd_ships_a_line_at_the_maximum_size_whole(stack, fluentd_command, tmp_path):
    """A line of max_line_size arrives whole: its buffer chunk holds it (with 512 KiB chunks a 1 MiB line
    raises BufferChunkOverflowError and is skipped, measured)."""
    server = "e2e-fluentd-long-line"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    try:
        longest = limits.from_config(stack.cfg).max_line_bytes
        line = b'{"audit_record":{"name":"Query","sqltext":"' + b"y" * (longest - 43)
        assert len(line) == longest
        m = simulate(fluentd.log, rate=1000, duration=3, speedup=20, seed=53, rotate_on_size=0, malformed=1,
                     bad_lines=[line])
        _assert_exactly_once(stack, server, m, fluentd)
        dead = stack.wait_for("the long line's dead letter", lambda: (len(d := stack.dead_letters(server)) >= 1, d))
        assert len(dead) == 1
        assert dead[0]["original"]["length"] == longest
        assert base64.b64decode(dead[0]["original"]["base64"]) == line, "whole, byte for byte"
    finally:
        fluentd.stop()


def test_fluentd_receives_syslog_and_ships_each_record_once(stack, fluentd_command, tmp_path):
    """collectors/fluentd with AUDITPIPE_LISTEN: in_syslog in place of in_tail, as the rsyslog receiver
    (tests/e2e/collector/test_syslog_receiver.py): octet-counted TCP from `logger` with RFC 5424 and RFC 3164
    headers, each record stored once in its own format under the sender's host name (from-host), a
    record of several lines with its newlines escaped; a message without a priority becomes a dead letter, not a warning.
    The sender is named by its IP address, never by reverse DNS."""
    if not shutil.which("logger"):
        pytest.skip("logger (util-linux) is not installed: it is the sender of this test")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listen = f"tcp://127.0.0.1:{port}"
    fluentd = Fluentd(fluentd_command, stack, None, tmp_path, fmt="syslog", listen=listen)
    fluentd.start()
    try:
        log = tmp_path / "records.jsonl"
        m = simulate(log, rate=1000, duration=0.5, speedup=1000, seed=57, rotate_on_size=0, max_records=500)
        lines = [line for line in log.read_bytes().splitlines() if line]
        assert len(lines) == m.records == 500
        half = tmp_path / "second.jsonl"
        half.write_bytes(b"\n".join(lines[250:]) + b"\n")
        log.write_bytes(b"\n".join(lines[:250]) + b"\n")

        def logger(*args: str) -> None:
            r = subprocess.run(["logger", "--socket-errors=on", "--tcp", "--octet-count", "--server", "127.0.0.1",
                                "--port", str(port), "--size", "65536", *args], capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr

        logger("--rfc5424", "-t", "percona-audit", "-f", str(log))
        logger("--rfc3164", "-t", "percona-audit", "-f", str(half))
        xml = ('<AUDIT_RECORD\n  NAME="Query"\n  RECORD="9_2026-11-22T09:00:00"\n  TIMESTAMP="2026-11-22T09:00:09 UTC"\n'
               '  COMMAND_CLASS="select"\n  CONNECTION_ID="12"\n  STATUS="0"\n  SQLTEXT="SELECT&#10;  2"\n'
               '  USER="app[app] @ localhost [10.0.0.5]"\n  HOST="localhost"\n  IP="10.0.0.5"\n  DB="shop"\n/>')
        # in_syslog keeps a message's first line only (docs/collectors.md): a record of several lines
        # comes with its newlines escaped, as a syslog daemon relaying it escapes them
        logger("--rfc5424", "-t", "percona-audit", xml.replace("\n", "#012"))
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:  # no <PRI>: not syslog
            msg = b"no priority, no header, no record"
            raw.sendall(str(len(msg)).encode() + b" " + msg)

        want = m.records + 1
        docs = stack.stored_documents("127.0.0.1", want, timeout=300)
        assert len(docs) == want and len({d["_id"] for d in docs}) == want, f"{len(docs)} stored of {want} sent"
        assert {d["record_id"] for d in docs} >= m.record_ids(), "every record sent, by its own id"
        assert {d["source_file"] for d in docs} == {listen} and {d["collector"] for d in docs} == {"fluentd"}
        assert {d["format"] for d in docs} == {"percona-json", "percona-xml"}
        assert {d["extra"]["syslog_tag"] for d in docs} == {"percona-audit"}
        assert next(d for d in docs if d["format"] == "percona-xml")["sqltext"] == "SELECT\n  2", "13 lines, whole"
        dead = stack.wait_for("the message without a priority as a dead letter", lambda: (bool(found := [
            d for d in stack.dead_letters("127.0.0.1") if base64.b64decode(d["original"]["base64"]) == msg]), found))
        assert dead[0]["stage"] == "parse" and dead[0]["reason"], dead[0]
        assert not fluentd.problems(), "\n".join(fluentd.problems())
    finally:
        fluentd.stop()


def test_fluentd_over_mutual_tls_takes_only_a_permitted_certificate(stack, fluentd_command, tmp_path):
    """The Fluentd receiver under the rsyslog receiver's rules (tests/e2e/collector/test_syslog_receiver.py): with
    AUDITPIPE_LISTEN_TLS_CA and AUDITPIPE_LISTEN_TLS_PEERS a sender with a certificate the CA signed for
    another name, or with the permitted name and no CA's signature, is refused at the handshake and
    nothing of it is stored; the permitted sender's records are the named server's."""
    server = "e2e-fluentd-mtls"
    files = mutual_tls_files(tmp_path / "mtls")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listen = f"tls://127.0.0.1:{port}"
    fluentd = Fluentd(fluentd_command, stack, server, tmp_path, fmt="syslog", listen=listen)
    fluentd.env.update({"AUDITPIPE_LISTEN_TLS_CERT": str(files["receiver"][0]),
                        "AUDITPIPE_LISTEN_TLS_KEY": str(files["receiver"][1]),
                        "AUDITPIPE_LISTEN_TLS_CA": str(files["ca"][0]), "AUDITPIPE_LISTEN_TLS_PEERS": MTLS_PEER})
    fluentd.start()
    try:
        log = tmp_path / "records.jsonl"
        simulate(log, rate=1000, duration=0.5, speedup=1000, seed=59, rotate_on_size=0, max_records=30)
        records = [line for line in log.read_bytes().splitlines() if line]

        def send(name: str, batch: list[bytes]) -> str | None:
            return send_over_mutual_tls("127.0.0.1", port, files["ca"][0], files[name], batch)

        spoofed = records[:10]
        assert send("other", spoofed) is not None, "a certificate for another name is refused"
        assert send("unsigned", spoofed) is not None, "the permitted name without the CA's signature is refused"
        assert send("permitted", records[10:]) is None
        docs = stack.stored_documents(server, len(records) - 10, timeout=180)
        stored = {d["record_id"] for d in docs}
        assert stored == {json.loads(r)["audit_record"]["record"] for r in records[10:]}
        assert not stored & {json.loads(r)["audit_record"]["record"] for r in spoofed}, "nothing of the refused senders"
        assert stack.db()[stack.cfg.store["events_collection"]].count_documents({"source_file": listen}) == len(docs)
    finally:
        fluentd.stop()
