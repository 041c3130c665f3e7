"""Fifty sources at once, as a fleet delivers them: forty audit logs in every style the simulator
writes (Percona JSON, OLD and NEW XML, CSV, MySQL Enterprise JSON in both layouts), rotating, and ten
database servers sending Percona JSON records over TCP syslog (RFC 5424 octet-counted and RFC 3164
with line feeds) to one receiver that names each sender by its address. Each server's events are
stored exactly, each counted once and linked into its own chain, and `status` sums the fleet up in
one row."""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

import pytest
from helpers.e2e_stack import FLEET, LISTEN_FLEET

from auditpipe.stack.collector.fleet import LISTED
from auditpipe.tools.simulate import ROTATION_SCHEMES, simulate

pytestmark = pytest.mark.e2e

RECORDS_PER_LOG = 300
SENDERS = [f"127.0.0.{i}" for i in range(2, 12)]  # each its own address: its own server (from-host)
RECORDS_PER_SENDER = 200


def sender_records(tmp_path, seed: int) -> list[bytes]:
    log = tmp_path / f"sender-{seed}" / "audit.log"
    log.parent.mkdir()
    m = simulate(log, rate=1000, duration=RECORDS_PER_SENDER / 1000, speedup=1000, seed=seed, rotate_on_size=0,
                 max_records=RECORDS_PER_SENDER)
    lines = [line for line in log.read_bytes().splitlines() if line]
    assert len(lines) == m.records == RECORDS_PER_SENDER
    return lines


def send(address: str, records: list[bytes], host: str, rfc5424: bool) -> None:
    """``records`` over one TCP connection from ``address``, each in a syslog message from ``host``."""
    target, port = LISTEN_FLEET.split("://")[1].rsplit(":", 1)
    with socket.socket() as s:
        s.bind((address, 0))
        s.connect((target, int(port)))
        now = datetime.now(timezone.utc)
        for r in records:
            if rfc5424:
                msg = f"<134>1 {now:%Y-%m-%dT%H:%M:%SZ} {host} percona-audit 1088 - - ".encode() + r
                s.sendall(str(len(msg)).encode() + b" " + msg)
            else:
                stamp = f"{now:%b} {now.day:2d} {now:%H:%M:%S}"  # RFC 3164: the day padded with a space
                s.sendall(f"<134>{stamp} {host} percona-audit: ".encode() + r + b"\n")


def test_fifty_sources_at_once_each_stored_and_counted_exactly(stack, tmp_path):
    manifests, errors = {}, []

    def write(i: int, server: str, style: str) -> None:
        try:
            manifests[server] = simulate(
                stack.log_path(server), rate=20, duration=RECORDS_PER_LOG / 20, speedup=5, seed=700 + i,
                rotate_on_size=32 * 1024, rotations=20, style=style,
                rotation=ROTATION_SCHEMES[1] if style.startswith("enterprise") else ROTATION_SCHEMES[0],
                start_time=datetime.now(timezone.utc) - timedelta(minutes=5))
            if style.startswith("enterprise"):  # the array's end, as the server writes it when it closes the file:
                with open(stack.log_path(server), "ab") as f:  # the last record's line ends only with it
                    f.write(b"\n]\n")
        except Exception as e:  # noqa: BLE001 (named in the assertion below)
            errors.append(f"{server}: {e!r}")

    sent = {f"fleet-s{i:02d}": sender_records(tmp_path, 800 + i) for i in range(len(SENDERS))}

    def deliver(i: int, host: str) -> None:
        try:
            send(SENDERS[i], sent[host], host, rfc5424=i % 2 == 0)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{host}: {e!r}")

    threads = [threading.Thread(target=write, args=(i, server, style)) for i, (server, style) in enumerate(FLEET.items())]
    threads += [threading.Thread(target=deliver, args=(i, host)) for i, host in enumerate(sent)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(FLEET) + len(SENDERS) == 50
    assert sum(m.rotations > 0 for m in manifests.values()) == len(FLEET), "every log rotated while written"

    want = sum(m.records for m in manifests.values()) + len(SENDERS) * RECORDS_PER_SENDER
    events = stack.db()[stack.cfg.store["events_collection"]]
    fleet = {"$or": [{"server": {"$in": list(FLEET)}}, {"source_file": LISTEN_FLEET}]}

    def stored():  # the cheap count first: a filtered read makes FerretDB read every event (docs/store.md)
        if stack.estimate() < want:
            return False, f"{stack.estimate()} events in the store"
        docs = list(events.find(fleet))
        return len(docs) >= want, docs

    docs = stack.wait_for(f"the fleet's {want} events", stored, timeout=600, every=3)
    by_server = defaultdict(list)
    for d in docs:
        by_server[d["server"]].append(d)

    # the logs: each server's records, by id, once
    for server, m in manifests.items():
        ids = [d["record_id"] for d in by_server.pop(server, [])]
        assert len(ids) == m.records, f"{server}: {len(ids)} stored of {m.records} written"
        assert set(ids) == stack.generated_ids(server, m), server
    # the senders: one server each, named by the receiver from its address, holding its records once
    hosts = {}
    for server, kept in by_server.items():
        header_hosts = {d["extra"]["syslog_host"] for d in kept}
        assert len(header_hosts) == 1, f"{server} holds the records of {header_hosts}"
        hosts[header_hosts.pop()] = server
    assert sorted(hosts) == sorted(sent), f"one server per sender: {hosts}"
    for host, server in hosts.items():
        ids = [d["record_id"] for d in by_server[server]]
        assert len(ids) == len(sent[host]), f"{host} ({server}): {len(ids)} stored of {len(sent[host])} sent"
        assert set(ids) == {json.loads(r)["audit_record"]["record"] for r in sent[host]}, host
    servers = list(manifests) + list(hosts.values())
    assert len(set(servers)) == 50
    for server in servers:
        stack.assert_chain_intact(server, [d for d in docs if d["server"] == server])

    # each event counted once, in its server's one-minute counts
    stored_per_server = Counter(d["server"] for d in docs)
    stats = stack.db()[stack.cfg.store["stats_collection"]]

    def counted():
        got = Counter()
        for row in stats.aggregate([{"$match": {"server": {"$in": servers}}},
                                    {"$group": {"_id": "$server", "n": {"$sum": "$count"}}}]):
            got[row["_id"]] = row["n"]
        return got == stored_per_server, {s: (got[s], n) for s, n in stored_per_server.items() if got[s] != n}

    stack.wait_for("one-minute counts that add up to each server's events", counted, timeout=180)
    dead = list(stack.db()[stack.cfg.store["dead_letter_collection"]].find({"server": {"$in": servers}}))
    assert not dead, dead[:3]

    # status: one row for the fleet, none of the forty files silent (the servers collection follows
    # the chain heads), no line per server and no row naming more than ten
    def fleet_row():
        detail = {r["component"]: r for r in stack.status()}["servers"]["detail"]
        return not [s for s in FLEET if s in detail], detail

    stack.wait_for("a servers row without the fleet's logs among the silent", fleet_row, timeout=60)
    text = stack.cli("status", check=False).stdout
    assert len([s for s in servers if s in text]) <= LISTED, text  # the collector's row names the first ten
