"""auditpipe long-run benchmark: ./auditpipe bench --long [--minutes 30] [--rate 3000] [--cluster] [--json FILE]

Prints figures beside their targets and asserts nothing but the counts (exit 1 when a count differs).
On a stack of its own (ports 4xxxx, state in a temporary folder, the repository's defaults: RocksDB
state with incremental checkpoints every 5 s, 15 minutes of allowed lateness, the archive on), two
servers write for ``--minutes`` at ``--rate`` events/s together, in real time, each with the
simulator (Percona JSON and the NEW XML format, rotating at 64 MiB), while the bench samples:

  - every completed checkpoint (Flink's REST API, every 5 s): its full state size, the size it
    wrote (incremental: what changed since the one before) and its end-to-end duration;
  - the job's JVM heap (Flink's metrics), every component's resident memory, the size of the store's
    SQLite file and how much of its write-ahead log is in use, every 10 s;
  - latency, every second: for each server, how long ago the newest event the store holds was
    written (its chain link n is the server's n-th record, which the simulator wrote at its start
    plus n / rate), read from the newest rows of the local FerretDB's SQLite file; the slices count
    it while the simulator writes (after its last record the figure only grows with the clock).

With ``--cluster`` the job runs on the local Flink cluster (``flink.mode: cluster``, a JobManager and
two TaskManagers, each a JVM of its own) instead of the one-process MiniCluster; heap and resident
memory are then the sums over its processes.

Then it prints each 5 minutes of the run beside the targets (checkpoint size and duration flat once
the lateness window is full, p99 latency < 2 s throughout, memory flat), what the seconds over 2 s
fell on (``why_late``: a rate above what the stack stores, the verification passes, or short spikes)
with the lever each points to, and checks the counts: every record written is counted once in the
one-minute stats and archived once (the capped store keeps only the newest hours, so the store's own
count is not one of them), waiting for a backlog for as long as those counts still grow.
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))
sys.path.insert(0, str(REPO / "bench"))

import results  # noqa: E402
from pipeline_bench import ComponentUsage, cli, git_commit, machine, stack_config  # noqa: E402

from auditpipe import config  # noqa: E402
from auditpipe.archive import reader  # noqa: E402
from auditpipe.store.ferretdb import ferretdb_sqlite_file, ferretdb_table  # noqa: E402

PORTS = {"kafka": 30192, "controller": 30193, "store": 30217, "flink": 30181}
CLUSTER = {"mode": "cluster", "taskmanagers": 2, "rpc_port": 30123}  # flink settings for --cluster
SERVERS = {"long-json": ("json", "percona-json"), "long-xml": ("xml-new", "percona-xml")}  # the simulator's style, the format
SLICE_S = 300
WARM_UP_S = 60  # the first minute is shown on its own: a fresh job's JIT compiler takes part of the cores
ROTATE_BYTES = 64 * 1024 * 1024
LATENCY_TARGET_S = 2.0
BEHIND_SHARE = 0.98  # storing less than this share of the rate written: a backlog grows, whatever else happens
DRAIN_STALL_S = 180  # the counts not growing for this long after the writers end: what is missing stays missing
NEWEST_ROWS = 5000  # the newest rows read for each latency sample (about a second of events at 5,000/s)


def write_log(path: str, style: str, rate: float, seconds: float, seed: int, out: str) -> None:
    """The simulator in a process of its own, in real time; its wall-clock start and its counts go to ``out``."""
    sys.path.insert(0, str(REPO / "cli"))
    from auditpipe.tools.simulate import simulate

    def say(what: dict) -> None:  # whole or not at all: the run reads ``out`` as soon as it exists
        tmp = Path(out + ".tmp")
        tmp.write_text(json.dumps(what))
        tmp.replace(out)

    started = time.time()
    say({"started": started})
    m = simulate(Path(path), rate=rate, duration=seconds, speedup=1.0, seed=seed, rotate_on_size=ROTATE_BYTES,
                 style=style)
    say({"started": started, "ended": time.time(), "records": m.records})


class Sampler:
    """Samples checkpoints, memory and latency until stopped (docstring of the module)."""

    def __init__(self, cfg, starts: dict[str, float], rates: dict[str, float]):
        self.cfg = cfg
        self.starts = starts
        self.rates = rates
        self.checkpoints: dict[int, dict] = {}
        self.memory: list[dict] = []
        self.latency: list[tuple[float, str, float]] = []  # (time, server, seconds)
        self.stop = threading.Event()
        self.usage = ComponentUsage(cfg.state_dir)
        path = ferretdb_sqlite_file(cfg)
        self.store_file = Path(path)
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.table = ferretdb_table(self.db, cfg.store["events_collection"])[0]
        self.index = f"{self.table}_bench_record_id"
        writer = sqlite3.connect(path, timeout=30)
        writer.execute(f'CREATE INDEX IF NOT EXISTS "{self.index}" ON "{self.table}" (_ferretdb_record_id)')
        writer.commit()
        writer.close()
        self.newest: dict[str, int] = {}
        self.job = None
        self.passes: list[dict] = []  # the supervisor's verification passes as they finish
        self.by_operator: list[dict] = []  # (time, the newest checkpoint's state per operator), every minute

    def rest(self, path: str):
        from auditpipe.stack.flink import flink_rest

        return flink_rest.call(self.cfg, path)

    def run(self) -> None:
        threads = [threading.Thread(target=self._every, args=(1.0, self.sample_latency), daemon=True),
                   threading.Thread(target=self._every, args=(5.0, self.sample_checkpoints), daemon=True),
                   threading.Thread(target=self._every, args=(10.0, self.sample_memory), daemon=True),
                   threading.Thread(target=self._every, args=(60.0, self.sample_operators), daemon=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _every(self, seconds: float, what) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                what()
            except Exception as e:  # a missed sample is reported, not fatal
                print(f"  ! sample {what.__name__}: {e}", flush=True)
            self.stop.wait(max(0.0, seconds - (time.monotonic() - began)))

    def sample_latency(self) -> None:
        rows = self.db.execute(
            f"SELECT json_extract(_ferretdb_sjson, '$.server'), max(json_extract(_ferretdb_sjson, '$.chain_seq')) "
            f'FROM (SELECT _ferretdb_sjson FROM "{self.table}" INDEXED BY "{self.index}" '
            f"ORDER BY _ferretdb_record_id DESC LIMIT {NEWEST_ROWS}) GROUP BY 1").fetchall()
        now = time.time()
        for server, seq in rows:
            if server in self.rates and seq is not None:
                self.newest[server] = max(self.newest.get(server, 0), int(seq))
        for server, rate in self.rates.items():
            if server in self.newest and server in self.starts:
                written_at = self.starts[server] + (self.newest[server] - 1) / rate
                self.latency.append((now, server, max(0.0, now - written_at)))

    def sample_operators(self) -> None:
        """The newest completed checkpoint's full state size per operator (Flink's vertex names, which
        chain several operators): which state grows."""
        if self.job is None or not self.checkpoints:
            return
        newest = max(self.checkpoints)
        names = {v["id"]: v["name"] for v in self.rest(f"/jobs/{self.job}")["vertices"]}
        tasks = self.rest(f"/jobs/{self.job}/checkpoints/details/{newest}").get("tasks", {})
        self.by_operator.append({"at": time.time(), "checkpoint": newest,
                                 "state_size": {names.get(v, v): t.get("state_size", 0) for v, t in tasks.items()}})

    def sample_checkpoints(self) -> None:
        if self.job is None:
            running = [j for j in self.rest("/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
            if not running:
                return
            self.job = running[0]["jid"]
        for c in self.rest(f"/jobs/{self.job}/checkpoints").get("history", []):
            if c.get("status") == "COMPLETED" and c["id"] not in self.checkpoints:
                self.checkpoints[c["id"]] = {"at": c["latest_ack_timestamp"] / 1000, "state_size": c["state_size"],
                                             "checkpointed_size": c.get("checkpointed_size", c["state_size"]),
                                             "duration_ms": c["end_to_end_duration"]}

    def sample_memory(self) -> None:
        sample = {"at": time.time(), "rss_mib": {k: ComponentUsage._rss_mib(p) for k, p in self.usage.pids.items()},
                  "cpu_s": {k: self.usage._cpu(p) for k, p in self.usage.pids.items()}}
        sample["store_file_mib"] = {"db": round(size_mib(self.store_file), 1), "wal": wal_in_use_mib(self.store_file)}
        sample["rss_mib"]["flink (all)"] = sum(v for k, v in sample["rss_mib"].items() if k.startswith("flink"))
        names = "Status.JVM.Memory.Heap.Used,Status.Flink.Memory.Managed.Used"
        for tm in self.rest("/taskmanagers").get("taskmanagers", []):  # the MiniCluster's one, or the cluster's
            got = {m["id"]: float(m["value"]) for m in self.rest(f"/taskmanagers/{tm['id']}/metrics?get={names}")}
            sample["heap_mib"] = sample.get("heap_mib", 0) + got.get("Status.JVM.Memory.Heap.Used", 0) / 2**20
            sample["managed_mib"] = sample.get("managed_mib", 0) + got.get("Status.Flink.Memory.Managed.Used", 0) / 2**20
        self.memory.append(sample)
        from auditpipe.stack import verification

        last = verification.last_pass(self.cfg)  # the supervisor's newest finished pass
        if last and last.get("started") not in {p.get("started") for p in self.passes}:
            self.passes.append({k: last.get(k) for k in ("started", "seconds", "kind", "full", "error", "findings", "open")})


def wal_in_use_mib(db_file: Path) -> float:
    """How much of the SQLite file's write-ahead log is in use: its newest valid frame (mxFrame of the
    wal-index header at the start of the -shm file, SQLite's wal.c, native byte order) times a frame's
    size. The -wal file itself keeps its largest size; the log in use starts over after a checkpoint
    that no reader's snapshot holds back, so a reader that keeps one makes this grow."""
    import struct

    try:
        with open(db_file.with_name(db_file.name + "-shm"), "rb") as f:
            header = f.read(24)
        page, frames = struct.unpack_from("=HI", header, 14)
    except (OSError, struct.error):
        return 0.0
    return round(frames * (page + 24) / 2**20, 1)


def size_mib(path: Path) -> float:
    try:
        return path.stat().st_size / 2**20
    except OSError:
        return 0.0


def supervisor_lines(path: Path) -> list[str]:
    """The supervisor's log (its passes, trimming and restarts, each line with its time), at most its last 2,000 lines."""
    try:
        return path.read_text(errors="replace").splitlines()[-2000:]
    except OSError:
        return []


def slices(t0: float, seconds: float) -> list[tuple[float, float]]:
    """The first minute (the job's JIT compiler warming up), then each SLICE_S of the rest; the last
    slice reaches past the end, to the drain."""
    edges = [t0, t0 + WARM_UP_S] + [t0 + WARM_UP_S + i * SLICE_S for i in range(1, int(seconds // SLICE_S) + 1)]
    edges = sorted({e for e in edges if e < t0 + seconds})
    return [(a, b) for a, b in zip(edges, edges[1:] + [t0 + seconds + 60])]


def percentile(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(p * (len(v) - 1)))] if v else float("nan")


def stats_counts(db, collection: str) -> dict[str, int]:
    return {d["_id"]: int(d["n"]) for d in db[collection].aggregate(
        [{"$match": {"server": {"$in": list(SERVERS)}}}, {"$group": {"_id": "$server", "n": {"$sum": "$count"}}}])}


def archive_counts(root: Path) -> dict[str, tuple[int, int]]:
    """Each server's archived events and its newest link."""
    out = {}
    for server in SERVERS:
        files = [f for p in reader.partitions(root, server=server) for f in p.files()]
        if files:
            n, top = reader.connect().execute(f"SELECT count(*), max(chain_seq) FROM {reader.parquet_source(files)}").fetchone()
            out[server] = (int(n), int(top or 0))
    return out


def why_late(sampler: Sampler, t0: float, run_seconds: float, rate: float, stored_at_end: int, drain_s: float,
             cpu_us: dict[str, float]) -> dict:
    """What the seconds with a latency over the target fell on, printed with the lever each points to:
    a rate above what the stack stored (a backlog that grows), the supervisor's verification passes,
    or neither (short spikes: the --json timeline has the checkpoints, the store's write-ahead log and
    the supervisor's log beside each second). After the first minute, while the simulator writes; a
    sample (one a second) counts once, by its worst server."""
    from datetime import datetime

    worst: dict[float, float] = {}  # both servers' latency is sampled at one instant
    for t, _, x in sampler.latency:
        if t0 + WARM_UP_S <= t <= t0 + run_seconds:
            worst[t] = max(worst.get(t, 0.0), x)
    passes = [(datetime.fromisoformat(p["started"]).timestamp(), float(p.get("seconds") or 0)) for p in sampler.passes
              if p.get("started")]
    in_pass = {t for t in worst if any(a <= t <= a + s for a, s in passes)}
    over = sorted(t for t, x in worst.items() if x > LATENCY_TARGET_S)
    stored_per_s = stored_at_end / run_seconds if run_seconds > 0 else 0.0
    out = {"seconds": len(worst), "over": len(over), "over_in_passes": len(set(over) & in_pass),
           "p99_in_passes_s": round(percentile([worst[t] for t in in_pass], 0.99), 2) if in_pass else None,
           "p99_outside_passes_s": round(percentile([x for t, x in worst.items() if t not in in_pass], 0.99), 2),
           "stored_per_s_while_writing": round(stored_per_s), "drain_s": round(drain_s)}
    print(f"\nlatency over {LATENCY_TARGET_S:g} s after the first minute: {len(over)} of {len(worst)} seconds")
    if not over:
        return out
    behind = stored_per_s < BEHIND_SHARE * rate
    if behind:
        top = max(cpu_us, key=cpu_us.get)
        print(f"  the rate is above what the stack carries here: it stored {stored_per_s:,.0f} events/s while "
              f"{rate:,.0f} were written, and worked the backlog off in {drain_s:.0f} s after the writers ended "
              f"({max(rate * run_seconds - stored_at_end, 0) / max(drain_s, 1):,.0f} events/s, the simulator stopped). "
              f"The lever: CPU per event, {sum(cpu_us.values()):,.0f} us over all components, the largest part "
              f"{top} {cpu_us[top]:,.0f} us (bench/README.md \"Goals\" and the cost table)")
    if in_pass:
        print(f"  {out['over_in_passes']} during the supervisor's verification passes ({len(in_pass)} s; p99 "
              f"{out['p99_in_passes_s']} s in them, {out['p99_outside_passes_s']} s outside). The lever: the pass's "
              f"share of the time (WATCH_SHARE in cli/auditpipe/stack/verification.py) or when it runs "
              f"(chain.full_verify_interval)")
    rest = [t for t in over if t not in in_pass]
    if rest and not behind:
        spikes, last = [], None
        for t in rest:
            if last is not None and t - last < 2:  # the next sample: one a second, a little later when slow
                spikes[-1] = (spikes[-1][0], t, max(spikes[-1][2], worst[t]))
            else:
                spikes.append((t, t, worst[t]))
            last = t
        longest = max(spikes, key=lambda sp: sp[1] - sp[0])
        print(f"  {len(rest)} outside them, in {len(spikes)} spikes (the longest {longest[1] - longest[0] + 1:.0f} s at "
              f"minute {(longest[0] - t0) / 60:.1f}, the worst {max(sp[2] for sp in spikes):.1f} s): --json's timeline "
              "has the checkpoints, the store's write-ahead log and the supervisor's log beside each second")
        out["spikes_outside_passes"] = len(spikes)
    return out


def drain(db, cfg, written: dict[str, int]) -> tuple[dict, dict, float]:
    """Waits for the last records through, the stats (early firing) and the archive (on checkpoints),
    for as long as their counts still grow: at a rate above what the stack carries the backlog can take
    longer than the run to work off. Gives up after DRAIN_STALL_S without growth. Returns the counts
    and the seconds it waited."""
    began = time.time()
    say_at, grew_at, last = began + 60, began, None
    while True:
        counted = stats_counts(db, cfg.store["stats_collection"])
        archived = archive_counts(cfg.archive_path)
        if all(counted.get(s) == n and archived.get(s, (0, 0))[0] == n for s, n in written.items()):
            break
        now = time.time()
        seen = (sum(counted.values()), sum(n for n, _ in archived.values()))
        if seen != last:
            last, grew_at = seen, now
        elif now - grew_at > DRAIN_STALL_S:
            break
        if now >= say_at:
            say_at += 60
            print(f"  draining the backlog, {now - began:.0f} s after the writers ended: {seen[0]:,} of "
                  f"{sum(written.values()):,} records counted in the stats, {seen[1]:,} archived", flush=True)
        time.sleep(5)
    return counted, archived, time.time() - began


def main() -> None:
    args = sys.argv[1:]
    minutes = float(args[args.index("--minutes") + 1]) if "--minutes" in args else 30.0
    rate = float(args[args.index("--rate") + 1]) if "--rate" in args else 3000.0
    json_out = Path(args[args.index("--json") + 1]) if "--json" in args else None
    on_cluster = "--cluster" in args
    seconds = minutes * 60
    root = Path(tempfile.mkdtemp(prefix="auditpipe-long-"))
    logs = {s: root / s / "audit.log" for s in SERVERS}
    cfg_file = stack_config(root, PORTS, [{"path": log, "server": s, "format": SERVERS[s][1]} for s, log in logs.items()],
                            flink={"checkpoint_interval": "5s", **(CLUSTER if on_cluster else {})},
                            store={"database": "bench", "events_capped_size_mb": 2048})
    cfg = config.load(cfg_file)
    print(f"machine: {machine()}; commit {git_commit()}")
    print(f"long run: {len(SERVERS)} servers ({', '.join(f'{s} {f}' for s, (_, f) in SERVERS.items())}) at {rate:,.0f} "
          f"events/s together for {minutes:g} minutes, written in real time by the simulator; the job "
          + ("on the local Flink cluster (a JobManager, 2 TaskManagers)" if on_cluster else "in one MiniCluster process"))
    cli(cfg_file, "up")
    failed = False
    procs: list = []
    try:
        from pymongo import MongoClient

        db = MongoClient(cfg.store_uri, socketTimeoutMS=600000)[cfg.store["database"]]
        per_server = rate / len(SERVERS)
        outs = {s: root / f"{s}.written.json" for s in SERVERS}
        procs = [multiprocessing.Process(target=write_log, args=(str(logs[s]), style, per_server, seconds, 11 + i,
                                                                 str(outs[s])))
                 for i, (s, (style, _)) in enumerate(SERVERS.items())]
        for p in procs:
            p.start()
        while not all(o.exists() for o in outs.values()):
            time.sleep(0.05)
        starts = {s: json.loads(o.read_text())["started"] for s, o in outs.items()}
        t0 = min(starts.values())
        while not ferretdb_table(sqlite3.connect(f"file:{ferretdb_sqlite_file(cfg)}?mode=ro", uri=True),
                                 cfg.store["events_collection"]):
            time.sleep(0.5)
        sampler = Sampler(cfg, starts, {s: per_server for s in SERVERS})
        cpu = ComponentUsage(cfg.state_dir).start()
        threading.Thread(target=sampler.run, daemon=True).start()
        next_note = t0 + 60
        while any(p.is_alive() for p in procs):
            time.sleep(1)
            if time.time() >= next_note:
                next_note += 60
                last = sampler.latency[-len(SERVERS):]
                ckpt = sampler.checkpoints[max(sampler.checkpoints)] if sampler.checkpoints else None
                print(f"  {(time.time() - t0) / 60:4.1f} min: latency now "
                      + ", ".join(f"{s} {lat:.2f}s" for _, s, lat in last)
                      + (f"; last checkpoint {ckpt['state_size'] / 2**20:.1f} MiB of state, wrote "
                         f"{ckpt['checkpointed_size'] / 2**20:.1f} MiB in {ckpt['duration_ms']} ms" if ckpt else ""),
                      flush=True)
        for p in procs:
            p.join()
        written = {s: json.loads(o.read_text()) for s, o in outs.items()}
        stored_at_end = sum(sampler.newest.values())  # a server's newest stored link is how many of its records the store has
        counted, archived, drain_s = drain(db, cfg, {s: w["records"] for s, w in written.items()})
        sampler.stop.set()
        used = cpu.stop()
        # what the supervisor's verification passes raised: a run's passes must find nothing
        integrity = [json.loads(json.dumps(a, default=str))
                     for a in db[cfg.store["alerts_collection"]].find({"rule": "integrity"})]
        run_seconds = max(w["ended"] for w in written.values()) - t0

        figures: dict = {"machine": machine(), "commit": git_commit(), "run": {"minutes": minutes, "rate": rate,
                         "cluster": on_cluster}, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
                         "servers": {s: f for s, (_, f) in SERVERS.items()}, "slices": []}
        print(f"\nthe first minute (the job's JIT compiler warming up), then each {SLICE_S // 60} minutes of the run "
              f"(targets: checkpoint size and duration flat once the 15 minutes of lateness are full, p99 latency < 2 s, "
              f"memory flat):")
        print(f"  {'minutes':>9} {'state MiB':>10} {'written MiB (mean/max)':>23} {'duration ms (p50/max)':>22} "
              f"{'latency s (p50/p99/max)':>24} {'heap MiB (max)':>15} {'Flink RSS MiB (max)':>20} "
              f"{'store WAL MiB (max)':>20}")
        for a, b in slices(t0, seconds):
            cks = [c for c in sampler.checkpoints.values() if a <= c["at"] < b]
            # latency while the simulator writes: after its last record, "how long ago the newest stored
            # record was written" only grows with the clock, with nothing left to store
            lat = [x for t, _, x in sampler.latency if a <= t < b and t <= t0 + run_seconds]
            mem = [m for m in sampler.memory if a <= m["at"] < b]
            row = {"from_min": round((a - t0) / 60, 1), "to_min": round((min(b, t0 + seconds) - t0) / 60, 1),
                   "checkpoints": len(cks),
                   "state_mib_max": round(max((c["state_size"] for c in cks), default=0) / 2**20, 1),
                   "written_mib_mean": round(statistics.mean([c["checkpointed_size"] for c in cks]) / 2**20, 2) if cks else None,
                   "written_mib_max": round(max((c["checkpointed_size"] for c in cks), default=0) / 2**20, 2),
                   "duration_ms_p50": percentile([c["duration_ms"] for c in cks], 0.5) if cks else None,
                   "duration_ms_max": max((c["duration_ms"] for c in cks), default=None),
                   "latency_p50_s": round(percentile(lat, 0.5), 2), "latency_p99_s": round(percentile(lat, 0.99), 2),
                   "p99_s": round(percentile(lat, 0.99), 2),
                   "latency_max_s": round(max(lat, default=float("nan")), 2),
                   "heap_mib_max": round(max((m.get("heap_mib", 0) for m in mem), default=0)),
                   "flink_rss_mib_max": round(max((m["rss_mib"].get("flink (all)", 0) for m in mem), default=0)),
                   "store_wal_mib_max": max((m["store_file_mib"]["wal"] for m in mem), default=0),
                   "rss_mib_max": {k: round(max((m["rss_mib"].get(k, 0) for m in mem), default=0))
                                   for k in [*sampler.usage.pids, "flink (all)"]}}
            figures["slices"].append(row)
            print(f"  {row['from_min']:4.0f}-{row['to_min']:<4.0f} {row['state_mib_max']:10.1f} "
                  f"{(row['written_mib_mean'] or 0):11.2f} / {row['written_mib_max']:<9.2f} "
                  f"{row['duration_ms_p50'] or 0:10.0f} / {row['duration_ms_max'] or 0:<9} "
                  f"{row['latency_p50_s']:8.2f} / {row['latency_p99_s']:.2f} / {row['latency_max_s']:<6.2f} "
                  f"{row['heap_mib_max']:15,} {row['flink_rss_mib_max']:20,} {row['store_wal_mib_max']:21,.0f}")
        ends = [min(b, t0 + seconds) for _, b in slices(t0, seconds)]
        at_ends = [max((o for o in sampler.by_operator if o["at"] <= e), key=lambda o: o["at"], default=None) for e in ends]
        if any(at_ends):
            names = sorted({n for o in at_ends if o for n in o["state_size"]},
                           key=lambda n: -max(o["state_size"].get(n, 0) for o in at_ends if o))
            print("  state per operator (KiB) at the end of each slice, largest first: "
                  + ", ".join(f"{(e - t0) / 60:.0f}" for e in ends) + " min")
            for n in names:
                if max(o["state_size"].get(n, 0) for o in at_ends if o) >= 1024:
                    sizes = [(o or {}).get("state_size", {}).get(n, 0) / 1024 for o in at_ends]
                    print("    " + " ".join(f"{k:8.0f}" for k in sizes) + f"  {n[:110]}")
        figures["state_by_operator"] = [{"minute": round((o["at"] - t0) / 60, 1), "checkpoint": o["checkpoint"],
                                         "state_size": o["state_size"]} for o in sampler.by_operator]
        cpu_us = {k: round(1e6 * c / max(sum(w["records"] for w in written.values()), 1), 1) for k, (c, _) in used.items()}
        figures["cpu_us_per_event"] = cpu_us
        figures["seconds_writing"] = round(run_seconds, 1)
        print("  CPU per event over the run: " + ", ".join(f"{k} {v} us" for k, v in cpu_us.items())
              + f"; the simulator wrote for {run_seconds:.0f} s of the {seconds:.0f} planned (it writes in real time; "
              "behind its schedule, its delay counts as latency)")
        figures["latency_over_target"] = why_late(sampler, t0, run_seconds, rate, stored_at_end, drain_s, cpu_us)
        print("\ncounts (every record written counted once in the stats and archived once):")
        for s, w in written.items():
            n_arch, top = archived.get(s, (0, 0))
            ok = counted.get(s) == w["records"] == n_arch == top
            failed |= not ok
            print(f"  {s}: written {w['records']:,}, counted in the stats {counted.get(s, 0):,}, archived {n_arch:,} "
                  f"(newest link {top:,}) {'ok' if ok else 'DIFFERENT'}")
        figures["counts"] = {s: {"written": w["records"], "stats": counted.get(s, 0), "archived": archived.get(s, (0, 0))[0]}
                             for s, w in written.items()}
        figures["checkpoints"] = sorted(({"id": i, **c} for i, c in sampler.checkpoints.items()), key=lambda c: c["id"])
        # the timeline, to tell what a slow second fell on: latency every second, each component's CPU
        # (seconds used since the previous sample) every 10 s, and what the supervisor did when
        figures["timeline"] = {
            "latency": [[round(t - t0, 1), s, round(x, 2)] for t, s, x in sampler.latency],
            "cpu_s": [{"at": round(b["at"] - t0, 1), **{k: round(b["cpu_s"][k] - a["cpu_s"].get(k, 0), 2) for k in b["cpu_s"]}}
                      for a, b in zip(sampler.memory, sampler.memory[1:])],
            # the store's SQLite file and the part of its write-ahead log in use: a reader that holds its
            # snapshot long keeps the log from starting over, and it grows (wal_in_use_mib)
            "store_file_mib": [{"at": round(m["at"] - t0, 1), **m["store_file_mib"]} for m in sampler.memory],
            "supervisor": supervisor_lines(cfg.state_dir / "logs" / "supervisor.log"),
            "verification_passes": sampler.passes,
        }
        # kept in bench/results/ too (a few a run): what a slice's latency may have fallen on
        figures["verification_passes"] = sampler.passes
        figures["integrity_alerts"] = integrity
        print(f"\nintegrity alerts raised by the supervisor's verification passes: {len(integrity)}")
        for a in integrity[:10]:
            print(f"  {a.get('_id')}: {str(a.get('detail') or a.get('message') or a)[:300]}")
        failed |= bool(integrity)
        figures["counts_exact"] = not failed
        if json_out:
            json_out.write_text(json.dumps(figures, indent=2) + "\n")
            print(f"figures written to {json_out}")
        # bench/results/ keeps the figures without the per-second timeline and each checkpoint (--json has them)
        kept = results.save("long", {k: v for k, v in figures.items()
                                     if k not in ("timeline", "checkpoints", "state_by_operator")})
        print(f"figures kept in {kept}")
    finally:
        for p in procs:  # a run cut short leaves no simulator writing on
            if p.is_alive():
                p.terminate()
                p.join()
        cli(cfg_file, "down")
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
