"""The store's layout version on the real store (docs/store.md "Layout versions"): `up` records it,
a store of a newer layout is refused before anything is touched, a store made before the record is
layout 1, and each newer layout's migration runs once, recorded."""

from __future__ import annotations

import pytest

from auditpipe import __version__
from auditpipe.errors import UserError
from auditpipe.store import collections, layout

pytestmark = pytest.mark.e2e


@pytest.fixture
def record(stack):
    """The layout collection, given back as it was after each test."""
    records = stack.db()[stack.cfg.store["layout_collection"]]
    kept = records.find_one({"_id": layout.DOCUMENT_ID})
    yield records
    records.replace_one({"_id": layout.DOCUMENT_ID}, kept, upsert=True)
    collections.ensure_collections(stack.cfg)


def test_up_recorded_this_release_s_layout(record):
    doc = record.find_one({"_id": layout.DOCUMENT_ID})
    assert (doc["version"], doc["release"]) == (layout.current(), __version__)


def test_a_store_of_a_newer_layout_is_refused_by_up_naming_both(stack, record):
    record.update_one({"_id": layout.DOCUMENT_ID}, {"$set": {"version": layout.current() + 1, "release": "9.0.0"}})
    queue = stack.cfg.store["review_queue_collection"]
    stack.db()[queue].drop()
    refused = stack.cli("up", check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    assert f"has layout {layout.current() + 1} (recorded by auditpipe 9.0.0)" in said, said
    assert f"knows layouts up to {layout.current()}" in said, said
    assert record.find_one({"_id": layout.DOCUMENT_ID})["version"] == layout.current() + 1
    assert queue not in stack.db().list_collection_names(), "the refused up made a collection"


def test_an_unreadable_layout_record_is_refused_by_name(stack, record):
    record.update_one({"_id": layout.DOCUMENT_ID}, {"$set": {"version": "two"}})
    with pytest.raises(UserError, match="layout record auditpipe cannot read in store_layout"):
        collections.ensure_collections(stack.cfg)


def test_a_store_made_before_the_record_is_layout_one_and_each_migration_runs_once(stack, record, monkeypatch):
    record.delete_one({"_id": layout.DOCUMENT_ID})
    collections.ensure_collections(stack.cfg)
    doc = record.find_one({"_id": layout.DOCUMENT_ID})
    assert (doc["version"], doc["migrations"]) == (1, [])  # its collections were there: made before the record
    ran = []

    def add_a_collection(cfg, db):
        ran.append(db.name)
        db.create_collection("layout_test_added")
        return "added layout_test_added"

    newer = layout.Layout(layout.current() + 1, "a test's layout", add_a_collection)
    monkeypatch.setattr(layout, "LAYOUTS", [*layout.LAYOUTS, newer])
    try:
        notes = collections.ensure_collections(stack.cfg)
        assert f"store layout {newer.version - 1} -> {newer.version}: added layout_test_added" in notes
        collections.ensure_collections(stack.cfg)  # nothing left to run
        assert ran == [stack.cfg.store["database"]]
        doc = record.find_one({"_id": layout.DOCUMENT_ID})
        assert doc["version"] == newer.version
        assert [(m["from"], m["to"], m["release"]) for m in doc["migrations"]] == [
            (newer.version - 1, newer.version, __version__)]
    finally:
        stack.db()["layout_test_added"].drop()
    with pytest.raises(UserError, match="knows layouts up to"):
        monkeypatch.setattr(layout, "LAYOUTS", layout.LAYOUTS[:-1])
        collections.ensure_collections(stack.cfg)
