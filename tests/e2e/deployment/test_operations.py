"""docs/operations.md, "Ship a real server's audit log", followed step by step on the running test
stack, as a user would: a second server's log written, checked with `parse`, added to `sources:`,
shipped by `up` on the running stack, and found by `query`."""

from __future__ import annotations

import json

from auditpipe import paths
from auditpipe.tools.simulate import simulate

SERVER = "e2e-operations"


def test_a_second_log_is_shipped_into_the_running_stack_as_docs_operations_says(stack, tmp_path):
    guide = (paths.REPO / "docs" / "operations.md").read_text()
    for step in ("./auditpipe parse", "./auditpipe config check", "./auditpipe up", "./auditpipe status",
                 "./auditpipe query events-by-server --server db-01 --from 1h"):
        assert step in guide, f"docs/operations.md no longer says {step}: change this test with it"

    # 1-2: the server writes its log into a directory of its own, which the collector can read
    log = tmp_path / "mysql-audit" / "audit.log"
    before = simulate(log, rate=500, duration=6, speedup=100, seed=93, rotate_on_size=0)

    # 3: the job's own reader, offline: every record an event, the format said
    r = stack.cli("parse", str(log), "--server", SERVER)
    assert "format percona-json" in r.stderr, r.stderr
    assert len(r.stdout.splitlines()) == before.records == len(log.read_text().splitlines())

    # 4: the source added to `sources:` and the file checked
    original = stack.cfg_file.read_text()
    assert "\nsources:\n" in original
    stack.cfg_file.write_text(original.replace(
        "\nsources:\n", f"\nsources:\n  - {{path: {log}, server: {SERVER}, format: auto}}\n", 1))
    try:
        assert stack.cli("config", "check").stdout.strip().endswith(": valid")

        # 5: up on the running stack restarts only the collector, with the new source
        r = stack.cli("up")
        assert "sources changed, restarting rsyslogd" in r.stdout + r.stderr, r.stdout + r.stderr

        # 6: status lists it; the first query finds every record, those the file held before it was
        # added (read from the start of the live file) and those the server writes after
        collector = next(row for row in stack.status() if row["component"] == "collector")
        assert SERVER in collector["detail"], collector
        after = simulate(log, rate=500, duration=4, speedup=100, seed=94, rotate_on_size=0)
        expected = before.records + after.records

        def counted():
            rows = json.loads(stack.cli("query", "events-by-server", "--server", SERVER, "--from", "2d",
                                        "--json").stdout)
            total = sum(row["events"] for row in rows)
            return total >= expected, total

        assert stack.wait_for("the new server's events in the stats", counted) == expected
        docs = stack.stored_documents(SERVER, expected)
        assert len(docs) == len({d["_id"] for d in docs}) == expected, "and every record stored once"
    finally:
        stack.cfg_file.write_text(original)
        stack.cli("up")  # the collector goes back to the stack's own sources
