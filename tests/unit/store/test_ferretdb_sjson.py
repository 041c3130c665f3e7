"""FerretDB 1.24's stored JSON decoded as pymongo returns the document (the schema of a row the
local store wrote; the whole path against FerretDB's own answer: tests/e2e/test_queries_over_tiers.py)."""

from __future__ import annotations

import json
from datetime import datetime

from auditpipe.store.ferretdb import from_sjson_document

ROW = json.loads("""{"$s": {"p": {"_id": {"t": "string"}, "event_time": {"t": "date"}, "connection_id": {"t": "long"},
  "status": {"t": "int"}, "tables": {"t": "array", "i": [{"t": "string"}]}, "data_classes": {"t": "array", "i": []},
  "after_hours": {"t": "bool"}, "ingest": {"t": "object", "$s": {"p": {"topic": {"t": "string"},
  "partition": {"t": "int"}, "offset": {"t": "long"}, "timestamp": {"t": "date"}},
  "$k": ["topic", "partition", "offset", "timestamp"]}}, "chain_seq": {"t": "long"}},
  "$k": ["_id", "event_time", "connection_id", "status", "tables", "data_classes", "after_hours", "ingest", "chain_seq"]},
  "_id": "demo-db/54000_2026-11-25T19:37:32", "event_time": 1795635632000, "connection_id": 2561, "status": 0,
  "tables": ["sbtest.sbtest4"], "data_classes": [], "after_hours": false,
  "ingest": {"topic": "audit.raw", "partition": 0, "offset": 108007, "timestamp": 1795635662000}, "chain_seq": 107998}""")


def test_a_stored_row_reads_back_as_the_document():
    assert from_sjson_document(ROW) == {
        "_id": "demo-db/54000_2026-11-25T19:37:32", "event_time": datetime(2026, 11, 25, 19, 40, 32),
        "connection_id": 2561, "status": 0, "tables": ["sbtest.sbtest4"], "data_classes": [], "after_hours": False,
        "ingest": {"topic": "audit.raw", "partition": 0, "offset": 108007, "timestamp": datetime(2026, 11, 25, 19, 41, 2)},
        "chain_seq": 107998}
    assert from_sjson_document(ROW, fields={"_id", "chain_seq"}) == {"_id": "demo-db/54000_2026-11-25T19:37:32",
                                                                     "chain_seq": 107998}
