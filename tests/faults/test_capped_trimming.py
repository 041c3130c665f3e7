"""The capped collection really trims (docs/archive.md): the supervisor's trimming of the local FerretDB
(`trim_capped_collections`; FerretDB's own cleanup is off, docs/store.md) removes a server's oldest
events while the job writes, and `auditpipe verify` still finds the chain intact: the store holds an
unbroken run of the newest links (trimming removes a prefix, because the job inserts a server's events
in link order), the links before it are not an alarm, and the archive holds every event.

Its own stack (ports of its own: the fault suite's stack runs beside it) with a 1 MiB cap, trimmed every second:
about 250 events of FerretDB's ~4 KB each, so a few thousand events are mostly trimmed."""

from __future__ import annotations

import pytest
from helpers.stack import running_stack

from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "fault-trimmed"
PORTS = {"kafka": 31592, "controller": 31593, "store": 27917, "flink": 31581}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("trimming"), PORTS, [SERVER], "auditpipe_trimming", capped_mb=1,
                       store_extra=", capped_cleanup_interval: 1s") as s:
        yield s


def test_verify_is_clean_after_the_store_trims_the_oldest_events(stack):
    m = simulate(stack.log_path(SERVER), rate=100, duration=40, speedup=10, seed=31, rotate_on_size=256 * 1024,
                 rotations=2)
    archived = stack.wait_for(f"{m.records} archived events", lambda: (
        len(r := stack.archived(SERVER)) >= m.records, len(r)), timeout=300)
    rows = stack.archived(SERVER)
    assert len(rows) == m.records and len({r["_id"] for r in rows}) == m.records, archived
    assert sorted(r["chain_seq"] for r in rows) == list(range(1, m.records + 1)), "the archive: every link once"

    events = stack.db()[stack.cfg.store["events_collection"]]
    # the trimming runs every second; wait until it has caught up with the last inserts (FerretDB's own size)
    stack.wait_for("the store trimmed below the cap", lambda: (
        (size := stack.db().command("collStats", stack.cfg.store["events_collection"])["size"]) <= 1024 * 1024, size),
        timeout=120)
    held = sorted(d["chain_seq"] for d in events.find({"server": SERVER}, {"chain_seq": 1}))
    assert 0 < len(held) < m.records / 4, f"the store trimmed: holds {len(held)} of {m.records}"
    first = held[0]
    assert held == list(range(first, m.records + 1)), "trimming removed a prefix: the newest links, unbroken"

    supervisor_log = (stack.cfg.state_dir / "logs" / "supervisor.log").read_text()
    assert f"from {stack.cfg.store['events_collection']}" in supervisor_log, "the supervisor says what it trimmed"

    store_only = stack.cli("verify", "--server", SERVER, "--where", "store", check=False)
    assert store_only.returncode == 0, store_only.stdout + store_only.stderr
    assert f"links {first} to {m.records} ({len(held)} present)" in store_only.stdout, store_only.stdout
    assert f"links 1 to {first - 1} are not here (trimmed" in store_only.stdout, store_only.stdout
    both = stack.cli("verify", "--server", SERVER, check=False)
    assert both.returncode == 0, both.stdout + both.stderr
    assert f"archive  {SERVER}: links 1 to {m.records} ({m.records} present)" in both.stdout, both.stdout
