"""What checking each link's MAC adds to a verification pass (evidence/chain.py ``verify_links``, which
``auditpipe verify`` and the supervisor's passes run per server): the CPU per event of the judgement
with the chain's link key and without it, alternated, beside the target. Prints figures, asserts
nothing. The store's reading of the events (FerretDB decodes each whole) is not in it: that is in
bench/README.md "What the supervisor's continuous verification costs".

Run: .venv/bin/python bench/verify_cost.py [--events N] [--rounds R] [--keys K]

N events of one server (default 20,000), shaped as the job stores a Percona query event, linked and
MACed as the job links them; R rounds of each (default 5), the best of each kept; K link keys
(default 2: the current one and one retired, the ring a rotation leaves; a link is tried against
each until one gives its MAC, the current one first).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))

from auditpipe.cli.arguments import at_least_one  # noqa: E402 - the path above first

# the MACs may add at most this share to the judgement's CPU per event
TARGET_SHARE = 0.10



def events(n: int, key: bytes) -> list[dict]:
    """``n`` linked events of server db-01, as the store holds them (a pymongo decode: naive UTC times)."""
    from auditpipe.evidence import chain

    start, docs, previous = datetime(2026, 12, 5, 8, 0, 0), [], ""
    for i in range(1, n + 1):
        at = start + timedelta(milliseconds=3 * i)
        doc = {"_id": f"db-01:{i}_1764921600", "server": "db-01", "record_id": f"{i}_1764921600",
               "event_time": at, "class": "query", "command": "select", "user": f"app{i % 7}",
               "host": "10.0.4.17", "database": "orders", "connection_id": 4000 + i % 50, "status": 0,
               "statement": f"SELECT o.id, o.total FROM orders o WHERE o.customer_id = {i} AND o.state = 'open'",
               "objects": ["orders.orders"], "controls": ["SOX"], "line_sha256": f"{i:064x}",
               "ingest": {"timestamp": at + timedelta(milliseconds=40), "collector": "rsyslog"}}
        digest = chain.link(previous, doc)
        doc.update({chain.SEQ: i, chain.DIGEST: digest, chain.MAC: chain.link_mac(key, i, digest)})
        docs.append(doc)
        previous = digest
    return docs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=at_least_one, default=20_000)
    ap.add_argument("--rounds", type=at_least_one, default=5)
    ap.add_argument("--keys", type=at_least_one, default=2)
    a = ap.parse_args()
    from auditpipe.evidence import chain

    current = os.urandom(32)
    keys = [current] + [os.urandom(32) for _ in range(a.keys - 1)]
    docs = events(a.events, current)
    best = {"without": float("inf"), "with": float("inf")}
    for _ in range(a.rounds):
        for name, ring in (("without", None), ("with", keys)):
            started = time.process_time()
            report = chain.verify_links("db-01", docs, {}, link_keys=ring)
            best[name] = min(best[name], (time.process_time() - started) / a.events * 1e6)
            if report.findings:
                raise SystemExit(f"the bench's chain does not verify: {report.findings[0]}")
    added = best["with"] - best["without"]
    share = added / best["without"]
    print(f"verification of {a.events:,} linked events of one server, {a.keys} link key(s), best of {a.rounds}")
    print(f"  without MACs {best['without']:8.1f} us of CPU an event")
    print(f"  with MACs    {best['with']:8.1f} us of CPU an event")
    print(f"  the MACs add {added:8.1f} us an event = {share:.0%}   target <= {TARGET_SHARE:.0%} "
          f"({'met' if share <= TARGET_SHARE else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
