"""The job on a local Flink cluster (``flink.mode: cluster``, stack/flink/cluster.py): a
JobManager and two TaskManagers as JVMs of their own, the job jar submitted through the REST API
(mutual TLS: only the stack's client key gets an answer), their own connections mutual TLS too.

The stack starts on the heap state backend, whose checkpoints then move to RocksDB while a server
writes (tests/e2e/job/test_state_backend_move.py: the job stops with a savepoint and is submitted again
to the JobManager and TaskManagers, which outlive it), and `auditpipe upgrade` submits the job of
this checkout from a savepoint of the running one, the server still writing. Then a TaskManager running the job's tasks
is killed (-9) mid-stream: the job fails over to the other TaskManager's slots from its last
checkpoint, the supervisor starts the killed one again, and the store holds exactly the records
written, counted once. Its own stack (ports, state), so the move and the kill cannot disturb the
other end-to-end tests; the tests run in this order.
"""

from __future__ import annotations

import pytest
from helpers.stack import running_stack
from test_state_backend_move import ON_HEAP, move_to_rocksdb_mid_stream

from auditpipe.stack.flink import flink_rest

pytestmark = pytest.mark.e2e

# below Linux's ephemeral range (32768-60999): the TaskManagers' own ports are picked from it, and they
# start before the JobManager, whose ports could otherwise be taken
PORTS = {"kafka": 31192, "controller": 31193, "store": 27517, "flink": 31181}
SERVER, MOVE_SERVER = "cluster-tm-kill", "cluster-backend-move"


@pytest.fixture(scope="module")
def cluster_stack(tmp_path_factory):
    # room for both tests' events (about 4.1 KB each in FerretDB, docs/store.md)
    with running_stack(tmp_path_factory.mktemp("cluster"), PORTS, [SERVER, MOVE_SERVER], "auditpipe_cluster",
                       capped_mb=512, job_options=ON_HEAP,
                       flink_extra=", mode: cluster, taskmanagers: 2, rpc_port: 31123") as s:
        yield s


def taskmanagers(stack) -> list[dict]:
    return flink_rest.call(stack.cfg, "/taskmanagers")["taskmanagers"]


def running_the_job(stack) -> list[str]:
    """The TaskManagers where the running job's tasks run, by its vertices: a TaskManager's used slots may
    still be held for a job that stopped (the state backend's move stops one) and say nothing of this one."""
    jobs = [j["jid"] for j in flink_rest.call(stack.cfg, "/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
    assert len(jobs) == 1, jobs
    ids = set()
    for vertex in flink_rest.call(stack.cfg, f"/jobs/{jobs[0]}")["vertices"]:
        answer = flink_rest.call(stack.cfg, f"/jobs/{jobs[0]}/vertices/{vertex['id']}/taskmanagers")
        ids |= {t["taskmanager-id"] for t in answer["taskmanagers"] if t["status"] == "RUNNING"}
    return sorted(ids)


def test_status_shows_the_cluster_its_taskmanagers_and_the_job(cluster_stack):
    # `up` returns once the job runs, which one TaskManager's slots allow: the other may register after
    cluster_stack.wait_for("both TaskManagers registered",
                           lambda: (len(tms := taskmanagers(cluster_stack)) == 2, tms), timeout=60, every=0.5)
    rows = {r["component"]: r for r in cluster_stack.status()}
    assert "flink" not in rows, "no MiniCluster in cluster mode"
    jm = rows["flink-jobmanager"]
    assert jm["health"] == "ok" and "job RUNNING" in jm["detail"] and "2 TaskManager(s)" in jm["detail"], jm
    for n in (1, 2):
        assert rows[f"flink-taskmanager-{n}"]["health"] == "ok", rows[f"flink-taskmanager-{n}"]
        assert "registered" in rows[f"flink-taskmanager-{n}"]["detail"]
    assert {t["id"] for t in taskmanagers(cluster_stack)} == {"flink-taskmanager-1", "flink-taskmanager-2"}



def test_the_clusters_own_connections_take_only_the_stacks_identity(cluster_stack):
    """Internal SSL (stack/flink/flink_rest.py cluster_settings, as the deployment's cluster): the JobManager's RPC
    port speaks TLS and completes a handshake only with the stack's certificate; without one, or in plain
    TCP, nothing gets through."""
    import socket
    import ssl

    port = cluster_stack.cfg.flink["rpc_port"]

    def handshake(context) -> str:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
                    context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.settimeout(3)
                try:  # TLS 1.3: a refused client certificate shows after the handshake, as the peer closing
                    return "closed" if tls.recv(1) == b"" else "open"
                except TimeoutError:
                    return "open"
        except (ssl.SSLError, ConnectionError) as e:
            return type(e).__name__

    assert handshake(flink_rest.context(cluster_stack.cfg)) == "open", "the stack's identity is let in"
    assert handshake(flink_rest.context(cluster_stack.cfg, client_certificate=False)) != "open", \
        "a client without the stack's certificate is not"
    anyone = ssl.create_default_context()
    anyone.check_hostname, anyone.verify_mode = False, ssl.CERT_NONE
    assert handshake(anyone) != "open"


def test_checkpoints_of_the_heap_backend_move_to_rocksdb_on_the_cluster(cluster_stack):
    move_to_rocksdb_mid_stream(cluster_stack, MOVE_SERVER, "flink-jobmanager", upgrade=True)


def test_a_taskmanager_killed_mid_stream_loses_nothing_and_counts_nothing_twice(cluster_stack):
    stack = cluster_stack
    # written until 2,000 more lines are shipped after the kill, however long the first checkpoint takes
    shipped_before = stack.raw_messages()
    writer, stop, result = stack.writing(SERVER, rate=300, duration=300, speedup=1, seed=13,
                                         rotate_on_size=512 * 1024, rotations=90, late_writes=2)
    try:
        stack.wait_for_a_checkpoint_of_this_run(shipped_before)
        busy = running_the_job(stack)
        assert busy, "the job's tasks run on a TaskManager"
        killed_pid = stack.kill(busy[0])
        assert writer.is_alive(), "the kill came mid-stream"
        stack.wait_shipped_on("the log written and shipped on after the kill", stack.raw_messages(), 2000)
    finally:
        stop.set()
        writer.join()
    m = result["m"]
    stack.wait_back(busy[0], killed_pid)
    # the JobManager notices the lost TaskManager by its own heartbeats and connections, on its own time
    log = stack.cfg.state_dir / "logs" / "flink-jobmanager.log"
    stack.wait_for("the job failing over and restoring its last checkpoint", lambda: (
        "switched from state RUNNING to RESTARTING" in (text := log.read_text()) and "Restoring job" in text,
        text[-2000:]), timeout=120, every=0.5)

    docs = stack.stored_documents(SERVER, m.records, timeout=300)
    ids = [d["record_id"] for d in docs]
    assert len(ids) == m.records and set(ids) == m.record_ids(), "exactly the records written, once each"
    stack.assert_stored_as_written(SERVER, docs=docs)
    total = stack.wait_for("stats that add up to N", lambda: ((t := stack.stats_total(SERVER)) >= m.records, t))
    assert total == m.records, "restored window state: no event counted twice or lost"
    stack.assert_archived_exactly(SERVER)
    stack.wait_for("the killed TaskManager registered again",
                   lambda: (busy[0] in (ids := {t["id"] for t in taskmanagers(stack)}), ids), timeout=120)
