"""Receiving syslog: `logger` (util-linux) sends audit records to the collector's listen sources
(TCP with LF and with octet-counted framing, RFC 3164 and 5424 headers, UDP), rsyslog ships each
message whole, and the job reads the record in each: stored exactly once, in its own format, with
the sender's header kept; a message that holds no record is a dead letter naming its sender."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess

import pytest
from helpers.e2e_stack import LISTEN_MTLS, LISTEN_TCP, LISTEN_TLS, LISTEN_UDP, send_over_mutual_tls

from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e


def logger(*args: str, message: str | None = None) -> None:
    r = subprocess.run(["logger", "--socket-errors=on", *args, *([] if message is None else [message])],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def percona_records(tmp_path, n: int) -> list[bytes]:
    log = tmp_path / "audit.log"
    m = simulate(log, rate=1000, duration=n / 1000, speedup=1000, seed=9, rotate_on_size=0, max_records=n)
    lines = [line for line in log.read_bytes().splitlines() if line]
    assert len(lines) == m.records == n
    return lines


@pytest.fixture(autouse=True)
def has_logger():
    if not shutil.which("logger"):
        pytest.skip("logger (util-linux) is not installed: it is the sender of these tests")


def test_records_sent_over_tcp_are_stored_once_each_in_their_own_format(stack, tmp_path):
    server = "e2e-syslog"  # the TCP source's name for everything it receives
    host, port = LISTEN_TCP.split("://")[1].rsplit(":", 1)
    records = percona_records(tmp_path, 600)
    half = len(records) // 2
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(b"\n".join(records[:half]) + b"\n")
    second.write_bytes(b"\n".join(records[half:]) + b"\n")
    # RFC 3164 with LF framing, then RFC 5424 with octet counting: each line of the file one message
    logger("--tcp", "--server", host, "--port", port, "--rfc3164", "-t", "percona-audit", "-f", str(first))
    logger("--tcp", "--server", host, "--port", port, "--rfc5424", "--octet-count", "-t", "percona-audit",
           "-f", str(second))
    # MariaDB through syslog: no time of its own (the header's is taken), info before the host
    logger("--tcp", "--server", host, "--port", port, "--rfc3164", "-t", "mysql-server_auditing",
           message=" db-7 e2e-mdb,app,10.0.0.5,41,77,QUERY,shop,'SELECT 1',0")
    # a record of several lines, whole in one octet-counted message
    xml = ('<AUDIT_RECORD\n  NAME="Query"\n  RECORD="9_2026-11-22T09:00:00"\n  TIMESTAMP="2026-11-22T09:00:09 UTC"\n'
           '  COMMAND_CLASS="select"\n  CONNECTION_ID="12"\n  STATUS="0"\n  SQLTEXT="SELECT&#10;  2"\n'
           '  USER="app[app] @ localhost [10.0.0.5]"\n  HOST="localhost"\n  OS_USER=""\n  IP="10.0.0.5"\n  DB="shop"\n/>')
    logger("--tcp", "--server", host, "--port", port, "--rfc5424", "--octet-count", "-t", "percona-audit", message=xml)
    # another program's message on the same port
    logger("--tcp", "--server", host, "--port", port, "--rfc3164", "-t", "sshd", message="Accepted publickey for admin")

    want = len(records) + 2
    docs = stack.stored_documents(server, want, timeout=300)
    assert len(docs) == want, f"{len(docs)} stored of {want} sent"
    ids = {json.loads(r)["audit_record"]["record"] for r in records}
    assert ids <= {d["record_id"] for d in docs}, "every Percona record sent, by its own id"
    assert {d["format"] for d in docs} == {"percona-json", "mariadb-audit", "percona-xml"}
    assert all(d["extra"]["syslog_tag"] in ("percona-audit", "mysql-server_auditing") for d in docs)
    assert all(d["source_file"] == LISTEN_TCP for d in docs)
    mdb = next(d for d in docs if d["format"] == "mariadb-audit")
    assert (mdb["user"], mdb["sqltext"], mdb["extra"]["syslog_info"]) == ("app", "SELECT 1", "db-7")
    xml_doc = next(d for d in docs if d["format"] == "percona-xml")
    assert xml_doc["sqltext"] == "SELECT\n  2"
    assert xml_doc["original"].endswith(xml), "the record of 14 lines arrived whole, in one message"
    assert len({d["_id"] for d in docs}) == want
    stack.assert_chain_intact(server, docs)

    dead = stack.wait_for("the other program's message as a dead letter", lambda: (bool(found := [
        d for d in stack.dead_letters(server) if "Accepted publickey" in str(d.get("reason", ""))]), found))
    assert "tag sshd" in dead[0]["reason"], dead[0]["reason"]


def test_a_udp_source_names_each_sender_by_its_address(stack, tmp_path):
    host, port = LISTEN_UDP.split("://")[1].rsplit(":", 1)
    records = percona_records(tmp_path, 50)
    batch = tmp_path / "udp.jsonl"
    batch.write_bytes(b"\n".join(records) + b"\n")
    logger("--udp", "--server", host, "--port", port, "--rfc5424", "-t", "percona-audit", "-f", str(batch))

    def arrived():
        docs = list(stack.db()[stack.cfg.store["events_collection"]].find({"source_file": LISTEN_UDP}))
        return len(docs) >= len(records), docs

    docs = stack.wait_for("the UDP records stored", arrived, timeout=180)
    # from-host: the sender's address, never a name from DNS (127.0.0.1 is localhost in /etc/hosts)
    assert {d["server"] for d in docs} == {"127.0.0.1"}, {d["server"] for d in docs}
    assert len(docs) == len(records), "loopback UDP loses nothing at this rate (docs/collectors.md says what UDP can lose)"


def test_records_sent_over_tls_are_stored(stack, tmp_path):
    """RFC 5425: octet-counted RFC 5424 messages in a TLS session (Python's ssl module as the sender,
    checking the receiver's certificate)."""
    server = "e2e-syslog-tls"
    src = next((s for s in stack.cfg.listen_sources() if s["listen"] == LISTEN_TLS), None)
    if src is None:
        pytest.skip("rsyslog's GnuTLS driver is not installed and cannot be (apt-get install rsyslog-gnutls as root)")
    host, port = LISTEN_TLS.split("://")[1].rsplit(":", 1)
    records = percona_records(tmp_path, 40)
    context = ssl.create_default_context(cafile=src["tls_cert"])
    with socket.create_connection((host, int(port)), timeout=30) as raw, \
            context.wrap_socket(raw, server_hostname=host) as tls:
        for r in records:
            msg = b"<134>1 2026-11-27T12:00:00Z db-tls percona-audit 1088 - - " + r
            tls.sendall(str(len(msg)).encode() + b" " + msg)
    try:
        docs = stack.stored_documents(server, len(records), timeout=180)
    except AssertionError as e:
        raise AssertionError(f"{e}; dead letters: {stack.dead_letters(server)}") from None
    assert {d["record_id"] for d in docs} == {json.loads(r)["audit_record"]["record"] for r in records}
    assert {d["extra"]["syslog_host"] for d in docs} == {"db-tls"}


def test_over_mutual_tls_only_a_permitted_certificate_speaks_for_the_server(stack, tmp_path):
    """A listener other hosts could reach takes mutual TLS with the permitted certificates' names alone
    (rsyslog x509/name): a sender with a certificate the CA signed for another name, or with the
    permitted name and no CA's signature, is refused at the handshake and nothing of it is stored; the
    permitted one's records are stored as the server the listener names."""
    server = "e2e-syslog-mtls"
    src = next((s for s in stack.cfg.listen_sources() if s["listen"] == LISTEN_MTLS), None)
    if src is None:
        pytest.skip("rsyslog's GnuTLS driver is not installed and cannot be (apt-get install rsyslog-gnutls as root)")
    from pathlib import Path

    folder = Path(src["tls_ca"]).parent
    host, port = LISTEN_MTLS.split("://")[1].rsplit(":", 1)
    records = percona_records(tmp_path, 30)

    def send(name: str, batch: list[bytes]) -> str | None:
        return send_over_mutual_tls(host, int(port), src["tls_ca"], (folder / f"{name}.pem", folder / f"{name}.key"),
                                    batch)

    spoofed = records[:10]
    assert send("other", spoofed) is not None, "a certificate for another name is refused"
    assert send("unsigned", spoofed) is not None, "the permitted name without the CA's signature is refused"
    assert send("permitted", records[10:]) is None
    try:
        docs = stack.stored_documents(server, len(records) - 10, timeout=180)
    except AssertionError as e:
        raise AssertionError(f"{e}; dead letters: {stack.dead_letters(server)}") from None
    stored = {d["record_id"] for d in docs}
    assert stored == {json.loads(r)["audit_record"]["record"] for r in records[10:]}
    assert not stored & {json.loads(r)["audit_record"]["record"] for r in spoofed}, "nothing of the refused senders"
    assert stack.db()[stack.cfg.store["events_collection"]].count_documents({"source_file": LISTEN_MTLS}) == len(docs)


def test_a_message_over_max_line_size_goes_out_cut_with_its_report_a_nul_byte_arrives_escaped(stack):
    """The receiver's size rule is a file's: a message of max_line_size bytes is stored whole, one byte
    more goes out cut with the report of what was cut, a dead letter of stage collect. A NUL byte never
    reaches the rules: rsyslog's parser escapes it on receipt as #000 (as it does for every message it
    receives), so the record arrives with #000 where the NUL was, stored, nothing cut or lost."""
    from auditpipe.stack import limits

    server = "e2e-syslog"
    host, port = LISTEN_TCP.split("://")[1].rsplit(":", 1)
    max_line = limits.from_config(stack.cfg).max_line_bytes
    head = b"<110>1 2026-11-28T09:00:00Z db-long percona-audit - - "

    def message(n: int, sqltext: bytes, size: int | None = None) -> bytes:
        record = json.dumps({"audit_record": {
            "name": "Query", "record": f"{n}_2026-11-28T08:59:00", "timestamp": "2026-11-28T09:00:00 UTC",
            "command_class": "select", "connection_id": "5", "status": 0, "sqltext": "@",
            "user": "app[app] @ localhost [10.0.0.5]", "host": "localhost", "os_user": "", "ip": "10.0.0.5",
            "db": "shop"}}).encode()
        if size is not None:  # padded to exactly size bytes, header and all
            sqltext += b"x" * (size - len(head) - len(record) - len(sqltext) + 1)
        msg = head + record.replace(b'"@"', b'"' + sqltext + b'"')
        assert size is None or len(msg) == size
        return msg

    whole, longer = message(1, b"SELECT ", max_line), message(2, b"SELECT ", max_line + 1)
    nul = message(3, b"SELECT 'a\0b'")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        for msg in (whole, longer, nul):
            s.sendall(b"%d %s" % (len(msg), msg))

    events = stack.db()[stack.cfg.store["events_collection"]]

    def stored(n: int) -> list[dict]:
        return list(events.find({"server": server, "record_id": f"{n}_2026-11-28T08:59:00"}))

    [first] = stack.wait_for("the message of max_line_size bytes, stored whole", lambda: (
        bool(found := stored(1)), found), timeout=120)
    assert first["original"].endswith(whole[-200:].decode()), "whole, to its last byte"
    [escaped] = stack.wait_for("the message with a NUL byte, stored", lambda: (bool(found := stored(3)), found),
                               timeout=120)
    assert "a#000b" in escaped["original"], escaped["original"]

    def cut():
        return [json.loads(d["key"]["text"])["cut"] for d in stack.dead_letters(server) if d["stage"] == "collect"]

    [report] = stack.wait_for("the message one byte too long as a dead letter", lambda: (bool(got := cut()), got),
                              timeout=120)
    assert report["problem"] == "too-long" and report["line_bytes"] == max_line + 1, report
    assert not stored(2), "cut, never stored as if it were the record"
