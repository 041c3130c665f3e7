"""A real MariaDB sending its audit records to syslog (server_audit_output_type=syslog), the local
syslog daemon forwarding them over TCP to the collector's receiver, and Kafka frozen while the
server works: every record the server sent is stored exactly once, in the record it was."""

from __future__ import annotations

import hashlib
import signal
import time

import pytest
from helpers.faults_stack import LISTEN_MARIADB
from helpers.mariadb import LocalSyslog, MariaDB, require, require_syslog

pytestmark = pytest.mark.faults

FAILED_LOGINS = 10


def test_a_real_mariadb_sending_to_syslog_lands_exactly_once_through_a_kafka_outage(stack, tmp_path):
    require()
    require_syslog()
    server = "fault-mariadb-syslog"
    local = LocalSyslog(tmp_path / "syslog", LISTEN_MARIADB)
    local.start()
    db = MariaDB(tmp_path / "mariadb", 23307, tmp_path / "not-written.log", syslog=local, syslog_info="fault-mdb")
    try:
        db.start()
        db.sql("CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY 'sbpass'; "
               "GRANT ALL ON sbtest.* TO sbtest@'%'")
        db.sysbench("prepare")
        pid = stack.kill("kafka", signal.SIGSTOP)
        frozen_at = time.monotonic()
        try:
            db.sysbench("run", "--time=6", "--threads=2", "--rate=40")
            refused = sum(not db.login("mallory", f"guess{i}") for i in range(FAILED_LOGINS))
            assert refused == FAILED_LOGINS
            time.sleep(max(0.0, 30 - (time.monotonic() - frozen_at)))
            assert stack.pid("kafka") == pid, "a frozen Kafka is not restarted"
        finally:
            stack.kill("kafka", signal.SIGCONT)
    finally:
        db.stop()
        time.sleep(2)  # the local syslog writes and forwards what the server's shutdown sent
        local.stop()

    lines = local.lines()
    assert not (tmp_path / "not-written.log").exists(), "the plugin wrote to syslog, not to a file"
    assert lines and all(b" mysql-server_auditing " in line for line in lines[:5]), lines[:5]
    distinct = {hashlib.sha256(line).hexdigest() for line in lines}
    print(f"{len(lines)} records sent through syslog, {len(lines) - len(distinct)} byte-identical repeats")
    stored = stack.stored_documents(server, len(distinct), timeout=400)
    assert {d["line_sha256"] for d in stored} == distinct, "exactly the messages the server sent"
    assert len(stored) == len(distinct), "each once"
    assert not stack.dead_letters(server), "every record the server sent parses"
    assert {d["format"] for d in stored} == {"mariadb-audit"}
    assert {d["extra"]["syslog_info"] for d in stored} == {"fault-mdb"}
    failed = [d for d in stored if d.get("auth_outcome") == "failure" and d["user"] == "mallory"]
    assert len(failed) == FAILED_LOGINS, "each failed login recognized"
