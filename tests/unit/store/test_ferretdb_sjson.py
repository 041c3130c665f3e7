"""FerretDB 1.24's stored JSON decoded as pymongo returns the document (the schema of a row the
local store wrote; the whole path against FerretDB's own answer: tests/e2e/evidence/test_queries_over_tiers.py)."""

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


def test_every_type_ferretdb_writes_reads_back_as_pymongo_gives_it():
    import pytest
    from bson.binary import Binary
    from bson.int64 import Int64
    from bson.objectid import ObjectId
    from bson.regex import Regex
    from bson.timestamp import Timestamp

    from auditpipe.store.ferretdb import _sjson_int

    row = json.loads("""{"$s": {"p": {"o": {"t": "objectId"}, "b": {"t": "binData", "s": 0},
      "u": {"t": "binData", "s": 4}, "ts": {"t": "timestamp"}, "re": {"t": "regex", "o": "im"},
      "z": {"t": "double"}, "d": {"t": "double"}, "l": {"t": "long"}}, "$k": ["o", "b", "u", "ts", "re", "z", "d", "l"]},
      "o": "65a1b2c3d4e5f60718293a4b", "b": "AP8=", "u": "MDEyMzQ1Njc4OWFiY2RlZg==", "ts": 7709466296320000003,
      "re": "^a.b$", "z": -0, "d": 1, "l": 5}""", parse_int=_sjson_int)
    doc = from_sjson_document(row)
    assert doc == {"o": ObjectId("65a1b2c3d4e5f60718293a4b"), "b": b"\x00\xff", "u": Binary(b"0123456789abcdef", 4),
                   "ts": Timestamp(1795000000, 3), "re": Regex("^a.b$", "im"), "z": -0.0, "d": 1.0, "l": 5}
    assert str(doc["z"]) == "-0.0" and isinstance(doc["d"], float) and isinstance(doc["l"], Int64)
    with pytest.raises(ValueError, match="'decimal'"):
        from_sjson_document(json.loads('{"$s": {"p": {"x": {"t": "decimal"}}, "$k": ["x"]}, "x": "1.5"}'))
