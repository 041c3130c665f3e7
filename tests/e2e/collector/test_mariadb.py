"""A real MariaDB server's audit log through the whole pipeline: the server writes it (server_audit,
rotating), rsyslog ships it, the job parses it as mariadb-audit, and the store must hold exactly
the records the server wrote, counted from the server's own files."""

from __future__ import annotations

import hashlib

import pytest
from helpers.mariadb import MariaDB, require

pytestmark = pytest.mark.e2e

FAILED_LOGINS = 20


def test_a_real_mariadb_servers_audit_log_arrives_whole(stack, tmp_path):
    require()
    server = "e2e-mariadb"
    db = MariaDB(tmp_path / "mariadb", 23306, stack.log_path(server))
    db.start()
    try:
        db.sql("CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY 'sbpass'; "
               "GRANT ALL ON sbtest.* TO sbtest@'%'")
        db.sysbench("prepare")
        db.sysbench("run", "--time=6", "--threads=2", "--rate=40")
        refused = sum(not db.login("mallory", f"guess{i}") for i in range(FAILED_LOGINS))
        assert refused == FAILED_LOGINS
        db.sql("CREATE USER auditor@'%' IDENTIFIED BY 'read-only'; GRANT SELECT ON sbtest.* TO auditor@'%'")
    finally:
        db.stop()

    files = db.audit_files()
    assert len(files) >= 3, f"the server rotated its log: {[f.name for f in files]}"
    lines = [line for f in files for line in f.read_bytes().split(b"\n") if line]
    distinct = {hashlib.sha256(line).hexdigest() for line in lines}
    # byte-identical lines are one event (docs/formats.md); say how many there were
    print(f"{len(lines)} audit lines in {len(files)} files, {len(lines) - len(distinct)} byte-identical repeats")

    stored = [d["line_sha256"] for d in stack.stored_documents(server, len(distinct), timeout=300)]
    assert len(stored) == len(distinct), f"one event per distinct line: {len(stored)} for {len(distinct)}"
    assert set(stored) == distinct, "exactly the lines the server wrote"
    assert not stack.dead_letters(server), "every line the server wrote parses"
    events = stack.db()[stack.cfg.store["events_collection"]]

    failed = events.count_documents({"server": server, "auth_outcome": "failure", "user": "mallory"})
    assert failed == FAILED_LOGINS, "each failed login recognized"
    grants = [d["sqltext"] for d in events.find({"server": server, "event_name": "QUERY", "command_class": "grant"})]
    assert "GRANT SELECT ON sbtest.* TO auditor@'%'" in grants, grants
    assert events.count_documents({"server": server, "command_class": "create",
                                   "sqltext": {"$regex": "^CREATE USER auditor"}}) == 1
    # enrichment of a real server's records: the taxonomy, the tables of every statement sysbench sent
    login_failures = list(events.find({"server": server, "user": "mallory", "event_name": "FAILED_CONNECT"},
                                      {"action": 1, "controls": 1}))
    assert len(login_failures) == FAILED_LOGINS
    assert {d["action"] for d in login_failures} == {"login_failed"}, login_failures[:3]
    assert all("PCI-DSS-10.2.1.4" in d["controls"] for d in login_failures)
    grant = events.find_one({"server": server, "sqltext": "GRANT SELECT ON sbtest.* TO auditor@'%'"})
    assert (grant["category"], grant["action"]) == ("account_management", "grant"), grant
    assert "PCI-DSS-10.2.1.5" in grant["controls"]
    create = events.find_one({"server": server, "sqltext": {"$regex": "^CREATE USER auditor"}})
    assert (create["category"], create["action"]) == ("account_management", "create_user")
    # every statement on tables names them: parsed, or (cut at the server's query_log_limit) scanned for
    no_tables = [(d.get("sqltext"), d.get("tables_error")) for d in events.find(
        {"server": server, "category": {"$in": ["data_read", "data_write", "schema_change"]}, "event_name": "QUERY",
         "action": {"$nin": ["create_database", "drop_database"]}})
        if not d["tables"] and "sbtest" in (d.get("sqltext") or "")]
    assert not no_tables, f"statements whose tables were not read: {no_tables[:5]}"
    unparsed = [d["tables_error"] for d in events.find({"server": server, "tables_error": {"$exists": True}})]
    assert all(e.endswith("tables found by a keyword scan") for e in unparsed), unparsed[:5]
    reads = events.find_one({"server": server, "category": "data_read", "sqltext": {"$regex": "FROM sbtest1 "}})
    assert reads is not None and reads["tables"] == ["sbtest.sbtest1"], reads
    total = stack.wait_for("stats that add up", lambda: ((t := stack.stats_total(server)) >= len(distinct), t))
    assert total == len(distinct)
