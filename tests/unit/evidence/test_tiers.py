"""The tiers' pure parts (docs/queries.md "Tiers"): which of the store's events the archive does not
hold, and one order for the rows of either tier. The tiers themselves, over a real store and archive:
tests/e2e/evidence/test_queries_over_tiers.py."""

from __future__ import annotations

from datetime import datetime, timezone

from auditpipe.config import Config
from auditpipe.evidence import query
from auditpipe.evidence.tiers import EventTiers, TierRead

SINCE, UNTIL = datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2026, 4, 1, tzinfo=timezone.utc)


def tiers(tmp_path, servers=None) -> EventTiers:
    return EventTiers(Config(data={}, file=tmp_path / "auditpipe.yaml"), SINCE, UNTIL, servers)


def test_the_store_part_is_each_archived_servers_newer_links_and_every_other_server(tmp_path):
    match = tiers(tmp_path).store_part_filter({"db-1": 120, "db-2": 7})
    assert match == {"event_time": {"$gte": SINCE, "$lt": UNTIL},
                     "$or": [{"server": "db-1", "chain_seq": {"$gt": 120}}, {"server": "db-2", "chain_seq": {"$gt": 7}},
                             {"server": {"$nin": ["db-1", "db-2"]}}]}


def test_named_servers_narrow_the_store_part(tmp_path):
    t = tiers(tmp_path, ["db-1", "db-3"])
    assert t.store_part_filter({"db-1": 120}) == {
        "event_time": {"$gte": SINCE, "$lt": UNTIL},
        "$or": [{"server": "db-1", "chain_seq": {"$gt": 120}}, {"server": {"$in": ["db-3"]}}]}
    only = tiers(tmp_path, ["db-1"]).store_part_filter({"db-1": 5})
    assert only == {"event_time": {"$gte": SINCE, "$lt": UNTIL}, "server": "db-1", "chain_seq": {"$gt": 5}}
    nothing_archived = tiers(tmp_path).store_part_filter({})
    assert nothing_archived == {"event_time": {"$gte": SINCE, "$lt": UNTIL}, "server": {"$nin": []}}


def test_rows_of_either_tier_come_in_one_order():
    pipeline = [{"$group": {"_id": {"user": "$user"}, "n": {"$sum": 1}}}, {"$sort": {"n": -1}}]
    a = [{"_id": {"user": "b"}, "n": 2}, {"_id": {"user": "a"}, "n": 2}, {"_id": {"user": "c"}, "n": 5}]
    b = [a[2], a[0], a[1]]
    assert query.stable_order(a, pipeline) == query.stable_order(b, pipeline) == [a[2], a[1], a[0]]
    # rows without _id (projected out): the whole row breaks the tie
    t = datetime(2026, 1, 1)
    listed = [{"event_time": t, "user": "z"}, {"event_time": t, "user": "a"}, {"event_time": datetime(2025, 1, 1)}]
    assert [r.get("user") for r in query.stable_order(listed, [{"$sort": {"event_time": 1}}])] == [None, "a", "z"]
    assert query.stable_order(a, [{"$group": {"_id": None}}]) == a, "no $sort: the rows as they came"


def test_what_a_tier_read_is_said_in_one_line():
    t = datetime(2026, 1, 1, 12)
    assert TierRead("archive", 53999, t, t, "6 files").describe() == \
        "archive: 53,999 events, 2026-01-01 12:00:00 to 2026-01-01 12:00:00 UTC (6 files)"
    assert TierRead("store", 0, None, None, "not archived yet").describe() == \
        "store: no events in the range (not archived yet)"


def test_a_store_that_cannot_be_read_is_a_clear_error_naming_the_way_around(tmp_path):
    """The local FerretDB's file missing (the store never set up there): a UserError, not a traceback."""
    import pytest

    from auditpipe import config
    from auditpipe.errors import UserError

    (tmp_path / "auditpipe.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n")
    t = EventTiers(config.load(tmp_path / "auditpipe.yaml"), SINCE, UNTIL, None)
    assert t.cfg.store_uses_local_ferretdb
    with pytest.raises(UserError, match="events not archived yet cannot be read: .*--archive reads the archive alone"):
        t._read_store({"db-1": 5})
