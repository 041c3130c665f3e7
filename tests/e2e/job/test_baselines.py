"""Learned baselines on the real stack (tests/helpers/stack.py's): eight days of a server's history brought in
with `auditpipe import` seed the live job's baselines, so that its first live events are judged, and
each of the four learned rules fires exactly once on the live events written for it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from auditpipe import contract
from auditpipe.tools.simulate import HistoryLog as Log

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("events_emptied_per_test")]

SERVER = "e2e-baselines"
LEARNED = tuple(contract.rule(r) for r in ("first_access", "off_hours", "volume_spike", "new_origin"))


def test_imported_history_seeds_the_live_baselines_and_each_learned_rule_fires_once(stack, tmp_path):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    hour = now.replace(minute=0, second=0)
    history = Log(hour - timedelta(days=9))
    for day in range(8, 0, -1):  # eight days, oldest first, each before today
        base = hour - timedelta(days=day)
        for h in (8, 9):  # dba_carol works eight and nine hours after the current hour, from one place
            at = base + timedelta(hours=h)
            history.record(at, "Connect", "dba_carol", "10.0.0.1")
            for i in range(3):
                history.record(at + timedelta(minutes=i + 1), "Query", "dba_carol", "10.0.0.1",
                               "SELECT c FROM sbtest.sbtest1 WHERE id=1")
        for h in (-1, 0, 1):  # app works around the current hour, 30 reads an hour
            for i in range(30):
                history.record(base + timedelta(hours=h, minutes=i), "Query", "app", "10.0.1.11",
                               f"SELECT c FROM sbtest.sbtest2 WHERE id={i}")
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "audit.log").write_bytes(history.render())
    imported = stack.cli("import", str(folder / "audit.log"), "--server", SERVER)
    assert f"imported {history.n:,} events" in imported.stdout, imported.stdout
    baselines = {d["_id"]: d for d in stack.db()[stack.cfg.store["baselines_collection"]].find({"server": SERVER})}
    assert set(baselines) == {f"{SERVER}/dba_carol", f"{SERVER}/app"}, baselines.keys()
    assert baselines[f"{SERVER}/app"]["hours"] >= 23 and baselines[f"{SERVER}/dba_carol"]["origins"] == ["10.0.0.1"]

    live = Log(now)
    live.record(now, "Connect", "dba_carol", "10.0.0.1")  # off_hours: not an hour dba_carol works in
    live.record(now, "Connect", "dba_carol", "203.0.113.5")  # new_origin (and the same clock hour: no second off_hours)
    live.record(now, "Query", "dba_carol", "203.0.113.5", "SELECT number FROM shop.cards WHERE id=7")  # first_access
    for i in range(120):  # volume_spike at the 100th: the threshold is max(100, 3 x 30, 30 + 3 x 0)
        live.record(now, "Query", "app", "10.0.1.11", f"SELECT c FROM sbtest.sbtest2 WHERE id={i}")
    with stack.log_path(SERVER).open("ab") as f:
        f.write(live.render())
    stack.stored_documents(SERVER, live.n)
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]

    def learned():
        found = list(alerts.find({"server": SERVER, "rule": {"$in": list(LEARNED)}}))
        return len(found) >= 4, found

    stack.wait_for("the four learned alerts", learned, timeout=120)
    found = learned()[1]
    assert sorted((a["rule"], a["subject"]) for a in found) == sorted([
        ("first_access", "dba_carol"), ("off_hours", "dba_carol"), ("new_origin", "dba_carol"), ("volume_spike", "app")]), found
    spike = next(a for a in found if a["rule"] == "volume_spike")
    assert "wrote 100 records" in spike["summary"] and "30.0 +- 0.0" in spike["summary"], spike["summary"]
    assert next(a for a in found if a["rule"] == "new_origin")["_id"].endswith("/203.0.113.5")
