"""The rendered rsyslog configuration: our key contract, one input per source, accepted by rsyslogd."""

import json
import re
import shutil
import subprocess

import pytest

from auditpipe import config
from auditpipe.stack.collector.rsyslog import render_config, source_key


@pytest.fixture
def cfg(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text("sources:\n  - {path: /var/lib/mysql/audit.log, server: db-01}\n")
    return config.load(f)


def test_source_key_follows_the_contract():
    key = json.loads(source_key("db-01", "percona-json", "/a/audit.log"))
    assert key == {"v": 1, "server": "db-01", "format": "percona-json", "source": "/a/audit.log", "collector": "rsyslog"}


def test_one_input_and_action_per_source(cfg, tmp_path):
    text = render_config(cfg, tmp_path / "work")
    assert text.count('type="imfile"') == 2  # the configured source and the demo log
    assert 'file="/var/lib/mysql/audit.log"' in text
    assert 'topic="audit.raw"' in text
    assert '"enable.idempotence=true"' in text and '"acks=all"' in text
    assert 'queue.saveOnShutdown="on"' in text and 'queue.filename=' in text
    keys = [k for k in re.findall(r'key="((?:[^"\\]|\\.)*)"', text) if k.startswith("{")]
    assert json.loads(keys[0].replace('\\"', '"'))["server"] == "db-01"
    assert 'dynaKey="on"' in text and 'key="auditpipe_cut_key_0"' in text, "lines that cannot ship whole: a report"
    assert 'parser.escapeControlCharactersOnReceive="off"' in text


@pytest.mark.skipif(not shutil.which("rsyslogd"), reason="rsyslogd is not installed (./auditpipe setup installs it)")
def test_rsyslogd_accepts_the_rendered_config(cfg, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(render_config(cfg, work))
    check = subprocess.run(["rsyslogd", "-N1", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_format_auto_is_detected_from_the_file_and_said(tmp_path, capsys):
    from auditpipe.errors import UserError
    from auditpipe.stack.collector.rsyslog import shipped_sources

    mdb, percona, empty = tmp_path / "server_audit.log", tmp_path / "audit.log", tmp_path / "new.log"
    mdb.write_bytes(b"20261122 19:15:00,db-host,root,localhost,3,0,CONNECT,,,0\n")
    percona.write_bytes(b'{"audit_record":{"name":"Audit","record":"1_2026-11-22T09:00:00"}}\n')
    f = tmp_path / "auditpipe.yaml"
    f.write_text(f"sources:\n  - {{path: {mdb}, server: a, format: auto}}\n  - {{path: {percona}, server: b, format: auto}}\n")
    sources = shipped_sources(config.load(f))
    assert [s["format"] for s in sources[:2]] == ["mariadb-audit", "percona-json"]
    assert "format mariadb-audit (line 1 of" in capsys.readouterr().err
    f.write_text(f"sources:\n  - {{path: {empty}, server: c, format: auto}}\n")
    with pytest.raises(UserError, match=r"sources\[0\].format is auto, but .*new.log does not exist yet"):
        shipped_sources(config.load(f))
    # the supervisor's rotation watch asks every second: nothing said, the undetected source left out
    f.write_text(f"sources:\n  - {{path: {empty}, server: c, format: auto}}\n  - {{path: {mdb}, server: a, format: auto}}\n")
    capsys.readouterr()
    assert [s["server"] for s in shipped_sources(config.load(f), quiet=True)][:1] == ["a"]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("line,expected", [
    (b'{"audit_record":{"name":"Query"}}', "percona-json"),
    (b'  { "audit_record" : {}}', "percona-json"),
    (b"20261122 19:15:00,db-host,bob,localhost,4,0,FAILED_CONNECT,,,1045", "mariadb-audit"),
    (b"20261122 19:15:00,db-host,root,localhost,3,3,QUERY,shop,'SELECT 1',0", "mariadb-audit"),
    (b'<?xml version="1.0" encoding="utf-8"?>', None),
    # another server_audit_timestamp_format: with the date's dashes, a T, a fraction, an offset
    (b"2026-11-22 19:15:00,h,u,h,3,1,QUERY,,'x',0", "mariadb-audit"),
    (b"20231207T13:14:28.481161+0100,mdbe106,root,localhost,4,0,DISCONNECT,,,0", "mariadb-audit"),
    (b"2026-11-22T19:15:00+01:00,h,u,h,3,1,QUERY,,'x',0", "mariadb-audit"),
    (b"2026/11/22 19:15:00,h,u,h,3,1,QUERY,,'x',0", None),
    (b"1795172401000123,ip-10-0-1-20,app,10.0.0.5,11,0,CONNECT,shop,,0", "aurora-audit"),
    (b'{"time": "2026-11-20T11:00:01Z", "category": "MySqlAuditLogs", "properties": {}}', "azure-mysql-audit"),
    (b'{"TimeGenerated": "2026-11-20T11:00:01Z", "event_class_s": "connection_log"}', "azure-mysql-audit"),
    (b'{"insertId": "x", "protoPayload": {"request": {"@type": "type.googleapis.com/google.cloud.sql.audit.v1.MysqlAuditEntry"}}}',  # noqa: E501
     "cloudsql-mysql-audit"),
    (b"", None),
])
def test_a_line_tells_its_format(line, expected):
    from auditpipe.formats import detect_line

    assert detect_line(line) == expected


LISTENING = """sources:
  - {listen: "tcp://127.0.0.1:5514"}
  - {listen: "udp://127.0.0.1:5514", server: relay-1, format: mariadb-audit, timezone: Europe/Berlin}
"""


def test_a_listen_source_receives_syslog_with_the_key_contract(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(LISTENING)
    c = config.load(f)
    assert [(s["server"], s["format"]) for s in c.listen_sources()] == [("from-host", "syslog"), ("relay-1", "mariadb-audit")]
    assert [s["server"] for s in c.collector_sources()] == [c.demo_server], "listen sources are no files"
    text = render_config(c, tmp_path / "work", [])
    assert 'type="imtcp"' in text and 'type="imudp"' in text and text.count('port="5514"') == 2
    # the key as omkafka writes it: the list template's parts, unescaped twice as rsyslog does for constants
    tcp = re.search(r'template\(name="auditpipe_listen_key_0" type="list"\) \{(.*?)\n\}', text, re.S).group(1)
    assert 'property(name="fromhost-ip" format="json")' in tcp, "from-host: the sender's address, no DNS"
    parts = re.findall(r'constant\(value="((?:[^"\\]|\\.)*)"\)', tcp)
    unescape = lambda v: v.replace('\\\\', '\\').replace('\\"', '"')  # noqa: E731
    key = json.loads(unescape(unescape(parts[0])) + "db-7" + unescape(unescape(parts[1])))
    assert key == {"v": 1, "server": "db-7", "format": "syslog", "source": "tcp://127.0.0.1:5514", "collector": "rsyslog"}
    udp = re.search(r'template\(name="auditpipe_listen_key_1" type="list"\) \{(.*?)\n\}', text, re.S).group(1)
    parts = re.findall(r'constant\(value="((?:[^"\\]|\\.)*)"\)', udp)
    key = json.loads("".join(unescape(unescape(p)) for p in parts))
    assert key["server"] == "relay-1" and key["timezone"] == "Europe/Berlin" and key["format"] == "mariadb-audit"


def test_a_listeners_queue_is_bounded_in_bytes_a_files_in_lines(tmp_path):
    """What the network can fill is bounded in bytes: a listener's action queue holds LISTEN_QUEUE_BYTES of
    the longest lines in memory (then disk, then the receiver stops reading), every producer
    PRODUCER_QUEUE_BYTES; a file source's queue keeps its length in lines."""
    from auditpipe.stack import limits

    f = tmp_path / "auditpipe.yaml"
    f.write_text(LISTENING + "max_line_size: 8m\n")
    c = config.load(f)
    text = render_config(c, tmp_path / "work")
    sizes = [int(n) for n in re.findall(r'queue.size="(\d+)"', text)]
    lim = limits.from_config(c)
    assert lim.listen_queue_messages == limits.LISTEN_QUEUE_BYTES // (8 * 1024 * 1024) == 128
    assert lim.listen_queue_messages * lim.max_line_bytes <= limits.LISTEN_QUEUE_BYTES
    listen = sizes[-4:]  # two listeners, each with its action and its cut action
    assert listen == [lim.listen_queue_messages] * 4, sizes
    assert set(sizes[:-4]) == {limits.FILE_QUEUE_MESSAGES}, "the demo's file sources"
    assert text.count(f'"queue.buffering.max.kbytes={lim.producer_queue_kbytes}"') == len(sizes)
    assert lim.producer_queue_kbytes * 1024 >= 2 * lim.raw_message_bytes


@pytest.mark.skipif(not shutil.which("rsyslogd"), reason="rsyslogd is not installed (./auditpipe setup installs it)")
def test_rsyslogd_accepts_listen_sources(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(LISTENING + f"  - {{listen: 'tls://127.0.0.1:6514', tls_cert: {tmp_path}/c.pem, tls_key: {tmp_path}/k.pem}}\n"
                 f"  - {{listen: 'tls://0.0.0.0:6515', server: db-9, tls_cert: {tmp_path}/c.pem, tls_key: {tmp_path}/k.pem,"
                 f" tls_ca: {tmp_path}/ca.pem, tls_peers: [db-9.example.net, '*.db.example.net']}}\n")
    work = tmp_path / "work"
    work.mkdir()
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(render_config(config.load(f), work))
    check = subprocess.run(["rsyslogd", "-N1", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    text = conf.read_text()
    assert 'streamDriver.name="gtls"' in text
    # the network listener: mutual TLS, and only the permitted certificates' names
    assert 'streamDriver.authMode="x509/name"' in text and 'permittedPeer=["db-9.example.net", "*.db.example.net"]' in text


@pytest.mark.parametrize("source,problem", [
    ("{listen: 'tls://127.0.0.1:6514'}", "needs tls_cert and tls_key"),
    ("{listen: 'tcp://127.0.0.1:70000'}", "port 70000 is not between 1 and 65535"),
    ("{path: /a.log}", "a file source needs its server's name"),
    ("{path: /a.log, server: from-host}", "from-host is for a listen source"),
    ("{path: /a.log, server: db, listen: 'tcp://127.0.0.1:1'}", "give either path"),
    ("{path: /a.log, server: db, tls_cert: /c.pem}", "only a tls:// listen source takes it"),
    ("{listen: 'ftp://127.0.0.1:1'}", "listen"),
    # a listener other hosts reach takes only mutual TLS with the permitted certificates, under a name
    ("{listen: 'tcp://0.0.0.0:5514', server: db}", "only tls:// with tls_ca and tls_peers"),
    ("{listen: 'udp://10.0.0.1:5514', server: db}", "plain TCP and UDP listen on loopback only"),
    ("{listen: 'tls://0.0.0.0:6514', server: db, tls_cert: /c, tls_key: /k, tls_ca: /ca}", "tls_ca and tls_peers"),
    ("{listen: 'tls://db-host:6514', tls_cert: /c, tls_key: /k, tls_ca: /ca, tls_peers: [a]}", "needs the name of the server"),
    ("{listen: 'tls://127.0.0.1:6514', tls_cert: /c, tls_key: /k, tls_peers: [a]}", "tls_peers: needs tls_ca"),
    ("{listen: 'tcp://127.0.0.1:5514', tls_peers: [a]}", "only a tls:// listen source takes it"),
])
def test_a_bad_listen_source_is_named(tmp_path, source, problem):
    from auditpipe.errors import UserError

    f = tmp_path / "auditpipe.yaml"
    f.write_text(f"sources:\n  - {source}\n")
    with pytest.raises(UserError) as e:
        config.load(f)
    assert problem in str(e.value) and "sources" in str(e.value), str(e.value)


def test_a_file_source_named_as_a_from_host_sender_would_be_is_refused(tmp_path):
    from auditpipe.errors import UserError

    f = tmp_path / "auditpipe.yaml"
    f.write_text("sources:\n  - {listen: 'tcp://127.0.0.1:5514'}\n  - {path: /a.log, server: 127.0.0.1}\n")
    with pytest.raises(UserError) as e:
        config.load(f)
    assert "sources[1].server: '127.0.0.1' is an IP address" in str(e.value)
    f.write_text("sources:\n  - {listen: 'tcp://127.0.0.1:5514', server: relay}\n  - {path: /a.log, server: 127.0.0.1}\n")
    config.load(f)  # no from-host sender to speak for it


def test_only_loopback_addresses_take_plain_listeners():
    assert all(config.is_loopback(a) for a in ("tcp://127.0.0.1:1", "udp://127.0.0.9:1", "tcp://[::1]:1",
                                               "tcp://localhost:1"))
    assert not any(config.is_loopback(a) for a in ("tcp://0.0.0.0:1", "tcp://[::]:1", "udp://10.1.2.3:1",
                                                   "tcp://db-host:1"))


def test_two_listen_sources_on_one_address_are_refused(tmp_path):
    from auditpipe.errors import UserError

    f = tmp_path / "auditpipe.yaml"
    f.write_text("sources:\n  - {listen: 'tcp://127.0.0.1:5514'}\n"
                 "  - {listen: 'tls://127.0.0.1:5514', tls_cert: /c, tls_key: /k}\n"
                 "  - {listen: 'udp://127.0.0.1:5514', server: db-1}\n  - {path: /a.log, server: db-1}\n")
    with pytest.raises(UserError) as e:
        config.load(f)
    assert "127.0.0.1:5514 (tcp) is already sources[0]'s" in str(e.value)
    assert "'db-1' is already the server of" in str(e.value)


@pytest.mark.parametrize("line", [
    b'<134>1 2026-11-27T12:00:00Z db-02 percona-audit 1088 - - {"audit_record":{}}',
    b'1 2026-11-27T12:00:00Z db-02 percona-audit 1088 - - {"audit_record":{}}',  # the priority taken off by a receiver
    b'1 - db-02 percona-audit - - [meta x="1"] {"audit_record":{}}',
])
def test_an_rfc5424_envelope_is_unwrapped_with_or_without_its_priority(line):
    from auditpipe.formats import unwrap

    assert unwrap(line) == b'{"audit_record":{}}'
    assert unwrap(b'1795172401000123,ip,app,10.0.0.5,11,0,CONNECT,shop,,0') is None, "an Aurora row is no envelope"
