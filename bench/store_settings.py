"""The local store's settings compared: FerretDB's bulk insert of the pipeline's own documents, with
its defaults and with the settings `auditpipe up` starts it with. Prints figures, asserts nothing.

Run: .venv/bin/python bench/store_settings.py [--documents N] [--rounds R] [--config FILE]

Reads N stored events (default 60,000) from the configured store: run `./auditpipe demo`, or
`./auditpipe simulate --rate 60000 --duration 1 --speedup 1000000` on a running stack, first. Then,
for each setting and 1 and 2 writers, starts a FerretDB of its own (the binary `auditpipe setup`
built) on a free port with its data in a temporary folder, makes a capped collection with the events
collection's indexes, inserts the documents in batches of 1,000 (the events' writer's batch size;
two writers as the events' writer with two batches in flight) and prints documents/s and FerretDB's
CPU per document. The settings alternate, R rounds (default 3): this machine's speed moves by up to a
half within an hour, so compare within a round. About 20 s a run at 60,000 documents.

Why these settings: docs/store.md "insert batches".
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))

from pipeline_bench import store_bulk_rate_of  # noqa: E402

from auditpipe import config  # noqa: E402
from auditpipe.stack.components.store import FERRETDB_GO_RUNTIME, FERRETDB_INSERT_STATEMENT_ROWS, LocalStore  # noqa: E402
from auditpipe.store.client import mongo_client  # noqa: E402
from auditpipe.store.collections import BASE_INDEXES  # noqa: E402

# (name, FerretDB flags, environment): its defaults, and what `auditpipe up` changes, one at a time
SETTINGS = [
    ("FerretDB's defaults (100 a transaction, GOGC=100)", [], {}),
    (f"{FERRETDB_INSERT_STATEMENT_ROWS} a transaction", [f"--test-batch-size={FERRETDB_INSERT_STATEMENT_ROWS}"], {}),
    (f"{FERRETDB_INSERT_STATEMENT_ROWS} a transaction, " + ", ".join(f"{k}={v}" for k, v in FERRETDB_GO_RUNTIME.items())
     + " (auditpipe up)", [f"--test-batch-size={FERRETDB_INSERT_STATEMENT_ROWS}"], FERRETDB_GO_RUNTIME),
]
BATCH = 1000  # store_bulk_rate_of's batches, the events' writer's batch size


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def insert_rate(binary: Path, flags: list, env: dict, documents: list, writers: int, indexes: list) -> tuple[float, float]:
    """(documents/s, FerretDB's CPU microseconds per document) for one fresh FerretDB."""
    from pymongo import MongoClient

    home = Path(tempfile.mkdtemp(prefix="auditpipe-store-settings-"))
    (home / "data").mkdir()
    port = free_port()
    proc = subprocess.Popen([str(binary), "--handler=sqlite", f"--sqlite-url=file:{home / 'data'}/",
                             f"--listen-addr=127.0.0.1:{port}", f"--state-dir={home}", "--telemetry=disable",
                             "--debug-addr=-", "--log-level=error", "--test-capped-cleanup-interval=0s", *flags],
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"FerretDB ({binary}) did not start on port {port}") from None
                time.sleep(0.1)
        db = MongoClient(f"mongodb://127.0.0.1:{port}/", socketTimeoutMS=600_000)["settings"]
        like = db.create_collection("events", capped=True, size=1 << 20)
        for key, name in indexes:
            like.create_index(key, name=name)
        cpu_before = cpu_seconds(proc.pid)
        rate = store_bulk_rate_of(db, documents, like, writers=writers)  # the bench's own measure
        cpu = cpu_seconds(proc.pid) - cpu_before
        return rate, 1e6 * cpu / len(documents)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)


def stored_documents(description: str, rounds_over: str):
    """The command line of a store bench (--documents, --rounds, --config) and what it reads: (the
    configuration, the FerretDB binary `auditpipe setup` built, the rounds, N stored events, the events
    collection's indexes), or an exit that says what to do first."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--documents", type=int, default=60_000, help="stored events to insert (default 60,000)")
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds over {rounds_over} (default 3)")
    parser.add_argument("--config", default=os.environ.get("AUDITPIPE_CONFIG", str(REPO / "auditpipe.yaml")))
    args = parser.parse_args()
    if args.documents < 1 or args.rounds < 1:
        parser.error("--documents and --rounds take a number of at least 1")
    cfg = config.load(Path(args.config))
    binary = LocalStore(cfg).binary
    if not binary.exists():
        raise SystemExit(f"no FerretDB at {binary}: run ./auditpipe setup first")
    try:
        stored = mongo_client(cfg, socket_timeout_ms=600_000)[cfg.store["database"]][cfg.store["events_collection"]]
        documents = list(stored.find().limit(args.documents).batch_size(2000))
    except Exception as e:  # noqa: BLE001 - any failure to read says the same: nothing to insert
        raise SystemExit(f"could not read events from the store at {cfg.store_uri} ({e}): start it with "
                         f"./auditpipe up, and store some events first (./auditpipe demo)") from e
    if len(documents) < args.documents:
        raise SystemExit(f"the store holds {len(documents)} events, fewer than --documents {args.documents}: "
                         f"store more first (./auditpipe simulate --rate {args.documents} --duration 1 "
                         f"--speedup 1000000 on a running stack), or ask for fewer")
    indexes = [(key, name) for role, key, name in BASE_INDEXES if role == "events_collection"]
    return cfg, binary, args.rounds, documents, indexes


def main() -> None:
    cfg, binary, rounds, documents, indexes = stored_documents(__doc__.split("\n\n")[0], "every setting")
    print(f"{len(documents):,} stored events from {cfg.store_uri}, batches of {BATCH}, the events collection's "
          f"indexes on FerretDB ({', '.join(n for _, n in indexes) or 'none but _id'}); FerretDB {binary.name}")
    width = max(len(name) for name, _, _ in SETTINGS)
    for round_number in range(1, rounds + 1):
        for name, flags, env in SETTINGS:
            for writers in (1, 2):
                rate, cpu_us = insert_rate(binary, flags, env, documents, writers, indexes)
                print(f"round {round_number}  {name:{width}s}  {writers} writer{'s' if writers > 1 else ' '} "
                      f"{rate:8,.0f} docs/s  {cpu_us:5.0f} us of FerretDB's CPU a document", flush=True)


if __name__ == "__main__":
    main()
