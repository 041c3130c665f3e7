"""The direct path (collectors/fluentd/mongo-direct.conf, AUDITPIPE_OUTPUT=mongo): a real Fluentd
(tests/helpers/fluentd.py) tailing a Percona JSON log straight into a capped collection of the e2e stack's
store, with no Kafka and no Flink. Exact documents through rotations with late writes, malformed
lines as dead letters, a SIGTERM and a kill -9 mid-stream, and the known trap of this setup: a
collection dropped while Fluentd runs must never come back uncapped (an insert into a missing
collection creates it uncapped), and one found uncapped is never written to."""

from __future__ import annotations

import time
import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest
from helpers.fluentd import Fluentd, faults_while_writing
from helpers.fluentd import fluentd_command as find_fluentd

from auditpipe.tools.simulate import MALFORMED_LINES, simulate

pytestmark = pytest.mark.e2e

DATABASE = "auditpipe_direct_e2e"
COLLECTION = "audit_events"
CAPPED_MB = 512  # FerretDB counts about 4 KB per event against the cap (docs/store.md): room for 120,000


@pytest.fixture(scope="module")
def fluentd_command(stack) -> str:
    return find_fluentd(stack.cfg.tools_dir)


@pytest.fixture
def direct_db(stack):
    db = stack.db().client[DATABASE]
    db.client.drop_database(DATABASE)
    yield db
    db.client.drop_database(DATABASE)


def direct_fluentd(command: str, stack, server: str, root) -> Fluentd:
    f = Fluentd(command, stack, server, root)
    uri = urllib.parse.urlsplit(stack.cfg.store_uri)
    f.env.update({"AUDITPIPE_OUTPUT": "mongo", "AUDITPIPE_MONGO_COLLECTION": COLLECTION,
                  "AUDITPIPE_MONGO_CAPPED_MB": str(CAPPED_MB),
                  "AUDITPIPE_MONGO_URI": urllib.parse.urlunsplit(uri._replace(path=f"/{DATABASE}"))})
    return f


def stored_ids(db, server: str) -> list[str]:
    return [d["_id"] for d in db[COLLECTION].find({"server": server}, {"_id": 1})]


def wait_for_ids(stack, db, server: str, wanted: set[str], fluentd: Fluentd, timeout: float = 180) -> list[str]:
    """Waits until the server's documents number ``wanted``, for as long as their count still grows
    (Fluentd retries a failed chunk with a back-off of up to 30 s, and each count reads the whole
    collection) but ``timeout`` seconds at most without growth; then says where the missing ones were."""
    last, grew_at, hard_stop = -1, time.monotonic(), time.monotonic() + 5 * timeout
    while (n := db[COLLECTION].count_documents({"server": server})) < len(wanted):
        now = time.monotonic()
        if n != last:
            last, grew_at = n, now
        if now - grew_at > timeout or now > hard_stop:
            ids = set(stored_ids(db, server))
            missing = {w for w in wanted if f"{server}/{w}" not in ids}
            raise AssertionError(f"{n} of {len(wanted)} documents of {server}, none more for "
                                 f"{now - grew_at:.0f} s; {len(missing)} missing, e.g. {sorted(missing)[:5]}\n"
                                 f"{fluentd.where_missing(missing)}")
        time.sleep(2)
    time.sleep(3)  # anything more (a duplicate would be an error) would have arrived by now
    return stored_ids(db, server)


def assert_exactly(ids: list[str], server: str, m) -> None:
    want = {f"{server}/{r}" for r in m.record_ids()}
    assert len(ids) == len(set(ids)) and set(ids) == want, (len(ids), len(want), sorted(set(want) - set(ids))[:5])


def assert_capped(db) -> None:
    options = db[COLLECTION].options()
    assert options.get("capped") is True and options.get("size") == CAPPED_MB * 1024 * 1024, options


def test_direct_path_stores_each_record_once_through_rotations(stack, fluentd_command, direct_db, tmp_path):
    server = "e2e-direct-rotation"
    fluentd = direct_fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    try:
        # a rotation every ~1.5 s (see the restart test below: faster, this Fluentd can read a rotated file
        # from a wrong offset and lose its records)
        m = simulate(fluentd.log, rate=2000, duration=15, speedup=1, seed=61, rotate_on_size=1024 * 1024,
                     rotations=90, late_writes=3, malformed=len(MALFORMED_LINES))
        assert m.rotations >= 7
        ids = wait_for_ids(stack, direct_db, server, m.record_ids(), fluentd)
        assert_exactly(ids, server, m)
        assert_capped(direct_db)
        # the event model's core fields, from the line itself
        for d in direct_db[COLLECTION].find({"server": server}).limit(500):
            assert d["_id"] == f"{server}/{d['record_id']}" and d["collector"] == "fluentd-direct"
            assert isinstance(d["event_time"], datetime) and d["format"] == "percona-json"
            assert f'"record":"{d["record_id"]}"' in d["original"], d
            assert None not in d.values(), d
            if "user_raw" in d:  # Percona writes "name[name] @ host [ip]" or just the name
                assert d["user"] == d["user_raw"].split("[")[0].strip(), d
        # every malformed line is a dead letter with the reason, the bytes kept (BSON binary when not UTF-8)
        dead = stack.wait_for("the malformed lines' dead letters", lambda: (
            len(d := list(direct_db["dead_letters"].find({"server": server}))) >= m.malformed, d))
        kept = {bytes(d["line"]) if isinstance(d["line"], bytes) else d["line"].encode() for d in dead}
        assert set(MALFORMED_LINES) <= kept and len(dead) == len(kept)
        # anything more is a piece of a line also stored whole: Fluentd 1.16's in_tail can watch a rotated
        # file twice while it is appended to within rotate_wait (fluent/fluentd#4243), and the second
        # watcher can start mid-line (docs/deployment.md); the whole lines it reads again are stored once
        pieces = kept - set(MALFORMED_LINES)
        if pieces:
            originals = [d["original"].encode() for d in direct_db[COLLECTION].find({"server": server}, {"original": 1})]
            assert all(any(p in o and p != o for o in originals) for p in pieces), sorted(pieces)[:3]
            assert len(pieces) <= 2, f"{len(pieces)} pieces of lines read twice: {sorted(pieces)[:3]}"
        assert all(d["reason"] and isinstance(d["detected_at"], datetime) for d in dead)
        problems = [p for p in fluentd.problems() if "send an error event to @ERROR" not in p]
        assert not problems, "\n".join(problems)
    finally:
        fluentd.stop()


def test_direct_path_restarted_and_killed_mid_stream_loses_nothing(stack, fluentd_command, direct_db, tmp_path):
    server = "e2e-direct-restarts"
    fluentd = direct_fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.start()
    # a rotation every ~4.3 s, Fluentd down 4 s per fault: at ~0.2 s Fluentd's in_tail (follow_inodes) can
    # read a rotated file from a wrong offset and lose its records while this busier Fluentd (parser and
    # record_transformer) runs, and through a restart it lost a whole file at ~1.7 s on the Kafka path: a
    # limit of Fluentd, docs/deployment.md and docs/collectors.md say so
    try:
        # the database is this test's alone: its collection's count is the server's (the estimate, from
        # the collection's statistics: a filtered count makes FerretDB read every document, seconds
        # each on a busy machine, and the writer could finish before the faults came)
        m = faults_while_writing(stack, fluentd, lambda: direct_db[COLLECTION].estimated_document_count(), 300,
                                 rate=1500, duration=600, speedup=1, seed=62, rotate_on_size=2 * 1024 * 1024,
                                 rotations=300, late_writes=3)
        assert_exactly(wait_for_ids(stack, direct_db, server, m.record_ids(), fluentd), server, m)
        assert_capped(direct_db)
    finally:
        fluentd.stop()


def append_records(log, tmp_path, seed: int, start: datetime, n: int = 1000):
    """Writes ``n`` new records (their own log start, so their own ids) to the end of the live log."""
    staging = tmp_path / f"staging-{seed}" / "audit.log"
    staging.parent.mkdir(parents=True)
    m = simulate(staging, rate=n, duration=1, speedup=50, seed=seed, rotate_on_size=0, start_time=start)
    with open(log, "ab") as out:
        out.write(staging.read_bytes())
    return m


def test_a_dropped_collection_comes_back_capped_and_an_uncapped_one_is_never_written(
        stack, fluentd_command, direct_db, tmp_path):
    server = "e2e-direct-drop"
    fluentd = direct_fluentd(fluentd_command, stack, server, tmp_path)
    fluentd.log.touch()
    fluentd.start()
    events = direct_db[COLLECTION]
    t0 = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
    try:
        first = append_records(fluentd.log, tmp_path, 71, t0)
        assert_exactly(wait_for_ids(stack, direct_db, server, first.record_ids(), fluentd), server, first)

        # dropped while Fluentd runs: the next chunk creates it again, capped
        events.drop()
        second = append_records(fluentd.log, tmp_path, 72, t0 + timedelta(minutes=1))
        assert_exactly(wait_for_ids(stack, direct_db, server, second.record_ids(), fluentd), server, second)
        assert_capped(direct_db)

        # found uncapped (created by anything else): nothing is written into it, the documents wait
        events.drop()
        direct_db.create_collection(COLLECTION)
        third = append_records(fluentd.log, tmp_path, 73, t0 + timedelta(minutes=2))
        stack.wait_for("the output refusing the uncapped collection", lambda: (
            "exists but is not capped" in fluentd.output.read_text(errors="replace"), fluentd.tail(5)), timeout=60)
        time.sleep(3)
        assert events.count_documents({}) == 0
        # once it is gone, the retry creates it capped and stores every waiting document
        events.drop()
        assert_exactly(wait_for_ids(stack, direct_db, server, third.record_ids(), fluentd, timeout=120), server, third)
        assert_capped(direct_db)
    finally:
        fluentd.stop()
