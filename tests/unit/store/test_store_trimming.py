"""The local store's capped trimming estimates a collection's size as FerretDB's collStats counts it:
the SQLite pages of its table. The page arithmetic is checked against SQLite itself (its dbstat
table, over a table laid out as FerretDB lays out a capped collection), not against a copy of it."""

from __future__ import annotations

import sqlite3

import pytest

from auditpipe.store.trimming import TRIM_INTERNAL_PAGES, sqlite_row_page_bytes


def _pages_per_row(text_bytes: int) -> float:
    rows = max(300, 2_000_000 // text_bytes)  # enough leaves that the one root page weighs what it does in a big table
    con = sqlite3.connect(":memory:")
    try:
        con.execute("SELECT * FROM dbstat LIMIT 1")
    except sqlite3.OperationalError:
        pytest.skip("this Python's SQLite is built without the dbstat table")
    con.execute('CREATE TABLE t (_ferretdb_record_id INTEGER PRIMARY KEY, _ferretdb_sjson TEXT NOT NULL) STRICT')
    first_id = 7_300_000_000_000_000_000  # FerretDB's record ids are large (a timestamp and a counter)
    con.executemany("INSERT INTO t VALUES (?, ?)", [(first_id + i, "x" * text_bytes) for i in range(rows)])
    con.commit()
    return con.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 't'").fetchone()[0] / rows


@pytest.mark.parametrize("text_bytes", [200, 1_000, 2_000, 2_100, 3_177, 4_050, 4_113, 6_000, 9_000])
def test_the_pages_a_row_takes_are_what_sqlite_uses(text_bytes):
    measured = _pages_per_row(text_bytes)
    estimated = sqlite_row_page_bytes(text_bytes, 4096) * TRIM_INTERNAL_PAGES
    assert estimated == pytest.approx(measured, rel=0.04), f"{text_bytes}-byte rows: {measured:.0f} bytes of pages each"


def test_rows_of_a_page_each_take_a_page_whatever_their_length():
    assert sqlite_row_page_bytes(2_100, 4096) == sqlite_row_page_bytes(3_900, 4096) == 4096


def _capped(layout: list[tuple[str, int]]) -> sqlite3.Connection:
    """A capped collection's table as FerretDB lays it out, rows in insertion order: (server, link)."""
    import json

    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE t (_ferretdb_record_id INTEGER PRIMARY KEY, _ferretdb_sjson TEXT NOT NULL) STRICT')
    con.executemany("INSERT INTO t VALUES (?, ?)", [(1_000 + i, json.dumps({"server": server, "chain_seq": seq}))
                                                     for i, (server, seq) in enumerate(layout)])
    return con


def _removed(con: sqlite3.Connection, rows: int) -> list[tuple[str, int]]:
    """What trimming the oldest ``rows`` removes (chain_prefix_bound), as (server, link)."""
    import json

    from auditpipe.store.trimming import chain_prefix_bound

    cut = con.execute("SELECT _ferretdb_record_id FROM t ORDER BY _ferretdb_record_id LIMIT 1 OFFSET ?",
                      (rows - 1,)).fetchone()[0]
    below = chain_prefix_bound(con, "t", cut)
    return [(d["server"], d["chain_seq"]) for (text,) in con.execute(
        "SELECT _ferretdb_sjson FROM t WHERE _ferretdb_record_id < ? ORDER BY _ferretdb_record_id", (below,))
        for d in [json.loads(text)]]


def _is_prefix_of_each_chain(removed, layout) -> bool:
    kept = [x for x in layout if x not in set(removed)]
    return all(seq < min((k for s, k in kept if s == server), default=seq + 1) for server, seq in removed)


def test_trimming_removes_what_is_asked_when_links_arrived_in_order():
    layout = [("db-1", n) for n in range(1, 4001)]
    assert _removed(_capped(layout), 1_083) == layout[:1_083]


def test_trimming_keeps_a_batch_that_arrived_before_older_links():
    """Two batches in flight: links 1,001-2,000 reached the store before 1-1,000. A cut inside the
    later-arrived older batch goes down to where every removed link is older than every kept one."""
    layout = [("db-1", n) for n in [*range(1_001, 2_001), *range(1, 1_001), *range(2_001, 3_001)]]
    removed = _removed(_capped(layout), 1_500)
    assert removed == [] or _is_prefix_of_each_chain(removed, layout)
    removed = _removed(_capped(layout), 2_100)
    assert removed == layout[:2_100] and _is_prefix_of_each_chain(removed, layout)


def test_trimming_goes_past_the_cut_when_nothing_below_it_can_go():
    """The layout a capped collection of a 1 MiB cap was found stuck in, about 5 times over its cap:
    157 links, then a whole batch of 1,000 older ones, then the rest. No cut at or below 1,083 rows
    removes a prefix of the chain; the first cut above that does is after the older batch."""
    layout = [("db-1", n) for n in [*range(3_693, 3_850), *range(2_693, 3_693), *range(3_850, 4_001)]]
    for asked in (1, 100, 157, 500, 1_083):
        removed = _removed(_capped(layout), asked)
        assert removed == layout[:1_157], asked
        assert _is_prefix_of_each_chain(removed, layout)


def test_trimming_keeps_each_servers_chain_a_prefix_with_servers_interleaved():
    a = [("db-a", n) for n in range(1, 301)]
    b = [("db-b", n) for n in range(1, 301)]
    layout = [*b[100:200], *a[:150], *b[:100], *a[150:], *b[200:]]  # db-b's second batch before its first
    for asked in range(1, len(layout), 37):
        removed = _removed(_capped(layout), asked)
        assert _is_prefix_of_each_chain(removed, layout), asked
        assert removed, f"something goes at {asked}"


def test_trimming_never_goes_up_to_the_newest_rows():
    """A chain that started over (a job started without its state): every new link is older than the old
    ones, so no cut removes a prefix; the cut is not raised to the end of the collection, which would
    remove the newest rows: the old ones are held back instead (at most TRIM_CHAIN_WINDOW past the cap)."""
    layout = [*[("db-1", n) for n in range(351, 601)], *[("db-1", n) for n in range(1, 301)]]
    assert _removed(_capped(layout), 300) == []
