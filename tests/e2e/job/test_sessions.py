"""Sessions built by the job from a real log (tests/helpers/stack.py's stack): each connection of the simulated
traffic becomes one session with exactly its records, ended the way its records end it, and the two
commands show them."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from auditpipe.tools.simulate import simulate

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]

SERVER = "e2e-sessions"


def _expected(log) -> dict[int, dict]:
    """Per connection id of the log (0, the server's own records, is none): its records and how it ends."""
    lines = defaultdict(list)
    for raw in log.read_bytes().splitlines():
        record = json.loads(raw)["audit_record"]
        if int(record.get("connection_id") or 0) != 0:  # the plugin's start record has none
            lines[int(record["connection_id"])].append(record)
    out = {}
    for cid, records in lines.items():
        first, last = records[0], records[-1]
        assert first["name"] == "Connect", f"the simulator starts each connection with its login: {first}"
        state = ("failed_login" if int(first["status"]) != 0 else "logout" if last["name"] == "Quit" else "open")
        out[cid] = {"records": len(records), "state": state}
    return out


def test_each_connection_is_one_session_with_exactly_its_records(stack):
    m = simulate(stack.log_path(SERVER), rate=400, duration=10, speedup=30, seed=41, rotate_on_size=0,
                 failed_login_burst=3)
    expected = _expected(stack.log_path(SERVER))
    assert any(e["state"] == "failed_login" for e in expected.values()) and len(expected) > 20
    stack.stored_documents(SERVER, m.records, timeout=300)
    sessions = stack.db()[stack.cfg.store["sessions_collection"]]
    ended = {cid: e for cid, e in expected.items() if e["state"] != "open"}

    def by_connection():
        docs = list(sessions.find({"server": SERVER}))
        return {d["connection_id"]: d for d in docs if d["state"] != "open"}, docs

    got = stack.wait_for("every ended connection's session", lambda: (
        set((found := by_connection())[0]) >= set(ended), len(found[0])), timeout=180)
    found, docs = by_connection()
    assert len(docs) == len({d["_id"] for d in docs}) == len(expected), "one session per connection, none twice"
    for cid, e in ended.items():
        d = found[cid]
        assert (d["state"], d["records"]) == (e["state"], e["records"]), (cid, d, e, got)
        assert d["login_time"] <= d["last_event_time"] and d["_id"].startswith(f"{SERVER}/{cid}/")
    listed = json.loads(stack.cli("sessions", "--server", SERVER, "--limit", "100000", "--json").stdout)
    assert {d["_id"] for d in listed} == {d["_id"] for d in docs}
    cid = max((c for c, e in ended.items() if e["state"] == "logout"), key=lambda c: ended[c]["records"])
    shown = stack.cli("session", SERVER, str(cid)).stdout
    assert f"session {found[cid]['_id']}" in shown and "state logout" in shown
    assert len([line for line in shown.splitlines() if line[:4] == "2026" or line[:2] == "20"]) == ended[cid]["records"]
