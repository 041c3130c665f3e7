"""The archive's translation of aggregation stages to DuckDB (cli/auditpipe/archive/), on a small
Parquet file: each stage as MongoDB means it (a missing field is not equal to 0; $exists on a list
item; $unwind drops a missing or empty list). The saved queries themselves are compared with the
real store's answers in tests/e2e/evidence/test_archive_and_chain.py."""

from datetime import datetime, timezone

import pytest

from auditpipe.archive import mongo_sql, reader, retention
from auditpipe.errors import UserError
from auditpipe.stack import tiers

ROWS = [
    ("a/1", "db-01", "2026-11-22 10:00:00", "Query", 0, None, ["PCI-1", "SOX-1"], []),
    ("a/2", "db-01", "2026-11-22 10:01:00", "Query", 1064, None, ["PCI-1"], ["pci_cardholder"]),
    ("a/3", "db-01", "2026-11-22 10:02:00", "Connect", 1045, "failure", None, None),
    ("a/4", "db-02", "2026-11-23 09:00:00", "Connect", None, "success", [], None),
]


@pytest.fixture()
def parquet(tmp_path):
    f = tmp_path / "events.parquet"
    con = reader.connect()
    values = ", ".join(
        f"('{i}', '{s}', TIMESTAMPTZ '{t}+00', '{n}', {'NULL' if st is None else st}, "
        f"{'NULL' if a is None else repr(a)}, {'NULL' if c is None else ('[' + ','.join(repr(x) for x in c) + ']::VARCHAR[]')}, "
        f"{'NULL' if d is None else ('[' + ','.join(repr(x) for x in d) + ']::VARCHAR[]')})"
        for i, s, t, n, st, a, c, d in ROWS)
    con.execute(f"""COPY (SELECT * FROM (VALUES {values}) AS t(_id, server, event_time, event_name, status,
                    auth_outcome, controls, data_classes)) TO '{f}' (FORMAT parquet)""")
    return f


def run(parquet, pipeline):
    sql, params = mongo_sql.to_sql(pipeline, reader.parquet_source([parquet]))
    cur = reader.connect().execute(sql, params)
    names = [d[0] for d in cur.description]
    return [{n: reader.mongo_like(v) for n, v in zip(names, row) if v is not None} for row in cur.fetchall()]


def test_match_as_mongodb_means_it(parquet):
    ids = lambda p: sorted(r["_id"] for r in run(parquet, [{"$match": p}]))  # noqa: E731
    assert ids({"status": {"$ne": 0}}) == ["a/2", "a/3", "a/4"], "a missing field is not equal to 0"
    assert ids({"auth_outcome": {"$exists": False}}) == ["a/1", "a/2"]
    assert ids({"data_classes.0": {"$exists": True}}) == ["a/2"], "an empty list has no first item"
    assert ids({"event_name": {"$in": ["Connect"]}, "server": "db-01"}) == ["a/3"]
    assert ids({"controls": "PCI-1"}) == ["a/1", "a/2"], "equality on a list: one of its items"
    assert ids({"controls": {"$in": ["SOX-1", "HIPAA-1"]}}) == ["a/1"]
    assert ids({"server": {"$in": ["db-02"]}}) == ["a/4"]
    since = datetime(2026, 11, 22, 10, 1, tzinfo=timezone.utc)
    assert ids({"event_time": {"$gte": since, "$lt": datetime(2026, 11, 23, tzinfo=timezone.utc)}}) == ["a/2", "a/3"]


def test_group_sort_unwind_count_project(parquet):
    by_name = run(parquet, [{"$group": {"_id": {"event_name": "$event_name"}, "n": {"$sum": 1}}},
                            {"$sort": {"_id.event_name": 1}}])
    assert by_name == [{"_id": {"event_name": "Connect"}, "n": 2}, {"_id": {"event_name": "Query"}, "n": 2}]
    grouped = run(parquet, [{"$unwind": "$controls"}, {"$group": {"_id": {"control": "$controls"}, "n": {"$sum": 1}}},
                            {"$sort": {"_id.control": 1}}])
    assert grouped == [{"_id": {"control": "PCI-1"}, "n": 2}, {"_id": {"control": "SOX-1"}, "n": 1}]
    assert run(parquet, [{"$match": {"server": "db-01"}}, {"$count": "events"}]) == [{"events": 3}]
    assert run(parquet, [{"$match": {"_id": "a/3"}}, {"$project": {"_id": 0, "event_name": 1, "status": 1}}]) == [
        {"event_name": "Connect", "status": 1045}]
    summed = run(parquet, [{"$group": {"_id": None, "total": {"$sum": "$status"}}}])
    assert summed == [{"total": 0 + 1064 + 1045}]
    assert [r["_id"] for r in run(parquet, [{"$sort": {"event_time": -1}}, {"$limit": 2}])] == ["a/4", "a/3"]


def test_what_the_archive_cannot_run_is_said(parquet):
    with pytest.raises(UserError, match=r"\$lookup"):
        mongo_sql.to_sql([{"$lookup": {}}], "x")
    with pytest.raises(UserError, match="events only"):
        mongo_sql.run_pipeline(parquet.parent, "stats", [], None, None)


def test_compaction_merges_a_closed_days_files_into_one_with_the_same_rows(tmp_path):
    from datetime import date

    day = tmp_path / "events" / "server=db-01" / "date=2026-11-20"
    day.mkdir(parents=True)
    con = reader.connect()
    for n, seqs in enumerate(([1, 2, 3], [4, 5])):
        values = ", ".join(f"('db-01/{s}', 'db-01', TIMESTAMPTZ '2026-11-20 10:00:0{s}+00', "
                           f"{{'topic': 'audit.raw', 'partition': 0, 'offset': {s}, 'timestamp': TIMESTAMPTZ "
                           f"'2026-11-20 10:00:0{s}+00'}}, {s}::BIGINT, 'd{s}')" for s in seqs)
        con.execute(f"COPY (SELECT * FROM (VALUES {values}) AS t(_id, server, event_time, ingest, chain_seq, "
                    f"chain_digest)) TO '{day / f'part-{n}.parquet'}' (FORMAT parquet)")
    (day / ".part-2.parquet.inprogress.x").write_bytes(b"in progress: not read, not touched")
    before = reader.chain_rows(tmp_path, "db-01")
    assert retention.compact(tmp_path, today=date(2026, 11, 21)) == [], "a day is closed only 2 days after it ended"
    done = retention.compact(tmp_path, today=date(2026, 11, 22))
    assert [(e["files"], e["events"]) for e in done] == [(2, 5)]
    assert len(reader.partitions(tmp_path)[0].files()) == 1
    assert (day / ".part-2.parquet.inprogress.x").exists()
    after = reader.chain_rows(tmp_path, "db-01")
    key = lambda r: r["chain_seq"]  # noqa: E731
    assert sorted(after, key=key) == sorted(before, key=key)
    assert "db-01" in (tmp_path / "manifest" / "compaction.jsonl").read_text()


def test_the_hot_tier_warns_only_when_full_and_younger_than_wanted():
    now = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
    two_hours_ago = datetime(2026, 11, 23, 10, 0)  # naive UTC, as pymongo gives it
    gib = 1024 ** 3
    health, detail = tiers.hot_tier(two_hours_ago, gib // 2, gib, 24, now)
    assert health == "ok" and "(2.0 h)" in detail, "not full yet: the stack is young, not short of space"
    health, detail = tiers.hot_tier(two_hours_ago, gib, gib, 24, now)
    assert health == "warning" and "raise store.events_capped_size_mb to about 12289" in detail, detail
    assert tiers.hot_tier(two_hours_ago, gib, gib, 1, now)[0] == "ok"
    health, detail = tiers.hot_tier(two_hours_ago, gib, gib, None, now)
    assert health == "ok" and "(2.0 h)" in detail, "store.events_hot_hours unset: the hours are shown, not judged"


def test_a_damaged_or_foreign_file_is_named_not_a_traceback(tmp_path, parquet):
    day = tmp_path / "events" / "server=db-01" / "date=2026-11-22"
    day.mkdir(parents=True)
    (day / "part-0.parquet").write_bytes(parquet.read_bytes())
    damaged = day / "part-1.parquet"
    damaged.write_bytes(parquet.read_bytes()[:-40])  # cut short, as by a full disk or a bad copy
    for read in (lambda: reader.chain_rows(tmp_path, "db-01"),
                 lambda: mongo_sql.run_pipeline(tmp_path, "events", [{"$count": "n"}], None, None),
                 lambda: reader.span(tmp_path)):
        with pytest.raises(reader.Unreadable, match="part-1.parquet") as caught:
            read()
        assert caught.value.file == str(damaged) and "auditpipe verify" in str(caught.value)
    damaged.unlink()
    assert mongo_sql.run_pipeline(tmp_path, "events", [{"$count": "n"}], None, None) == [{"n": 4}]

    heads = tmp_path / "manifest" / "chain-heads" / "server=db-01"
    heads.mkdir(parents=True)
    (heads / "part-0.jsonl").write_text('{"server": "db-01", "seq": 3, "digest": "ab"}\n{"server": "db-01", "seq"\n')
    with pytest.raises(reader.Unreadable, match=r"part-0.jsonl line 2"):
        reader.chain_heads(tmp_path)
    (heads / "part-0.jsonl").write_text('{"server": "db-01", "seq": "3"}\n')
    with pytest.raises(reader.Unreadable, match=r"line 1: not a chain head"):
        reader.chain_heads(tmp_path)


def test_date_trunc_gives_the_utc_minute_hour_or_day_as_the_store_gives_times(parquet):
    rows = run(parquet, [{"$group": {"_id": {"h": {"$dateTrunc": {"date": "$event_time", "unit": "hour"}}, "s": "$server"},
                                     "n": {"$sum": 1}}}, {"$sort": {"_id.h": 1}}])
    assert rows == [{"_id": {"h": datetime(2026, 11, 22, 10), "s": "db-01"}, "n": 3},
                    {"_id": {"h": datetime(2026, 11, 23, 9), "s": "db-02"}, "n": 1}]
    minutes = run(parquet, [{"$group": {"_id": {"$dateTrunc": {"date": "$event_time", "unit": "minute"}}, "n": {"$sum": 1}}},
                            {"$sort": {"_id": 1}}])
    assert [r["_id"] for r in minutes][:2] == [datetime(2026, 11, 22, 10, 0), datetime(2026, 11, 22, 10, 1)]
    with pytest.raises(UserError, match="dateTrunc"):
        run(parquet, [{"$group": {"_id": {"$dateTrunc": {"date": "$event_time", "unit": "week"}}, "n": {"$sum": 1}}}])
