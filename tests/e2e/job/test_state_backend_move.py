"""A stack whose checkpoints the heap state backend wrote moves to RocksDB by itself
(stack/flink/job.py ``move_state``): the job restores its heap checkpoint on the heap, stops
with a savepoint in Flink's canonical format and runs again from it on RocksDB, while a server
writes; then `auditpipe upgrade` hands the job's state to the job of this checkout through a
savepoint, the server still writing. Every record is stored, counted, archived and linked once
across the move and the upgrade.

Here the MiniCluster (one process, started again after the stop), on a stack of its own (ports,
state): the move stops and starts the job, which the other tests must not see. The local Flink
cluster (a JobManager and two TaskManagers that outlive the stopped job, which is submitted again)
moves in tests/e2e/job/test_flink_cluster.py, on that module's stack, with ``move_to_rocksdb_mid_stream``.
"""

from __future__ import annotations

import re

import pytest
from helpers.stack import running_stack

from auditpipe.stack.flink import flink_rest, job_settings

pytestmark = pytest.mark.e2e

SERVER = "backend-move"
ON_HEAP = ", flink.state.backend.type: hashmap"
# below Linux's ephemeral range (tests/unit/test_test_layout.py)
PORTS = {"kafka": 31492, "controller": 31493, "store": 27717, "flink": 31481}


def running_state_backend(stack) -> str:
    job = next(j["jid"] for j in flink_rest.call(stack.cfg, "/jobs/overview")["jobs"] if j["state"] == "RUNNING")
    return flink_rest.call(stack.cfg, f"/jobs/{job}/checkpoints/config")["state_backend"]


def test_checkpoints_of_the_heap_backend_move_to_rocksdb_and_nothing_is_lost_or_doubled(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("move"), PORTS, [SERVER], "auditpipe_move", capped_mb=256,
                       job_options=ON_HEAP) as stack:
        move_to_rocksdb_mid_stream(stack, SERVER, "flink", upgrade=True)


def move_to_rocksdb_mid_stream(stack, server: str, job_process: str, upgrade: bool = False) -> None:
    """``stack`` runs its job on the heap backend (``ON_HEAP`` in its job options): ``server`` writes
    while the stack goes down and up with the default backend (and, with ``upgrade``, while `auditpipe
    upgrade` hands the job's state to the job of this checkout through a savepoint); then every record
    is checked, and a kill of ``job_process`` (the part whose kill makes the job restore from its newest
    snapshot) restores on RocksDB from its own checkpoint."""
    checkpoints = stack.cfg.state_dir / "flink" / "checkpoints"
    assert "HashMap" in running_state_backend(stack)
    assert job_settings.checkpoints_state_backend(checkpoints) == "hashmap"

    # written until 1,000 more lines are shipped after the move, however long the first checkpoint
    # takes. The server keeps 40 rotated files: the collector is down from `down` to `up` (on the
    # local cluster 40 s and more on a busy machine, about 4 files at this rate), and files the server
    # deletes meanwhile are a gap the collector reports, not what this test is about. 150 records a
    # second: the checks after the move read every stored event several times, each read a scan of
    # the capped collection on FerretDB (docs/store.md), so their time grows with what was written
    shipped_before = stack.raw_messages()
    writer, stop, result = stack.writing(server, rate=150, duration=300, speedup=1, seed=31,
                                         rotate_on_size=512 * 1024, rotations=40, late_writes=2)
    try:
        stack.wait_for_a_checkpoint_of_this_run(shipped_before, records=2000)
        assert writer.is_alive(), "the move must come mid-stream"
        stack.cli("down")
        # the configuration now takes the default backend (RocksDB); the checkpoints are the heap's
        stack.cfg_file.write_text(stack.cfg_file.read_text().replace(ON_HEAP, ""))
        up = stack.cli("up")
        stack.wait_shipped_on("the log written and shipped on after the move", stack.raw_messages(), 1000)
        if upgrade:
            upgraded = stack.cli("upgrade")
            said = upgraded.stdout + upgraded.stderr
            assert "stopped with savepoint" in said and re.search(r"restoring (the job )?from savepoint", said), said
            stack.wait_shipped_on("the log written and shipped on after the upgrade", stack.raw_messages(), 500)
    finally:
        stop.set()
        writer.join()
    said = up.stdout + up.stderr
    assert "written by the hashmap state backend" in said and "moving the job's state from hashmap to rocksdb" in said, said
    assert re.search(r"restoring (the job )?from savepoint", said), said
    assert "RocksDB" in running_state_backend(stack)
    assert job_settings.checkpoints_state_backend(checkpoints) == "rocksdb"

    m = result["m"]
    stack.assert_stored_and_counted_exactly_once(server, m)
    stack.assert_archived_exactly(server)
    stack.assert_chain_intact(server)
    verified = stack.cli("verify", "--server", server, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # a kill after the move restores on RocksDB from its own checkpoint, not the savepoint
    stack.wait_for("a checkpoint on RocksDB", lambda: (any(checkpoints.glob("*/chk-*/_metadata")), None), timeout=60)
    killed = stack.kill(job_process)
    stack.wait_back(job_process, killed)
    stack.wait_for("the job to run again on RocksDB", lambda: ("RocksDB" in (b := _backend_or_none(stack)), b),
                   timeout=180)
    assert not (checkpoints / job_settings.SAVEPOINTS).exists(), "the savepoint is dropped once a checkpoint follows it"


def _backend_or_none(stack) -> str:
    try:
        return running_state_backend(stack)
    except (OSError, StopIteration, ValueError, KeyError):
        return ""
