"""Fault injection on the real local stack: a part of it dies mid-stream (kill -9) or freezes, and
nobody runs `auditpipe up`. Each test checks that the part comes back by itself (the supervisor),
that `status` shows the restart, and that the store ends with exactly the generated events, whose
one-minute counts sum to them and whose hours, daily rollups and evidence follow exactly from them,
whatever was re-sent on the way."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from auditpipe import process
from auditpipe.tools.simulate import simulate

pytestmark = [pytest.mark.faults, pytest.mark.usefixtures("events_emptied_per_test")]

RATE = 2000


def _write_in_background(stack, server: str, seconds: float, stop: threading.Event | None = None, **kw):
    """A writer of ``server``'s log at RATE for ``seconds`` at most, or until ``stop`` is set."""
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("m", simulate(
        stack.log_path(server), rate=RATE, duration=seconds, speedup=1, seed=hash(server) % 1000, stop=stop, **kw)))
    t.start()
    return t, result


def _assert_exactly_stored_and_counted(stack, server: str, m, raw_before: int, timeout: float = 300):
    stack.assert_stored_and_counted_exactly_once(server, m, timeout)
    shipped = stack.raw_messages() - raw_before
    assert shipped >= m.records
    return shipped - m.records  # re-sent by the collector (or the broker)


def write_failed_logins(log, user: str, n: int, first_record: int) -> None:
    """``n`` failed logins of ``user`` from host scanner, appended to ``log`` as Percona JSON, numbered
    from ``first_record`` in the log's record sequence."""
    from datetime import datetime, timezone

    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as f:
        for k in range(n):
            ts = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S UTC")
            f.write(json.dumps({"audit_record": {"name": "Connect", "record": f"{first_record + k}_2026-11-24T00:00:00",
                                                 "timestamp": ts, "connection_id": str(first_record + k), "status": 1045,
                                                 "user": user, "priv_user": "", "os_login": "", "proxy_user": "",
                                                 "host": "scanner", "ip": "203.0.113.9", "db": ""}}).encode() + b"\n")


def _restarts(stack, part: str) -> str:
    return next(r["detail"] for r in stack.status() if r["component"] == part)


# the job's process: tests/e2e/job/test_pipeline.py kills it mid-stream (the restore, its window state and
# chain, and the restart in `status`, there)
@pytest.mark.parametrize("part,server", [("collector", "fault-collector"), ("kafka", "fault-kafka"),
                                         ("store", "fault-store")])
def test_a_killed_part_comes_back_by_itself_and_nothing_is_lost_or_counted_twice(stack, part, server):
    raw_before = stack.raw_messages()
    writer, result = _write_in_background(stack, server, 12, rotate_on_size=0)
    try:
        stack.wait_for(f"{server} events arriving", lambda: ((n := stack.count(server)) > 2000, n), timeout=120,
                       every=0.5)
        old = stack.kill(part)
        stack.wait_back(part, old)
    finally:
        writer.join()
    assert "restarted" in _restarts(stack, part), "status shows the restart"
    resent = _assert_exactly_stored_and_counted(stack, server, result["m"], raw_before)
    print(f"kill -9 of {part}: {resent} records re-sent, absorbed")


def test_a_frozen_store_holds_the_pipeline_back_and_nothing_is_lost(stack):
    """SIGSTOP for 10 s longer than the job waits for the store's answer (sink.request-timeout): writes
    time out and are retried, the job may restart from its checkpoint; the store is alive, so nothing
    restarts it. After SIGCONT everything arrives, once. Alerts do not wait for the store: a brute force
    during the freeze reaches audit.alerts while the store is still frozen (docs/architecture.md, "The
    alert rules read the topic on their own")."""
    from helpers.faults_stack import SINK_REQUEST_TIMEOUT_S

    server, freeze_s = "fault-frozen-store", SINK_REQUEST_TIMEOUT_S + 10
    raw_before = stack.raw_messages()
    writer, result = _write_in_background(stack, server, 10, rotate_on_size=0)
    stack.wait_for(f"{server} events arriving", lambda: ((n := stack.count(server)) > 1000, n), timeout=120,
                   every=0.5)
    pid = stack.kill("store", signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        # the first alert leaves a write to the store in flight (the sink flushes every 0.5 s), and a
        # checkpoint that begins meanwhile (every 2 s) waits for it in the writer's task; the second alert
        # must not wait there too (the alerts' store writer is a task of its own). With the writer chained
        # to the topic's, the second alert did not arrive (seen); if the freeze's checkpoint began before
        # the first alert, nothing waits and this part cannot tell the two apart, but cannot fail either
        for first, victim in ((1, "frozen-victim-1"), (6, "frozen-victim-2")):
            write_failed_logins(stack.log_path("fault-alerts"), victim, 5, first)
            stack.wait_for(f"{victim}'s brute force on audit.alerts, the store frozen", lambda victim=victim: (
                (found := [a["_id"] for a in stack.topic_messages("alerts")
                           if a["rule"] == "brute_force" and a["subject"] == victim]) != [], found),
                           timeout=30, every=1)
            time.sleep(6)  # the scenario's spacing: the first alert's write in flight, a checkpoint begun
        assert time.monotonic() - frozen_at < freeze_s, "raised while the store was frozen"
        time.sleep(max(0.0, freeze_s - (time.monotonic() - frozen_at)))
        assert stack.pid("store") == pid, "a frozen store is not restarted"
    finally:
        stack.kill("store", signal.SIGCONT)
        writer.join()
    _assert_exactly_stored_and_counted(stack, server, result["m"], raw_before, timeout=400)


# 200 records of event time a second at speedup 10 (2,000/s), rotated at 256 KiB (about every 0.4 s), two
# rotated files kept: two seconds with the collector down lose most of what was written then. The
# records' time starts 20 s before now and runs ahead of it (less than the 5 minutes trusted): a time
# behind the earlier tests' would be behind their partitions' watermarks, which the record-gap rule's
# timers wait on
LOSSY = dict(rate=200, duration=600, speedup=10, rotate_on_size=256 * 1024, rotations=2, late_writes=0)


def _wait_for_lines_after_the_death_of(stack, pid: int, log) -> None:
    """Waits until ``pid`` is dead (gone, or a zombie: its supervisor is held and cannot reap it), then
    until ``log`` has grown by 64 KiB (about 200 lines) or been rotated: lines written after it died."""
    def stat():  # None for the moment between a rotation's rename and the new file
        try:
            return log.stat()
        except FileNotFoundError:
            return None

    stack.wait_for(f"the collector (pid {pid}) dead", lambda: (process.gone_or_zombie(pid), pid), timeout=10, every=0.01)
    at = stack.wait_for("the log", lambda: ((s := stat()) is not None, s), timeout=10, every=0.01)
    stack.wait_for("lines written after the collector died", lambda: (
        (now := stat()) is not None and (now.st_ino != at.st_ino or now.st_size >= at.st_size + 64 * 1024),
        now), timeout=30, every=0.01)


def _collector_down_while_rotating(stack, server: str, restart: bool = False):
    """The collector killed, and its supervisor held by SIGSTOP so that it cannot bring it back, for two
    seconds while ``server``'s log is written and rotated (LOSSY); with ``restart``, the server starts
    again as the outage begins: a new sequence from 1, its startup after the last record written before.
    Then 8 s more of writing (80 s of event time: the rule's 30 s grace passes in the stream). Returns
    the manifest of the log written, and of the sequence after the restart (else None)."""
    from datetime import datetime, timedelta, timezone

    log, raw_before, result, writing = stack.log_path(server), stack.raw_messages(), {}, {}

    def write(name: str, seed: int, **kw):
        stop = threading.Event()
        t = threading.Thread(target=lambda: result.setdefault(name, simulate(log, seed=seed, stop=stop, **LOSSY, **kw)))
        t.start()
        writing.update(stop=stop, thread=t)

    write("a", 7, start_time=datetime.now(timezone.utc) - timedelta(seconds=20))
    supervisor = stack.pid("supervisor")
    try:
        stack.wait_for("the collector shipping", lambda: ((n := stack.raw_messages()) > raw_before + 1000, n),
                       timeout=120, every=0.5)
        os.kill(supervisor, signal.SIGSTOP)
        try:
            old = stack.kill("collector")
            if restart:
                # the old sequence's end written while the collector is down, so that it is lost
                # (else a collector that had shipped every line at the kill loses none of it)
                _wait_for_lines_after_the_death_of(stack, old, log)
                writing["stop"].set()
                writing["thread"].join()
                last = datetime.strptime(result["a"].last_event_time, "%Y-%m-%dT%H:%M:%S UTC")
                write("b", 9, start_time=last.replace(tzinfo=timezone.utc) + timedelta(seconds=5))
            time.sleep(2)  # the outage: the fault is the schedule, nothing is awaited
            assert writing["thread"].is_alive(), "the log must be written and rotated while the collector is down"
        finally:
            os.kill(supervisor, signal.SIGCONT)
        stack.wait_back("collector", old)
        time.sleep(8)
    finally:
        writing["stop"].set()
        writing["thread"].join()
    return result["a"], result.get("b")


def test_lines_rotated_away_while_the_collector_was_down_are_a_collector_loss_gap(stack):
    """The collector is down (killed, and its supervisor held by SIGSTOP so that it cannot bring it back)
    while the server rotates through all its kept files: the lines between the last one shipped and the
    oldest kept file are gone. At its start the collector says so: in collector-gaps.log, and to the job,
    whose record_gap alert for exactly the numbers missing from the store is of class collector_loss, its
    dead letter holding the last line shipped before them."""
    server = "fault-lost"
    m, _ = _collector_down_while_rotating(stack, server)
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]
    gaps = stack.wait_for("the collector_loss gap", lambda: (
        (found := {a["gap_class"]: a for a in alerts.find({"server": server, "rule": "record_gap"})}).keys()
        >= {"collector_loss"}, found), timeout=180)
    loss = gaps["collector_loss"]
    lost = int(loss["summary"].split(" ", 1)[0]) if "records," in loss["summary"] else 1
    first = int(loss["_id"].rsplit("/", 1)[1])
    stack.wait_for("every record still on disk at the collector's start, stored", lambda: (
        (n := stack.count(server)) == m.records - lost, n), timeout=300, every=2)
    numbers = [int(i.split("_", 1)[0]) for i in stack.stored_ids(server)]
    assert len(numbers) == len(set(numbers)), "stored once"
    assert set(range(1, m.records + 1)) - set(numbers) == set(range(first, first + lost)), \
        "the alert names exactly the numbers missing from the store"
    assert lost > 100, "the outage lost the files rotated away: the test's premise"
    assert loss["_id"] == f"record_gap/{server}/{m.log_start}/{first}" and loss["severity"] == "high"
    assert set(gaps) == {"restart", "collector_loss"}, "the log's start, and the loss: nothing unexplained"
    reports = [d for d in stack.dead_letters(server) if d["stage"] == "collect"]
    assert len(reports) == 1 and reports[0]["reason"].startswith("the collector lost the lines written after this one")
    assert reports[0]["_id"] in loss["summary"]
    assert json.loads(reports[0]["original"]["text"])["audit_record"]["record"] == f"{first - 1}_{m.log_start}", \
        "the report's line is the last shipped before the loss"
    recorded = (stack.cfg.state_dir / "logs" / "collector-gaps.log").read_text()
    assert str(stack.log_path(server)) in recorded and "in none of its files any more" in recorded
    verified = stack.cli("verify", "--server", server, check=False)
    assert f"SOURCE GAP {server} (collector_loss, high): {lost} records" in verified.stdout, verified.stdout
    assert f"COLLECTOR GAP {server}: 1 the collector recorded" in verified.stdout, verified.stdout


def test_a_restart_while_the_collector_was_down_is_a_sequence_missing_its_beginning(stack):
    """As above, but the server restarts during the outage: the lines lost are the end of one sequence
    and the beginning of the next, start record and all. Nothing of the new sequence says it began: the
    job knows the server's earlier sequence, and the collector's report of lines lost after its last
    line, so the new sequence's beginning is a gap of class collector_loss, exactly the numbers below
    its lowest stored record."""
    server = "fault-lost-restart"
    a, b = _collector_down_while_rotating(stack, server, restart=True)
    assert b.log_start > a.log_start
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]
    beginning = f"record_gap/{server}/{b.log_start}/1"
    gap = stack.wait_for("the new sequence's missing beginning", lambda: (
        (found := alerts.find_one({"_id": beginning})) is not None, found), timeout=180)
    lost = int(gap["summary"].split(" ", 1)[0]) if "records," in gap["summary"] else 1
    reports = [d for d in stack.dead_letters(server) if d["stage"] == "collect"]
    assert len(reports) == 1, reports
    shipped_last = json.loads(reports[0]["original"]["text"])["audit_record"]["record"]  # the report's line
    assert shipped_last.endswith(f"_{a.log_start}"), shipped_last
    last_a = int(shipped_last.split("_", 1)[0])
    stack.wait_for("every record still on disk at the collector's start, stored", lambda: (
        (n := stack.count(server)) == last_a + b.records - lost, n), timeout=300, every=2)
    ids = stack.stored_ids(server)
    assert sorted(int(i.split("_", 1)[0]) for i in ids if i.endswith(a.log_start)) == list(range(1, last_a + 1))
    assert sorted(int(i.split("_", 1)[0]) for i in ids if i.endswith(b.log_start)) == \
        list(range(lost + 1, b.records + 1)), "the alert names exactly the numbers of the new sequence not stored"
    assert last_a < a.records and lost > 100, "the outage lost the end of one sequence and the beginning of the next"
    assert (gap["gap_class"], gap["severity"]) == ("collector_loss", "high"), gap
    assert f"lost after record {last_a} of the sequence started {a.log_start} (its dead letter {reports[0]['_id']})" \
        in gap["summary"], gap["summary"]
    classes = sorted(g["gap_class"] for g in alerts.find({"server": server, "rule": "record_gap"}))
    assert classes == ["collector_loss", "restart"], "the first sequence's start, and the loss: nothing unexplained"


@pytest.mark.parametrize("server,style,rotation", [("fault-rotation", "json", "chain"),
                                                   ("fault-xml-stamped", "xml-old", "timestamp")])
def test_a_collector_killed_twice_during_fast_rotation_catches_up_on_rotated_files(stack, server, style, rotation):
    """Before the catch-up, two kill -9 of the collector while the log rotated about every 0.8 s lost
    8,819 of 120,000 records: the lines of files rotated away while it was down. The second kill comes
    while the first restart's catch-up ships (a collector that crashes again at once): the newest line
    on audit.raw is then the catch-up's, an older one than rsyslog shipped, and for OLD XML a file's
    closing </AUDIT>, which ends every rotated file. The second case: records of several lines (OLD
    XML, framed by rsyslog and the catch-up alike) and files renamed to their rotation time (MySQL
    Enterprise's scheme), which the catch-up must find."""
    raw_before = stack.raw_messages()
    # 2,000 records/s of ~330 bytes, rotated at 256 KiB: a rotation about every 0.4 s, 90 files kept;
    # written until 3 s after the second kill's restart (at most 120 s)
    stop = threading.Event()
    writer, result = _write_in_background(stack, server, 120, stop, rotate_on_size=256 * 1024, rotations=90,
                                          late_writes=2, style=style, rotation=rotation)
    home = stack.cfg.state_dir / "collector"
    try:
        before = stack.raw_messages()  # what the collector ships, as soon as it ships it
        stack.wait_for("the collector shipping", lambda: ((n := stack.raw_messages()) > before + 1000, n),
                       timeout=120, every=0.5)
        assert writer.is_alive(), "the kill must come while the log is written and rotated"
        first = stack.kill("collector")
        old = stack.wait_for("the collector back", lambda: ((p := stack.pid("collector")) not in (None, first), p),
                             timeout=180, every=0.05)
        # its start: rsyslog runs (its own pid file) and the catch-up is at work (the resume file says so)
        stack.wait_for("the restarted collector's catch-up at work", lambda: (
            (home / "rsyslogd.pid").exists() and json.loads((home / "resume-points.json").read_text())["catching_up"],
            None), timeout=60, every=0.05)
        stack.kill("collector")
        stack.wait_back("collector", old)
        time.sleep(3)  # let it run before the writer stops; the fault is the schedule, nothing is awaited
    finally:
        stop.set()
        writer.join()
    m = result["m"]
    assert m.rotations >= 10
    resent = _assert_exactly_stored_and_counted(stack, server, m, raw_before)
    print(f"two kill -9 of the collector during {m.rotations} rotations: {resent} records re-sent, absorbed")
    collector_log = (stack.cfg.state_dir / "logs" / "supervisor.log").read_text()
    assert "shipped" in collector_log and "rsyslog could not read itself" in collector_log, "the catch-up ran"


def test_syslog_senders_are_held_back_not_dropped_while_kafka_is_frozen(stack, tmp_path):
    """Records sent over TCP (`logger`) while Kafka is frozen (SIGSTOP, 45 s: alive, so nobody
    restarts it) wait in the collector's disk-assisted queue; after SIGCONT each is stored once."""
    import shutil
    import subprocess

    from helpers.faults_stack import LISTEN_TCP

    if not shutil.which("logger"):
        pytest.skip("logger (util-linux) is not installed: it is the sender of this test")
    server = "fault-syslog"
    log = tmp_path / "audit.log"
    m = simulate(log, rate=2000, duration=3, speedup=1000, seed=17, rotate_on_size=0)
    host, port = LISTEN_TCP.split("://")[1].rsplit(":", 1)
    pid = stack.kill("kafka", signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        r = subprocess.run(["logger", "--socket-errors=on", "--tcp", "--server", host, "--port", port, "--rfc5424",
                            "--octet-count", "-t", "percona-audit", "-f", str(log)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        time.sleep(max(0.0, 45 - (time.monotonic() - frozen_at)))
        assert stack.pid("kafka") == pid, "a frozen Kafka is not restarted"
    finally:
        stack.kill("kafka", signal.SIGCONT)
    docs = stack.stored_documents(server, m.records, timeout=400)
    want = {json.loads(line)["audit_record"]["record"] for line in log.read_bytes().splitlines() if line}
    assert len(docs) == m.records == len(want)
    assert {d["record_id"] for d in docs} == want, "every record sent while Kafka was frozen, once"
