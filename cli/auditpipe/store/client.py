"""A client of the store (MongoDB, or the local FerretDB), and counting what it holds."""

from __future__ import annotations

import time

from auditpipe.config import Config


def is_ferretdb(db) -> bool:
    """Feature detection: buildInfo of FerretDB 1.x has "ferretdbVersion", of 2.x "ferretdb"."""
    info = db.command("buildInfo")
    return "ferretdbVersion" in info or "ferretdb" in info


def mongo_client(cfg: Config, timeout_ms: int = 5000, socket_timeout_ms: int | None = None):
    """A client of the store; ``socket_timeout_ms`` bounds each request too (status must not hang on a frozen store)."""
    from pymongo import MongoClient

    return MongoClient(cfg.store_uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
                       socketTimeoutMS=socket_timeout_ms)


def document_count(collection) -> int:
    """The number of documents, cheaply: the {$collStats: {count: {}}} stage (MongoDB and FerretDB).

    Not estimated_document_count: FerretDB 1.24 answers that with a full scan (6-11 s at 50-90k
    events here), and polling with it loads the very store being watched.
    """
    rows = list(collection.aggregate([{"$collStats": {"count": {}}}]))
    return int(rows[0]["count"]) if rows else 0


def wait_for_documents(collection, target: int, timeout: float, exact=None, on_sample=None,
                       every: float = 0.1, stale_after: float = 5.0) -> tuple[int, float]:
    """Polls ``document_count`` until it reaches ``target``; returns (count, monotonic time reached).

    The $collStats count was seen lagging on FerretDB (198,309 while a find returned all 200,000),
    so a count that stops moving short of the target is checked with ``exact()`` (default: a full
    count_documents) every ``stale_after`` seconds: a stale count can neither end a wait early nor
    hang it. Returns the last count if ``timeout`` passes first.
    """
    exact = exact or (lambda: collection.count_documents({}))
    start = time.monotonic()
    last, last_change = -1, start
    while True:
        c = document_count(collection)
        now = time.monotonic()
        if c != last:
            last, last_change = c, now
        elif now - last_change >= stale_after:
            c = max(c, exact())
            last_change = time.monotonic()
        if on_sample is not None:
            on_sample(now, c)
        if c >= target or now - start >= timeout:
            return c, now
        time.sleep(every)


def oldest_insert(events) -> dict | None:
    """The capped collection's oldest insert (natural order, no sort: cheap on a store of any size),
    with its event_time: where the hot tier begins, since a capped collection trims by insertion."""
    return next(iter(events.find({}, {"event_time": 1}).limit(1)), None)
