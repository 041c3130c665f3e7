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
