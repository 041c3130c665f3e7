"""FerretDB 1.24's two backends compared on the pipeline's own documents: SQLite (the local store
as `auditpipe up` starts it) against PostgreSQL (Debian's packages). Prints figures, asserts nothing.

Run: .venv/bin/python bench/store_backends.py [--documents N] [--rounds R] [--config FILE]

Reads N stored events (default 60,000) from the configured store, as bench/store_settings.py does:
run `./auditpipe demo`, or `./auditpipe simulate --rate 60000 --duration 1 --speedup 1000000` on a
running stack, first. Starts a PostgreSQL server of its own (initdb into a temporary folder, its
defaults but for the port and socket; run as the `postgres` user when this runs as root), then in
each round, the backends alternating, a fresh FerretDB of each (the binary `auditpipe setup` built,
the flags and environment `auditpipe up` gives it), and prints:

- **insert**: documents/s and CPU per document, FerretDB's and the backend's (PostgreSQL's server
  processes; SQLite runs inside FerretDB), the documents inserted as the events' writer inserts them
  (bench/pipeline_bench.py `store_bulk_rate_of`: a capped collection with the events collection's
  indexes, two writers, batches of 1,000);
- **reads** over what was inserted, each the median of three: one event by `_id`, one user's events
  (an equality filter), the newest hour's events (a range on `event_time`), with the milliseconds and
  the CPU they took (FerretDB pushes equalities down to PostgreSQL as JSONB containment, and on SQLite
  only an `_id` equality, which SQLite still answers by reading the table: docs/store.md);
- **capped trimming**, FerretDB's own (the supervisor's trimming edits the SQLite file and has no
  PostgreSQL counterpart): the collection made with a cap of a third of what is inserted, then
  FerretDB restarted with its cleanup every 5 s, and what its first three passes removed and cost.

About a minute a round at 60,000 documents. Why it matters: docs/store.md "Backends".
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import bson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))
sys.path.insert(0, str(REPO / "bench"))

from pipeline_bench import store_bulk_rate_of  # noqa: E402
from store_settings import cpu_seconds, free_port, stored_documents  # noqa: E402

from auditpipe.stack.components.store import FERRETDB_GO_RUNTIME, FERRETDB_INSERT_STATEMENT_ROWS  # noqa: E402

CLEANUP_INTERVAL_S = 5
CLEANUP_PASSES = 3
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


class Postgres:
    """A PostgreSQL server of this run's own, in a temporary folder, on a free port."""

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            raise SystemExit("no PostgreSQL here: install Debian's postgresql package (apt-get install postgresql)")
        self.bin = Path(bins[-1])
        self.home = Path(tempfile.mkdtemp(prefix="auditpipe-store-backends-pg-"))
        self.port = free_port()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.home, "postgres", "postgres")
        self._run("initdb", "-D", str(self.home / "data"), "-U", "ferretdb", "--auth=trust", "-E", "UTF8")
        self._run("pg_ctl", "-D", str(self.home / "data"), "-l", str(self.home / "log"), "-w", "-o",
                  f"-p {self.port} -k {self.home} -c listen_addresses=127.0.0.1", "start")
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "ferretdb", "ferretdb")
        self.version = self._run("postgres", "--version").strip()

    def _run(self, tool: str, *args: str) -> str:
        done = subprocess.run([*self.as_user, str(self.bin / tool), *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{tool} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def url(self, database: str) -> str:
        return f"postgres://ferretdb@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str) -> None:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "ferretdb", name)

    def cpu_seconds(self) -> float:
        """The server's CPU so far: the postmaster's own and its reaped children's, and its live children's."""
        pm = int((self.home / "data" / "postmaster.pid").read_text().split()[0])
        f = _stat(pm)
        total = sum(int(x) for x in f[11:15])
        for task in Path("/proc").iterdir():
            if not task.name.isdigit():
                continue
            try:
                s = _stat(int(task.name))
            except OSError:
                continue
            if int(s[1]) == pm:
                total += int(s[11]) + int(s[12])
        return total / TICK

    def stop(self) -> None:
        subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.home / "data"), "-m", "fast",
                        "-w", "stop"], capture_output=True)
        shutil.rmtree(self.home, ignore_errors=True)


class Store:
    """One FerretDB on one backend, with the flags and environment `auditpipe up` starts it with."""

    def __init__(self, binary: Path, backend: str, home: Path, pg: Postgres | None, database: str | None,
                 cleanup_s: int = 0) -> None:
        self.backend, self.pg = backend, pg
        self.port = free_port()
        where = (["--handler=sqlite", f"--sqlite-url=file:{home / 'data'}/"] if backend == "sqlite"
                 else ["--handler=postgresql", f"--postgresql-url={pg.url(database)}"])
        (home / "data").mkdir(exist_ok=True)
        self.proc = subprocess.Popen([str(binary), *where, f"--listen-addr=127.0.0.1:{self.port}",
                                      f"--state-dir={home}", "--telemetry=disable", "--debug-addr=-",
                                      "--log-level=error", f"--test-capped-cleanup-interval={cleanup_s}s",
                                      f"--test-batch-size={FERRETDB_INSERT_STATEMENT_ROWS}"],
                                     env={**os.environ, **FERRETDB_GO_RUNTIME},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit(f"FerretDB ({binary}, {backend}) did not start on port {self.port}") from None
                time.sleep(0.1)
        from pymongo import MongoClient

        self.db = MongoClient(f"mongodb://127.0.0.1:{self.port}/", socketTimeoutMS=600_000)["backends"]

    def cpu(self) -> tuple[float, float]:
        """(FerretDB's CPU seconds, the backend server's) so far."""
        return cpu_seconds(self.proc.pid), self.pg.cpu_seconds() if self.pg else 0.0

    def stop(self) -> None:
        self.db.client.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def timed(store: Store, read) -> tuple[float, float]:
    """(milliseconds, CPU milliseconds of FerretDB and its backend) of ``read``, the median of three."""
    runs = []
    for _ in range(3):
        c0, t0 = sum(store.cpu()), time.monotonic()
        read()
        runs.append((1000 * (time.monotonic() - t0), 1000 * (sum(store.cpu()) - c0)))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def one_round(binary: Path, backend: str, pg: Postgres | None, database: str | None, documents: list,
              indexes: list) -> dict:
    home = Path(tempfile.mkdtemp(prefix=f"auditpipe-store-backends-{backend}-"))
    figures: dict = {}
    try:
        store = Store(binary, backend, home, pg, database)
        try:
            like = store.db.create_collection("events_like", capped=True, size=1 << 20)
            for key, name in indexes:
                like.create_index(key, name=name)
            bson_bytes = sum(len(bson.encode(d)) for d in documents)
            (f0, b0) = store.cpu()
            rate = store_bulk_rate_of(store.db, documents, like, writers=2, keep=True,
                                      capped_size=max(1 << 20, bson_bytes // 3))  # trimmed later, not during
            (f1, b1) = store.cpu()
            figures["insert"] = (rate, 1e6 * (f1 - f0) / len(documents), 1e6 * (b1 - b0) / len(documents))
            coll = store.db["bench_bulk"]
            middle = documents[len(documents) // 2]
            newest = max(d["event_time"] for d in documents)
            figures["by _id"] = timed(store, lambda: coll.find_one({"_id": middle["_id"]}))
            figures["one user"] = timed(store, lambda: list(coll.find({"user": middle.get("user")}, {"_id": 1})))
            figures["newest hour"] = timed(store, lambda: list(coll.find(
                {"event_time": {"$gte": newest - timedelta(hours=1)}}, {"_id": 1})))
            figures["held"] = coll.count_documents({})  # $collStats counts no rows on PostgreSQL before an ANALYZE
        finally:
            store.stop()
        store = Store(binary, backend, home, pg, database, cleanup_s=CLEANUP_INTERVAL_S)
        try:
            cpu_before = sum(store.cpu())
            time.sleep(CLEANUP_PASSES * CLEANUP_INTERVAL_S + 1)
            cpu = sum(store.cpu()) - cpu_before
            held = store.db["bench_bulk"].count_documents({})  # after the passes: a count reads every document
            figures["trimming"] = (figures["held"] - held, cpu / CLEANUP_PASSES, held)
        finally:
            store.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return figures


def main() -> None:
    _, binary, rounds, documents, indexes = stored_documents(__doc__.split("\n\n")[0], "both backends")
    pg = Postgres()
    try:
        print(f"{len(documents):,} stored events, FerretDB {binary.name} as `auditpipe up` starts it; "
              f"{pg.version}, its defaults", flush=True)
        for round_number in range(1, rounds + 1):
            for backend in ("sqlite", "postgresql"):
                database = None
                if backend == "postgresql":
                    database = f"round{round_number}"
                    pg.new_database(database)
                f = one_round(binary, backend, pg if backend == "postgresql" else None, database, documents, indexes)
                rate, ferret_us, server_us = f["insert"]
                reads = "  ".join(f"{name} {ms:,.0f} ms ({cpu:,.0f} ms CPU)"
                                  for name, (ms, cpu) in ((n, f[n]) for n in ("by _id", "one user", "newest hour")))
                removed, pass_cpu, held = f["trimming"]
                print(f"round {round_number}  {backend:10s}  insert {rate:7,.0f} docs/s, CPU a document "
                      f"{ferret_us + server_us:4.0f} us (FerretDB {ferret_us:.0f}, server {server_us:.0f})\n"
                      f"          reads of {f['held']:,}: {reads}\n"
                      f"          trimming to a third: {CLEANUP_PASSES} passes removed {removed:,} ({held:,} left), "
                      f"{pass_cpu:.2f} s of CPU a pass", flush=True)
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
