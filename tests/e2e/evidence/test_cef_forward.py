"""Alerts as CEF over syslog (docs/alerts.md "CEF over syslog"): `auditpipe forward` reads the alerts
topic and a real rsyslogd, the SIEM's receiver here (imtcp, plain and TLS), writes down what it got.
Every alert on the topic arrives as often as it is there, a job's brute force with its fields, an
alert whose text is hostile with every value read back as it was and no key added; a second run
sends nothing again; a receiver that is down holds the alerts until it is back, then each arrives;
a stack brought up with alerts.cef forwards by itself."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
import yaml
from helpers.cef_reader import parse
from helpers.e2e_stack import receiver_certificate, tls_receiver_possible

from auditpipe import paths
from auditpipe.stack import verification
from auditpipe.stack.alerts import forwarder
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-cef"
TCP_PORT, TLS_PORT = 25521, 26521
#: the stack of the last test, whose own config sets alerts.cef
OWN_PORTS = {"kafka": 25292, "controller": 25293, "store": 27817, "flink": 25281}
#: what the receiver writes per message: its reading of the syslog header, and the message as received
TEMPLATE = """template(name="seen" type="list") {
  constant(value="{\\"host\\":\\"") property(name="hostname" format="json")
  constant(value="\\",\\"facility\\":") property(name="syslogfacility")
  constant(value=",\\"severity\\":") property(name="syslogseverity")
  constant(value=",\\"raw\\":\\"") property(name="rawmsg" format="json") constant(value="\\"}\\n")
}"""


class Receiver:
    """rsyslogd listening on TCP and, where its GnuTLS driver is, TLS; each message a line of ``received``."""

    def __init__(self, folder):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.received = folder / "received.jsonl"
        self.tls = tls_receiver_possible()
        tls_input = ""
        if self.tls:
            self.cert, key = receiver_certificate(folder / "tls")
            tls_input = (f'input(type="imtcp" port="{TLS_PORT}" address="127.0.0.1" ruleset="siem" '
                         f'streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon" '
                         f'streamDriver.certFile="{self.cert}" streamDriver.keyFile="{key}")\n')
        self.conf = folder / "rsyslog.conf"
        self.conf.write_text(f"""global(workDirectory="{folder}")
module(load="imtcp")
{TEMPLATE}
ruleset(name="siem") {{ action(type="omfile" file="{self.received}" template="seen") }}
input(type="imtcp" port="{TCP_PORT}" address="127.0.0.1" ruleset="siem")
{tls_input}""")
        self.proc = None

    def start(self) -> None:
        pid = self.folder / "rsyslogd.pid"
        pid.unlink(missing_ok=True)
        self.proc = subprocess.Popen(["rsyslogd", "-n", "-f", str(self.conf), "-i", str(pid)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"rsyslogd ended: {self.proc.stderr.read().decode()}"
            try:
                socket.create_connection(("127.0.0.1", TCP_PORT), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("rsyslogd did not listen within 30 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)

    def messages(self) -> list[dict]:
        """Each message received so far: the header as rsyslog read it, and the CEF in it parsed."""
        if not self.received.exists():
            return []
        out = []
        for line in self.received.read_text(encoding="utf-8").splitlines():
            seen = json.loads(line)
            head, ext = parse(seen["raw"][seen["raw"].index("CEF:0|"):])
            out.append({**seen, "head": head, "ext": ext})
        return out


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    r = Receiver(tmp_path_factory.mktemp("siem"))
    r.start()
    yield r
    r.stop()


def cef_config(stack, name: str, cef: dict):
    """The stack's config with alerts.cef, beside it (its relative paths hold)."""
    data = yaml.safe_load(stack.cfg_file.read_text())
    data.setdefault("alerts", {})["cef"] = cef
    f = stack.cfg_file.parent / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    return f


def forward(cfg_file, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), "forward", *args],
                       capture_output=True, text=True, cwd=paths.REPO, timeout=300)
    assert not check or r.returncode == 0, f"forward failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def delivered_on_topic(stack) -> Counter:
    """The ids of the alerts topic's messages before the forwarder's committed offsets: what it delivered."""
    from confluent_kafka import Consumer, TopicPartition

    from auditpipe.stack.kafka.topics import QUIET_CLIENT, end_offsets, topic_name

    topic = topic_name("alerts")
    c = Consumer({**stack.cfg.kafka_client, "group.id": forwarder.GROUP, **QUIET_CLIENT})
    try:
        committed = {tp.partition: tp.offset for tp in c.committed(
            [TopicPartition(topic, p) for p in end_offsets(stack.cfg.kafka_client, topic)], timeout=30)}
    finally:
        c.close()
    return Counter(m.key().decode() for m in stack.topic_records("alerts")
                   if m.offset() < committed.get(m.partition(), 0))


HOSTILE = "x dhost=forged msg=owned\\ cs1=| CEF:0|a|b|c\nsecond line\r\x07 ünï"


def test_every_alert_on_the_topic_arrives_as_cef_once(stack, receiver):
    simulate(stack.log_path(SERVER), rate=200, duration=10, speedup=5, seed=11, failed_login_burst=8,
             start_time=datetime.now(timezone.utc) - timedelta(seconds=20))
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]
    brute = stack.wait_for("the brute force's alert", lambda: (a := alerts.find_one(
        {"server": SERVER, "rule": "brute_force"}), a), timeout=180)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    hostile = {"_id": f"integrity/{SERVER}/cef-{now.timestamp():.0f}", "rule": "integrity", "severity": "critical",
               "server": SERVER + "|" + HOSTILE, "subject": HOSTILE, "summary": HOSTILE, "first_event_time": now,
               "last_event_time": now, "evidence": [], "evidence_count": 0, "controls": [], "frameworks": {},
               "raised_at": now}
    assert verification.raise_alerts(stack.cfg, [hostile]) == 1  # the integrity alerts' own path: topic, then store

    cfg_file = cef_config(stack, "cef-tcp", {"target": f"tcp://127.0.0.1:{TCP_PORT}", "hostname": "fwd-e2e"})
    out = forward(cfg_file, "--once").stdout
    on_topic = delivered_on_topic(stack)
    assert {brute["_id"], hostile["_id"]} <= set(on_topic)
    got = stack.wait_for("every alert at the receiver", lambda: (
        len(m := receiver.messages()) >= sum(on_topic.values()), m), timeout=60)
    assert Counter(m["ext"]["externalId"] for m in got) == on_topic, "each alert as often as on the topic"
    assert f"{sum(on_topic.values())} alert(s) sent" in out, out
    assert {(m["host"], m["facility"]) for m in got} == {("fwd-e2e", 13)}

    b = next(m for m in got if m["ext"]["externalId"] == brute["_id"])
    assert b["head"][3:] == ["brute_force", "Failed logins of one account within a window reach a threshold", "8"]
    assert b["severity"] == 3  # err
    ms = lambda t: str(int(t.replace(tzinfo=timezone.utc).timestamp() * 1000))  # noqa: E731
    assert (b["ext"]["dhost"], b["ext"]["duser"], b["ext"]["cnt"]) == (SERVER, brute["subject"],
                                                                       str(brute["evidence_count"]))
    assert (b["ext"]["start"], b["ext"]["end"]) == (ms(brute["first_event_time"]), ms(brute["last_event_time"]))
    assert b["ext"]["msg"] == brute["summary"]

    h = next(m for m in got if m["ext"]["externalId"] == hostile["_id"])
    clean = HOSTILE.replace("\x07", "\ufffd")
    assert (h["ext"]["cs5"], h["ext"]["msg"], h["ext"]["dhost"]) == (clean, clean, SERVER + "|" + clean)
    assert set(h["ext"]) == {"externalId", "rt", "start", "end", "dhost", "cs5", "cs5Label", "cnt", "msg"}
    assert (h["head"][5], h["severity"]) == ("10", 2)

    forward(cfg_file, "--once")  # sends only what the job raised since, if anything
    assert_each_once(stack, receiver)


def assert_each_once(stack, receiver) -> None:
    """Every alert the forwarder delivered is at the receiver as often as it is on the topic."""
    on_topic = delivered_on_topic(stack)
    got = stack.wait_for("the receiver to have what was delivered", lambda: (
        len(m := receiver.messages()) >= sum(on_topic.values()), m), timeout=60)
    assert Counter(m["ext"]["externalId"] for m in got) == on_topic, "nothing sent twice, nothing missing"


def test_a_receiver_down_holds_the_alerts_until_it_is_back(stack, receiver):
    if receiver.tls:
        cef = {"target": f"tls://127.0.0.1:{TLS_PORT}", "ca_file": str(receiver.cert), "framing": "rfc3164",
               "hostname": "fwd-tls", "facility": 16}
    else:  # without rsyslog's GnuTLS driver (not installable here): the same over TCP
        cef = {"target": f"tcp://127.0.0.1:{TCP_PORT}", "framing": "rfc3164", "hostname": "fwd-tls", "facility": 16}
    cfg_file = cef_config(stack, "cef-down", cef)
    forward(cfg_file, "--once")  # up to date (the first test's alerts, if it ran)
    before = len(receiver.messages())
    receiver.stop()
    now = datetime.now(timezone.utc).replace(microsecond=0)
    new = [{"_id": f"integrity/{SERVER}/down-{now.timestamp():.0f}-{i}", "rule": "integrity", "severity": "critical",
            "server": SERVER, "subject": f"link {i}", "summary": f"finding {i}", "first_event_time": now,
            "last_event_time": now, "evidence": [], "evidence_count": 0, "controls": [], "frameworks": {},
            "raised_at": now} for i in range(3)]
    assert verification.raise_alerts(stack.cfg, new) == 3

    failed = forward(cfg_file, "--once", check=False)
    assert failed.returncode != 0 and "did not take the alerts" in failed.stderr, failed.stderr
    running = subprocess.Popen([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), "forward"],
                               cwd=paths.REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stack.wait_for("the forwarder to record the failure", lambda: (
            bool((s := forwarder.ForwardState.load(stack.cfg)).error), s), timeout=60, every=1)
        status = json.loads(subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), "status",
                                            "--json"], capture_output=True, text=True, cwd=paths.REPO, timeout=120).stdout)
        row = next(r for r in status if r["component"] == "cef forward")
        assert row["health"] == "warning" and "failing since" in row["detail"], row
        receiver.start()
        def all_held_arrived():
            ms = receiver.messages()
            return {i["_id"] for i in new} <= {m["ext"]["externalId"] for m in ms}, ms

        got = stack.wait_for("the held alerts at the receiver", all_held_arrived, timeout=120, every=1)
        stack.wait_for("the forwarder to confirm them", lambda: (
            (st := forwarder.ForwardState.load(stack.cfg)).error == "" and st.last_alert in {i["_id"] for i in new}, st),
            timeout=30, every=0.5)
    finally:
        running.terminate()
        running.wait(30)
    earlier = {m["ext"]["externalId"] for m in got[:before]}
    arrived = [m for m in got[before:] if m["ext"]["externalId"] not in earlier]
    assert len(arrived) == len(got) - before, "nothing delivered before came again"
    held = [m for m in arrived if m["ext"]["externalId"] in {i["_id"] for i in new}]
    assert sorted(m["ext"]["externalId"] for m in held) == sorted(i["_id"] for i in new), "each held alert once"
    assert {(m["host"], m["facility"], m["severity"]) for m in held} == {("fwd-tls", 16, 2)}
    forward(cfg_file, "--once")  # confirmed: nothing is written again
    assert_each_once(stack, receiver)


def test_up_with_alerts_cef_forwards_by_itself(receiver, tmp_path_factory):
    """`up` with alerts.cef: the local stack's supervisor forwards every alert (a stack of its own, whose
    config sets alerts.cef from the start)."""
    from helpers.stack import running_stack

    cef = f"alerts: {{cef: {{target: 'tcp://127.0.0.1:{TCP_PORT}', hostname: fwd-sup}}}}"
    with running_stack(tmp_path_factory.mktemp("cef-up"), OWN_PORTS, ["cef-up-db"], "auditpipe_cef_up", extra=cef) as s:
        now = datetime.now(timezone.utc).replace(microsecond=0)
        alert = {"_id": f"integrity/cef-up-db/supervised-{now.timestamp():.0f}", "rule": "integrity",
                 "severity": "critical", "server": "cef-up-db", "subject": "link 9", "summary": "finding 9",
                 "first_event_time": now, "last_event_time": now, "evidence": [], "evidence_count": 0,
                 "controls": [], "frameworks": {}, "raised_at": now}
        assert verification.raise_alerts(s.cfg, [alert]) == 1

        def arrived():
            ms = [m for m in receiver.messages() if m["ext"]["externalId"] == alert["_id"]]
            return bool(ms), ms

        got = s.wait_for("the alert at the receiver", arrived, timeout=120)
        assert [m["host"] for m in got] == ["fwd-sup"]
        row = s.wait_for("status to show it delivered", lambda: (
            (r := next(r for r in s.status() if r["component"] == "cef forward"))["health"] == "ok"
            and alert["_id"] in r["detail"], r), timeout=30)
        assert row["endpoint"] == f"tcp://127.0.0.1:{TCP_PORT}"
