"""The workload generator: Percona's rename-chain rotation, late writes, manifest that adds up."""

import json
from collections import Counter

from auditpipe.tools.simulate import Manifest, manifest_path, simulate


def records_in(directory):
    ids = Counter()
    malformed = 0
    for f in sorted(directory.glob("audit.log*")):
        for line in f.read_bytes().splitlines():
            try:
                ids[json.loads(line)["audit_record"]["record"]] += 1
            except (ValueError, KeyError):
                malformed += 1
    return ids, malformed


def test_every_record_is_written_once_across_rotations(tmp_path):
    log = tmp_path / "audit.log"
    m = simulate(log, rate=1000, duration=20, speedup=10_000, seed=7, rotate_on_size=64 * 1024,
                 rotations=99, late_writes=3, malformed=4, failed_login_burst=25)
    ids, malformed = records_in(tmp_path)
    assert m.records == 20_000
    assert len(ids) == m.records and max(ids.values()) == 1
    assert malformed == m.malformed == 4
    assert m.rotations > 10
    assert m.late_writes == 3 * m.rotations
    assert Manifest.read(manifest_path(log)) == m
    assert m.failed_logins_by_user["admin"] == 25
    assert sum(m.events_by_name.values()) == m.records


def test_the_manifest_counts_each_connections_records_and_how_it_ends(tmp_path):
    log = tmp_path / "audit.log"
    m = simulate(log, rate=1000, duration=5, speedup=10_000, seed=5, rotate_on_size=0, failed_login_burst=6,
                 incidents=True, restart_at=0.5)
    by_connection = {}
    for line in log.read_bytes().splitlines():
        r = json.loads(line)["audit_record"]
        if int(r.get("connection_id") or 0):
            by_connection.setdefault(str(r["connection_id"]), []).append(r)
    assert {c: n for c, (n, _) in m.connections.items()} == {c: len(rs) for c, rs in by_connection.items()}
    ends = {c: ("failed_login" if int(rs[0]["status"]) else "logout" if rs[-1]["name"] == "Quit" else "open")
            for c, rs in by_connection.items()}
    assert {c: state for c, (_, state) in m.connections.items()} == ends
    assert Counter(ends.values())["failed_login"] >= 6 and Counter(ends.values())["open"] <= 1


def test_rotation_is_a_rename_chain_keeping_n_files(tmp_path):
    log = tmp_path / "audit.log"
    m = simulate(log, rate=1000, duration=10, speedup=10_000, seed=1, rotate_on_size=32 * 1024,
                 rotations=3, late_writes=0)
    names = sorted(p.name for p in tmp_path.glob("audit.log*"))
    assert names == ["audit.log", "audit.log.01", "audit.log.02", "audit.log.03"]
    assert m.rotations > 3
    # the chain moves older files up: .01 holds the newest rotated records, .03 the oldest kept
    def first(p):
        return int(json.loads(p.read_bytes().splitlines()[0])["audit_record"]["record"].split("_")[0])

    assert first(tmp_path / "audit.log.03") < first(tmp_path / "audit.log.02") < first(tmp_path / "audit.log.01")


def test_late_writes_land_in_the_renamed_file(tmp_path):
    log = tmp_path / "audit.log"
    simulate(log, rate=1000, duration=5, speedup=10_000, seed=2, rotate_on_size=16 * 1024, rotations=50,
             late_writes=3)
    rotated = sorted(tmp_path.glob("audit.log.*[0-9]"), key=lambda p: int(p.suffix[1:]), reverse=True)
    last_of_previous = None
    for f in rotated:  # oldest first
        seqs = [int(json.loads(line)["audit_record"]["record"].split("_")[0]) for line in f.read_bytes().splitlines()]
        assert seqs == sorted(seqs)
        if last_of_previous is not None:
            assert seqs[0] == last_of_previous + 1
        last_of_previous = seqs[-1]
    assert f.stat().st_size > 16 * 1024, "the late lines come after the size that triggered rotation"


def test_lines_are_percona_json_with_sessions(tmp_path):
    log = tmp_path / "audit.log"
    simulate(log, rate=1000, duration=3, speedup=10_000, seed=3, rotate_on_size=0)
    recs = [json.loads(line)["audit_record"] for line in log.read_bytes().splitlines()]
    assert recs[0]["name"] == "Audit"
    assert list(recs[1])[:3] == ["name", "record", "timestamp"]
    assert recs[1]["timestamp"].endswith(" UTC")
    names = Counter(r["name"] for r in recs)
    assert names["Connect"] > 0 and names["Quit"] > 0 and names["Query"] > names["Connect"]
    classes = {r.get("command_class") for r in recs if r["name"] == "Query"}
    assert {"select", "update", "insert", "delete", "begin", "commit"} <= classes
    assert any("\n" in r.get("sqltext", "") for r in recs), "multi-line SQL is escaped in JSON, one record per line"


def test_same_seed_same_log(tmp_path):
    a, b = tmp_path / "a" / "audit.log", tmp_path / "b" / "audit.log"
    from datetime import datetime, timezone
    t0 = datetime(2026, 11, 22, 10, 0, tzinfo=timezone.utc)
    simulate(a, rate=1000, duration=2, speedup=10_000, seed=9, start_time=t0, rotate_on_size=0)
    simulate(b, rate=1000, duration=2, speedup=10_000, seed=9, start_time=t0, rotate_on_size=0)
    assert a.read_bytes() == b.read_bytes()


def test_the_baseline_history_gives_each_learned_incident_its_reason_and_the_clean_accounts_none(tmp_path):
    """What the demo's learned incidents rely on, read from the history as the defaults of alerts.baselines
    judge it (learning 7d, usual_hour_days 2 with the hours before and after, volume.min_hours 24); the
    rules themselves are PrincipalBaselinesTest's and the demo's."""
    from datetime import datetime, timedelta, timezone

    from auditpipe.tools.simulate import (
        ETL_BURST,
        ETL_HISTORY_PER_HOUR,
        HOSTS,
        REMOTE_ORIGIN,
        USERS,
        baseline_history,
        learned_accounts,
    )

    before = datetime(2026, 11, 28, 22, 13, tzinfo=timezone.utc)
    log = baseline_history(before, "r1")
    records = [json.loads(line)["audit_record"] for line in log.render().splitlines()]
    assert len(records) == log.n and [r["record"] for r in records] == [f"{i}_{log.startup}" for i in range(1, log.n + 1)]
    times = [datetime.strptime(r["timestamp"], "%Y-%m-%dT%H:%M:%S UTC").replace(tzinfo=timezone.utc) for r in records]
    assert times == sorted(times) and times[0] <= before - timedelta(days=7) and times[-1] <= before - timedelta(hours=2)
    days, hours, origins, objects = {}, Counter(), {}, {}
    for r, t in zip(records, times):
        user = r["user"].split("[")[0]
        days.setdefault(user, {}).setdefault(t.hour, set()).add(t.date())
        hours[(user, t.replace(minute=0, second=0))] += 1
        origins.setdefault(user, set()).add(r["ip"])
        objects.setdefault(user, set()).add(r.get("sqltext", "").split(" FROM ")[-1].split(" ")[0])

    def usual(user, hour):
        return any(len(days[user].get((hour + d) % 24, ())) >= 2 for d in (-1, 0, 1))

    def active_hours(user):
        return [n for (u, _), n in hours.items() if u == user]

    acc = learned_accounts("r1")
    for user in set(USERS) | {acc["remote_admin"], acc["record_lookup"], acc["etl_burst"]}:
        assert all(usual(user, h) for h in range(24)), user
    for user in set(USERS) | {acc["remote_admin"], acc["record_lookup"], acc["oncall_login"]}:
        assert len(active_hours(user)) < 24, user  # volume_spike does not judge them
    assert not usual(acc["oncall_login"], 22) and not usual(acc["oncall_login"], 23)
    etl = active_hours(acc["etl_burst"])
    assert len(etl) >= 24 and set(etl) == {ETL_HISTORY_PER_HOUR} and ETL_BURST > max(100, 3 * ETL_HISTORY_PER_HOUR)
    for admin in [u for u in set(USERS) if u.startswith("dba_")]:
        assert origins[admin] >= {ip for _, ip in HOSTS}, admin
    assert REMOTE_ORIGIN[1] not in origins[acc["remote_admin"]]
    assert "shop.cards" in objects["svc_payments"] and "clinic.patients" in objects["batch"]
    assert not any("clinic." in o for o in objects[acc["record_lookup"]])

    m = simulate(tmp_path / "audit.log", rate=1000, duration=5, speedup=10_000, seed=5, rotate_on_size=0,
                 incidents=True, learned="r1")
    learned = [(a["rule"], a["subject"]) for a in m.expected_alerts if a["subject"].endswith("_r1")]
    assert sorted(learned) == sorted([("off_hours", acc["oncall_login"]), ("new_origin", acc["remote_admin"]),
                                      ("volume_spike", acc["etl_burst"]), ("first_access", acc["record_lookup"])])
