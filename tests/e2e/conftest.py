"""A real local stack for the end-to-end tests: its own ports, state and sources; the shared tools_dir.

Started once per test session through the CLI (`auditpipe up`), as a user would, and stopped at
the end (`auditpipe down`). Each test writes its own audit log (its own server name), so tests do
not see each other's events.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditpipe import config, paths

PORTS = {"kafka": 19092, "controller": 19093, "store": 27117, "flink": 18081}
SERVERS = ["e2e-rotation", "e2e-crash", "e2e-queries", "e2e-long-lines", "e2e-types"]


def cli(cfg_file: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), *args],
                       capture_output=True, text=True, cwd=paths.REPO, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"auditpipe {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    root = tmp_path_factory.mktemp("stack")
    logs = root / "logs"
    sources = "\n".join(f"  - {{path: {logs / s / 'audit.log'}, server: {s}, format: percona-json}}" for s in SERVERS)
    cfg_file = root / "auditpipe.yaml"
    cfg_file.write_text(f"""\
state_dir: {root / 'state'}
tools_dir: {paths.REPO / '.auditpipe' / 'tools'}
kafka: {{port: {PORTS['kafka']}, controller_port: {PORTS['controller']}}}
store: {{port: {PORTS['store']}, events_capped_size_mb: 256, database: auditpipe_e2e}}
flink: {{rest_port: {PORTS['flink']}, checkpoint_interval: 2s, job_options: {{stats.early-fire-interval: 1s}}}}
sources:
{sources}
""")
    cfg = config.load(cfg_file)
    cli(cfg_file, "up")
    yield Stack(cfg_file, cfg, logs)
    cli(cfg_file, "down", check=False)
    for name in ("flink", "collector", "kafka", "store"):
        log = cfg.state_dir / "logs" / f"{name}.log"
        if log.exists():
            sys.stderr.write(f"\n--- last lines of {log} ---\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))


class Stack:
    def __init__(self, cfg_file: Path, cfg, logs: Path):
        self.cfg_file = cfg_file
        self.cfg = cfg
        self.logs = logs

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return cli(self.cfg_file, *args, check=check)

    def db(self):
        from pymongo import MongoClient

        return MongoClient(self.cfg.store_uri, socketTimeoutMS=120000)[self.cfg.store["database"]]

    def log_path(self, server: str) -> Path:
        return self.logs / server / "audit.log"

    def events(self, server: str):
        return self.db()[self.cfg.store["events_collection"]].find({"server": server}, {"record_id": 1})

    def wait_for(self, what: str, check, timeout: float = 180, every: float = 2):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            ok, last = check()
            if ok:
                return last
            time.sleep(every)
        raise AssertionError(f"timed out waiting for {what}; last value: {last}")

    def estimate(self) -> int:
        """All events, cheaply ($collStats count; filtered counts make FerretDB read everything).
        Per test exact while one test writes at a time, which is how these tests run."""
        from auditpipe.components.store import document_count

        return document_count(self.db()[self.cfg.store["events_collection"]])

    def count(self, server: str) -> int:
        """Events of one server (a top-level equality: FerretDB pushes it down to SQLite)."""
        return self.db()[self.cfg.store["events_collection"]].count_documents({"server": server})

    def stored_ids(self, server: str) -> list[str]:
        return [d["record_id"] for d in self.events(server)]

    def stats_total(self, server: str) -> int:
        rows = self.db()[self.cfg.store["stats_collection"]].aggregate(
            [{"$match": {"server": server}}, {"$group": {"_id": None, "n": {"$sum": "$count"}}}])
        rows = list(rows)
        return rows[0]["n"] if rows else 0

    def dead_letters(self, server: str) -> list[dict]:
        return list(self.db()[self.cfg.store["dead_letter_collection"]].find({"server": server}))

    def job_metric_sum(self, name: str) -> int | None:
        """The sum over all subtasks of a job metric whose name ends with ``name``; None if no vertex has it."""
        import urllib.request

        base = f"http://127.0.0.1:{self.cfg.flink['rest_port']}"

        def get(path: str):
            with urllib.request.urlopen(base + path, timeout=5) as r:
                return json.loads(r.read())

        try:
            jobs = [j["jid"] for j in get("/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
            if not jobs:
                return None
            total, found = 0, False
            for vertex in get(f"/jobs/{jobs[0]}")["vertices"]:
                base_path = f"/jobs/{jobs[0]}/vertices/{vertex['id']}/subtasks/metrics"
                ids = [m["id"] for m in get(base_path) if m["id"].endswith("." + name)]
                for metric in ids:
                    for row in get(f"{base_path}?get={metric}&agg=sum"):
                        total += int(float(row["sum"]))
                        found = True
            return total if found else None
        except OSError:
            return None

    def status(self) -> list[dict]:
        return json.loads(self.cli("status", "--json", check=False).stdout)
