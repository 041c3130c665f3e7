"""The layout version of the store (docs/store.md "Layout versions"): which collections and document
shapes it holds, recorded in it (store.layout_collection) and carried forward by `up` and `init`.

LAYOUTS lists every layout this code knows with the migration that brings a store from the one
before it. A migration may add collections, indexes and derived documents (counts, the review queue,
profiles); it never rewrites a stored event, evidence document, chain head or review decision:
those are the evidence, and a rewrite would break the chain auditors verify. A store that records
no layout but holds auditpipe's collections was made before layouts were recorded: layout 1. A store
of a newer layout than this code knows is refused: the release that wrote it may have stored what
this one misreads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from auditpipe import __version__
from auditpipe.config import Config
from auditpipe.errors import UserError

DOCUMENT_ID = "store"


@dataclass(frozen=True)
class Layout:
    version: int
    what: str
    #: what brings a store of the layout before it to this one (cfg, db) -> a note; None: nothing moves
    migrate: Callable | None = None


LAYOUTS = [
    Layout(1, "the collections and documents of schemas/*.schema.json as release 0.2.0 writes them"),
]


def current() -> int:
    return LAYOUTS[-1].version


def carry_forward(cfg: Config, db, existing: set[str]) -> list[str]:
    """Records the store's layout, running the migrations from the recorded one; returns notes.
    ``existing``: the database's collections before this run. Each step is recorded as it completes
    (an interrupted run goes on from there)."""
    records = db[cfg.store["layout_collection"]]
    doc = records.find_one({"_id": DOCUMENT_ID})
    newest = current()
    if doc is None:
        # a new store has this code's layout; one with auditpipe's collections predates the record
        ours = {v for k, v in cfg.store.items() if k.endswith("_collection") and k != "layout_collection"}
        made_before = bool(ours & existing)
        records.insert_one({"_id": DOCUMENT_ID, "version": 1 if made_before else newest, "release": __version__,
                            "recorded_at": datetime.now(timezone.utc), "migrations": []})
        doc = records.find_one({"_id": DOCUMENT_ID})
    try:
        found = int(doc["version"])
    except (KeyError, TypeError, ValueError):
        raise UserError(f"the store {cfg.store['database']} has a layout record auditpipe cannot read in "
                        f"{cfg.store['layout_collection']}: {str(doc)[:300]} (docs/store.md \"Layout versions\")") from None
    if found > newest:
        raise UserError(f"the store {cfg.store['database']} has layout {found} (recorded by auditpipe "
                        f"{doc.get('release')}); auditpipe {__version__} knows layouts up to "
                        f"{newest}: run that release or a newer one (docs/store.md \"Layout versions\")")
    notes = []
    for layout in LAYOUTS:
        if layout.version <= found:
            continue
        said = layout.migrate(cfg, db) if layout.migrate else None
        step = {"from": found, "to": layout.version, "release": __version__, "at": datetime.now(timezone.utc)}
        moved = records.update_one({"_id": DOCUMENT_ID, "version": found},
                                   {"$set": {"version": layout.version, "release": __version__},
                                    "$push": {"migrations": step}})
        if moved.matched_count != 1:
            raise UserError(f"the store's layout changed while `{cfg.store['layout_collection']}` was being moved from "
                            f"{found} to {layout.version}: another auditpipe migrates it; run this again")
        notes.append(f"store layout {found} -> {layout.version}: {said or layout.what}")
        found = layout.version
    return notes
