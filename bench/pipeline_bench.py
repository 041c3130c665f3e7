"""auditpipe benchmark: prints figures, asserts nothing. Run: ./auditpipe bench [--quick] [--end-to-end-only]

On a stack of its own (ports 2xxxx, state in a temporary folder) configured as the repository's
auditpipe.yaml, the configuration users run (the event stream's shipped formats, the archive,
sessions, learned baselines, continuous verification at its interval), it measures in one run:
  1. store bulk insert: the store's own rate for event-shaped sample documents (2 writers, batches
     of 1000) and the store's CPU time per document doing it; after step 3 the same for the
     documents the pipeline stored there, which is the ceiling end to end is compared with
  2. the Flink job alone: pre-filled topic -> the whole job as configured (parse, enrich, chain,
     stats, alerts, sessions, baselines, the stream's messages, the archive) -> counting sinks; then
     without each of its features (the cost table: each feature's CPU per event)
  3. end to end throughput: a log file written as fast as possible -> documents in the store, with
     each component's CPU time per event and resident memory in that run (the stack shares the
     machine's cores: the sum of the CPU per event bounds the rate the machine can reach)
  4. end to end latency at 70% of step 3's rate (records made first, then written at the rate:
     write_paced): line written -> document visible (p50, p99), alert latency (another server's
     brute forces, its lines on the busy server's Kafka partition: the worst case), and each
     component's resident memory at that rate
  5. the syslog receiver: messages/s over TCP into Kafka and the collector's CPU per message
and says which stage is the bottleneck; then the goals beside the run's figures (bench/results.py
GOALS: ratios within the run). Every run's figures go to bench/results/ (`--json FILE` writes them
there too); bench/README.md's tables are made from those files (`./auditpipe bench --tables`).

Stored documents are counted with $collStats (wait_count says why, and what that costs the store).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import bson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))
sys.path.insert(0, str(REPO / "bench"))

import results  # noqa: E402

from auditpipe import config, paths  # noqa: E402
from auditpipe.stack.collector.rsyslog import source_key  # noqa: E402
from auditpipe.stack.components.store import FERRETDB_VERSION  # noqa: E402
from auditpipe.stack.flink.job import FLINK_VERSION, FlinkJob  # noqa: E402
from auditpipe.stack.kafka.broker import KAFKA_VERSION  # noqa: E402
from auditpipe.stack.kafka.topics import end_offsets, topic_name  # noqa: E402
from auditpipe.store.client import document_count  # noqa: E402
from auditpipe.store.ferretdb import ferretdb_sqlite_file, ferretdb_table  # noqa: E402
from auditpipe.tools.simulate import simulate  # noqa: E402

PORTS = {"kafka": 29092, "controller": 29093, "store": 27217, "flink": 28081}


class ComponentUsage:
    """CPU time and resident memory of the stack's processes (their pid files in state_dir/run),
    read from /proc: CPU from a start mark, memory as the peak of samples taken every 0.5 s."""

    def __init__(self, state_dir: Path):
        self.pids = {f.stem: int(f.read_text()) for f in sorted((state_dir / "run").glob("*.pid"))}
        self.tick = os.sysconf("SC_CLK_TCK")
        self.cpu_at_mark: dict = {}
        self.peak_rss: dict = {}
        self._stop = threading.Event()

    def _cpu(self, pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # utime + stime

    @staticmethod
    def _rss_mib(pid: int) -> float:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def start(self) -> ComponentUsage:
        self.cpu_at_mark = {k: self._cpu(p) for k, p in self.pids.items()}
        self.peak_rss = {k: 0.0 for k in self.pids}
        self._stop.clear()

        def sample() -> None:
            while not self._stop.is_set():
                for k, p in self.pids.items():
                    try:
                        self.peak_rss[k] = max(self.peak_rss[k], self._rss_mib(p))
                    except OSError:
                        pass
                self._stop.wait(0.5)

        threading.Thread(target=sample, daemon=True).start()
        return self

    def stop(self) -> dict:
        """{component: (CPU seconds since start, peak resident MiB)}."""
        self._stop.set()
        return {k: (self._cpu(p) - self.cpu_at_mark[k], self.peak_rss[k]) for k, p in self.pids.items()}


def cli(cfg_file: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "auditpipe", "-q", "--config", str(cfg_file), *args], check=True,
                   cwd=paths.REPO)


def git_commit() -> str:
    r = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.system()} {platform.release()}"


def store_bulk_rate(db, n: int) -> float:
    db.drop_collection("bench_bulk")
    db.create_collection("bench_bulk", capped=True, size=512 * 1024 * 1024)
    sample = {"server": "bench", "format": "percona-json", "source_file": "/x/audit.log", "collector": "rsyslog",
              "event_name": "Query", "command_class": "select", "connection_id": 12, "status": 0,
              "sqltext": "SELECT c FROM sbtest1 WHERE id=4242", "user": "app", "user_raw": "app[app] @ app-1 [10.0.1.11]",
              "host": "app-1", "ip": "10.0.1.11", "db": "sbtest", "outcome": "success",
              "ingest": {"topic": "audit.raw", "partition": 0, "offset": 1}}
    # the documents the job writes hold the original record too (docs/formats.md): the same weight here
    sample["original"] = json.dumps({"audit_record": {k: sample[k] for k in (
        "event_name", "command_class", "connection_id", "status", "sqltext", "user_raw", "host", "ip", "db")}})
    sample["line_sha256"] = "0" * 64

    def writer(w: int) -> None:
        coll = db["bench_bulk"]
        for b in range(n // 2 // 1000):
            coll.insert_many([{**sample, "_id": f"{w}-{b}-{i}", "record_id": f"{b}_{i}"} for i in range(1000)],
                             ordered=False)

    start = time.monotonic()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    rate = n / (time.monotonic() - start)
    db.drop_collection("bench_bulk")
    return rate


def store_bulk_rate_of(db, documents: list, like, writers: int = 2, keep: bool = False,
                       capped_size: int = 512 * 1024 * 1024) -> float:
    """The store's bulk rate for these documents (those the pipeline stored), as store_bulk_rate
    inserts its own: into a capped collection of its own (``bench_bulk``, dropped after unless
    ``keep``) with the indexes of ``like`` (the events collection: every index is more work per
    insert), ``writers`` writers, batches of 1000."""
    db.drop_collection("bench_bulk")
    db.create_collection("bench_bulk", capped=True, size=capped_size)
    for index in like.list_indexes():
        if index["name"] != "_id_":
            db["bench_bulk"].create_index(list(index["key"].items()), name=index["name"])
    share = -(-len(documents) // writers)
    halves = [documents[i:i + share] for i in range(0, len(documents), share)]

    def writer(docs: list) -> None:
        coll = db["bench_bulk"]
        for i in range(0, len(docs), 1000):
            coll.insert_many(docs[i:i + 1000], ordered=False)

    start = time.monotonic()
    threads = [threading.Thread(target=writer, args=(h,)) for h in halves]
    [t.start() for t in threads]
    [t.join() for t in threads]
    rate = len(documents) / (time.monotonic() - start)
    if not keep:
        db.drop_collection("bench_bulk")
    return rate


# One statement in HOSTILE_EVERY replaced by a hostile one (hostile_statement) for the job-alone run under
# hostile statements: each a shape of its own, so no cache helps.
HOSTILE_EVERY = 100


def hostile_statement(i: int) -> str:
    """Fourteen nested CASE expressions over columns, on a table of its own: 0.1-0.9 s of JSqlParser's simple
    mode unbounded (docs/compliance.md)."""
    return "SELECT " + "CASE " * 14 + "a" + " WHEN b THEN c END" * 14 + f" FROM bench_hostile.t{i}"


def make_hostile(log: Path, every: int) -> int:
    """Replaces the statement of every ``every``-th record that has one; returns how many were replaced."""
    lines, replaced = [], 0
    for i, line in enumerate(log.read_bytes().splitlines()):
        record = json.loads(line)
        body = record.get("audit_record", {})
        if i % every == 0 and body.get("sqltext"):
            body["sqltext"] = hostile_statement(i)
            line = json.dumps(record, separators=(",", ":")).encode()
            replaced += 1
        lines.append(line)
    log.write_bytes(b"\n".join(lines) + b"\n")
    return replaced


def fill_topic(bootstrap: str, topic: str, log: Path, n: int, hostile_every: int = 0) -> int:
    """Fills ``topic`` with ``n`` simulated records (``hostile_every``: that share made hostile); returns how
    many are hostile."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 4, 1)]).values():
        f.result()
    simulate(log, rate=10_000, duration=n / 10_000, speedup=1e6, seed=5, rotate_on_size=0)
    hostile = make_hostile(log, hostile_every) if hostile_every else 0
    key = source_key("bench-job", "percona-json", str(log)).encode()
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                  "compression.codec": "lz4", "queue.buffering.max.messages": 500000})
    with open(log, "rb") as f:
        for line in f:
            while True:
                try:
                    p.produce(topic, key=key, value=line.rstrip(b"\n"))
                    break
                except BufferError:
                    p.poll(0.1)
    p.flush()
    return hostile


# Passes of the job alone over its topic in one JVM, the last one measured. In three full runs on
# 2026-11-24 the four passes over 500,000 events ran at 31-36k, 45-50k, 63-81k and 70-86k events/s:
# the JIT compiler settles in the third.
JOB_ALONE_PASSES = 4


def job_alone(cfg, bootstrap: str, topic: str, parallelism: int, recording: Path | None = None,
              passes: int = JOB_ALONE_PASSES, properties: tuple[str, ...] = ()) -> dict:
    """The job alone (io.auditpipe.bench.JobThroughputBenchmark): ``passes`` runs over the topic
    in one JVM, the figures the last one's (the first pays for the JIT compiler: its rate is
    ``job_alone_pass_1_events_per_s``); with ``recording``, under Java Flight Recorder's profiling
    settings, written there (``job_alone_window`` is the last pass's span in it); ``properties``: the
    benchmark's -D settings (JobThroughputBenchmark's javadoc)."""
    flink = FlinkJob(cfg)
    jfr = [f"-XX:StartFlightRecording=filename={recording},settings=profile"] if recording else []
    out = subprocess.run(["java", "-Xmx2g", *jfr, *properties, "-cp", f"{paths.JOB_JAR}:{paths.BENCH_JAR}:{flink.runtime_lib}/*",
                          "-Dlog4j2.configurationFile=" + str(cfg.state_dir / "flink" / "log4j2.properties"),
                          "io.auditpipe.bench.JobThroughputBenchmark", bootstrap, topic,
                          str(parallelism), str(passes)], capture_output=True, text=True, check=True)
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


# the events' store writer's metrics (sink/MongoBulkWriter.java): its task's wait for the store, the
# store's time with one of its batches, and its batches by what started them
EVENTS_WRITER_METRICS = ("storeWaitMillis", "storeBusyMillis", "batchesFull", "batchesOnFlushTimer",
                         "batchesOnCheckpoint", "documentsWritten")


def events_writer_metrics(cfg) -> dict | None:
    """The metrics of the events' store writer (`store-events`, chained to the server's chain),
    EVENTS_WRITER_METRICS summed over subtasks, with the job's checkpoints ("checkpoints": id ->
    the chain's longest synchronous part and alignment in ms, as far as Flink's history of the last 10
    reaches); None when the job or the metrics cannot be read. Call it with the pipeline idle: Flink's
    REST API serves metrics fetched up to 10 s before (metrics.fetcher.update-interval) and fetches
    anew on a request after that, so this waits 11 s and reads twice."""
    time.sleep(11)
    _events_writer_metrics(cfg)
    time.sleep(1.5)
    return _events_writer_metrics(cfg)


def _rest(cfg, path: str):
    from auditpipe.stack.flink import flink_rest

    return flink_rest.call(cfg, path)


def _events_writer_metrics(cfg) -> dict | None:
    for _ in range(20):  # the REST API fetches metrics lazily: a first request may list none yet
        try:
            job = next(j["jid"] for j in _rest(cfg, "/jobs/overview")["jobs"] if j["state"] == "RUNNING")
            for vertex in _rest(cfg, f"/jobs/{job}")["vertices"]:
                path = f"/jobs/{job}/vertices/{vertex['id']}/subtasks/metrics"
                ids = [m["id"] for m in _rest(cfg, path) if "store-events" in m["id"]
                       and m["id"].rsplit(".", 1)[-1] in EVENTS_WRITER_METRICS]
                if len(ids) < len(EVENTS_WRITER_METRICS):
                    continue
                rows = _rest(cfg, f"{path}?get={','.join(ids)}&agg=sum")
                out = {row["id"].rsplit(".", 1)[-1]: float(row["sum"]) for row in rows}
                out["checkpoints"] = _chain_checkpoints(cfg, job, vertex["id"])
                return out
        except (OSError, StopIteration, KeyError, ValueError):
            pass
        time.sleep(0.5)
    return None


def _chain_checkpoints(cfg, job: str, vertex: str) -> dict:
    """The completed checkpoints in Flink's history, each with the chain's slowest subtask's
    synchronous part (the store writer's flush before the barrier is in it) and alignment, in ms."""
    out = {}
    for cp in _rest(cfg, f"/jobs/{job}/checkpoints").get("history", []):
        if cp.get("status") != "COMPLETED":
            continue
        try:
            subtasks = _rest(cfg, f"/jobs/{job}/checkpoints/details/{cp['id']}/subtasks/{vertex}")["subtasks"]
        except (OSError, KeyError, ValueError):
            continue
        acked = [s for s in subtasks if s.get("status") == "completed"]
        out[cp["id"]] = {"sync_ms": max((s.get("checkpoint", {}).get("sync", 0) for s in acked), default=0),
                         "alignment_ms": max((s.get("alignment", {}).get("duration", 0) for s in acked), default=0),
                         "end_to_end_ms": cp.get("end_to_end_duration")}
    return out


JDK_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")


def _samples(recording: Path, depth: int, window: tuple[str, str] | None) -> list[list[dict]] | None:
    """The stack frames of a recording's execution samples (at most ``depth`` from the top), those
    taken within ``window`` (UTC, second resolution, ISO: "2026-11-24T17:33:58") when given; None
    when the JDK's jfr tool is missing."""
    jfr = shutil.which("jfr") or str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "jfr")
    r = subprocess.run([jfr, "print", "--json", "--stack-depth", str(depth), "--events", "jdk.ExecutionSample",
                        str(recording)], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    out = []
    for e in json.loads(r.stdout)["recording"]["events"]:
        if window and not window[0] <= e["values"]["startTime"][:19] <= window[1]:
            continue
        out.append(e["values"]["stackTrace"]["frames"] if e["values"].get("stackTrace") else [])
    return out


def _method(frame: dict) -> str:
    return frame["method"]["type"]["name"].replace("/", ".") + "." + frame["method"]["name"]


def top_frames(recording: Path, n: int = 12, window: tuple[str, str] | None = None) -> list[tuple[float, str]]:
    """The methods most often on top of the stack in a flight recording's execution samples (self
    time), as (share of samples, method); a JDK method with the first method outside the JDK that
    called it (``String.hashCode <- our.Caller``), since a JDK method alone does not say whose work
    it is. Only the samples within ``window`` when given (see _samples). [] when the JDK's jfr tool
    is missing."""
    tops: dict = {}
    for frames in _samples(recording, 64, window) or []:
        if frames:
            name = _method(frames[0])
            if name.startswith(JDK_PACKAGES):
                caller = next((_method(f) for f in frames[1:] if not _method(f).startswith(JDK_PACKAGES)), None)
                if caller:
                    name += " <- " + caller
            tops[name] = tops.get(name, 0) + 1
    total = sum(tops.values()) or 1
    return [(c / total, k) for k, c in sorted(tops.items(), key=lambda kv: -kv[1])[:n]]


def cost_by_package(recording: Path, n: int = 12, window: tuple[str, str] | None = None) -> list[tuple[float, str]]:
    """Where a flight recording's execution samples were spent, by who asked for the work: each sample
    goes to the package (at most 4 parts) of the first frame from the top that is not the JDK's own
    (java., javax., jdk., sun., com.sun.), so a String copy made for the BSON encoder counts for the
    driver; samples all in the JDK count as "JDK". As (share of samples, package); [] when the JDK's
    jfr tool is missing. Only Java threads are sampled (not the JIT compiler or the GC); only those
    within ``window`` when given (see _samples)."""
    by: dict = {}
    for frames in _samples(recording, 64, window) or []:
        types = (f["method"]["type"]["name"].replace("/", ".") for f in frames)
        owner = next((t for t in types if not t.startswith(JDK_PACKAGES)), None)
        # the class's package, at most 4 parts (a class of no package: the class)
        owner = (".".join(owner.split(".")[:-1][:4]) or owner) if owner else "JDK"
        by[owner] = by.get(owner, 0) + 1
    total = sum(by.values()) or 1
    return [(c / total, k) for k, c in sorted(by.items(), key=lambda kv: -kv[1])[:n]]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())


class LiveRecording:
    """A flight recording of a running JVM (the local job), through jcmd: started early, and the
    window of interest dumped at the end. Started in the middle of a run, it cost the job's JVM
    far more than the recording itself: once the recorder is on, the JIT compiler recompiled
    much of the hot code (26 s of C2 compilations of the job's hottest methods during one 56 s
    end-to-end run; the job's CPU per event two to three times the runs without it). Started before the
    warm-up, that happens while the warm-up runs, and it stays on to the end (the latency run too)."""

    def __init__(self, pid: int, path: Path):
        self.pid, self.path = pid, path
        self.jcmd = shutil.which("jcmd") or str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "jcmd")

    def _run(self, *args: str) -> bool:
        return subprocess.run([self.jcmd, str(self.pid), *args], capture_output=True, text=True).returncode == 0

    def start(self) -> bool:
        return self._run("JFR.start", "name=bench-e2e", "settings=profile")

    def dump(self, window: tuple[str, str]) -> Path | None:
        """Writes the recording of ``window`` (UTC, see _samples). The recording goes on (stopping it
        might set the compiler going again during the next run); the JVM's end ends it."""
        ok = self._run("JFR.dump", "name=bench-e2e", f"filename={self.path}", f"begin={window[0]}Z",
                       f"end={window[1]}Z")
        return self.path if ok and self.path.exists() else None


def parse_alone(cfg, root: Path) -> dict[str, tuple[float, float]]:
    """Records/s of each format's parser alone, and with enrichment (io.auditpipe.bench.
    ParserThroughputBenchmark): the simulator's Percona JSON, XML and CSV, and the fixtures of the
    formats it does not write."""
    from auditpipe.tools.simulate import STYLES

    runs = []  # (label, format, file)
    for style, fmt in STYLES.items():
        log = root / style / "audit.log"
        simulate(log, rate=5000, duration=4, speedup=10_000, seed=3, rotate_on_size=0, late_writes=0, style=style)
        runs.append((f"{fmt} ({style})", fmt, log))
    fixtures = paths.PIPELINES / "audit-parser" / "src" / "test" / "resources" / "fixtures"
    for fmt, name in (("mysql-enterprise-xml", "mysql-8.0-enterprise-new.xml"),
                      ("mariadb-audit", "mariadb-10.11-server_audit.log"), ("aurora-audit", "aurora-mysql-3-audit.log"),
                      ("azure-mysql-audit", "azure-mysql-flexible-eventhubs.json"),
                      ("cloudsql-mysql-audit", "cloudsql-mysql-8.0-data-access.json"), ("mcafee-json", "mcafee-1.1-audit.json")):
        runs.append((f"{fmt} (fixture)", fmt, fixtures / name))
    flink = FlinkJob(cfg)
    out = subprocess.run(["java", "-Xmx1g", "-cp", f"{paths.JOB_JAR}:{paths.BENCH_JAR}:{flink.runtime_lib}/*",
                          "io.auditpipe.bench.ParserThroughputBenchmark",
                          *[str(x) for _, fmt, path in runs for x in (fmt, path)]],
                         capture_output=True, text=True, check=True)
    rates = [float(line.split("=", 1)[1]) for line in out.stdout.splitlines() if line.startswith("parse_")
             and "_records_per_s=" in line]
    enriched = [float(line.split("=", 1)[1]) for line in out.stdout.splitlines() if line.startswith("enrich_")]
    return {label: (rate, e) for (label, _, _), rate, e in zip(runs, rates, enriched)}


def log_on_partition_of(root: Path, server: str, other_log: Path, other_server: str, partitions: int = 4) -> Path:
    """A log path for ``server`` whose lines land on the Kafka partition of ``other_server``'s: the
    alert latency is measured in its worst case, the alerting server's lines behind the busy server's
    in one partition. rsyslog's omkafka uses librdkafka's default partitioner, the CRC32 of the key
    modulo the partitions (the key names the log's path, which varies per run), as probe runs
    confirmed by reading the partitions back."""
    import zlib

    def partition(s: str, log: Path) -> int:
        return zlib.crc32(source_key(s, "percona-json", str(log)).encode()) % partitions

    target = partition(other_server, other_log)
    for k in range(1000):
        log = root / f"{server}-{k}" / "audit.log"
        if partition(server, log) == target:
            return log
    raise AssertionError("no path found")  # 1000 tries at 1 in 4 each: not reached


def write_failed_login_bursts(log: Path, seconds: float, written: dict) -> None:
    """Every 0.5 s, 5 failed logins of a new account (a brute_force at the default threshold), appended
    to ``log`` as Percona JSON; ``written`` maps each account to when its 5th line was written."""
    log.parent.mkdir(parents=True, exist_ok=True)
    end = time.monotonic() + seconds
    i = 0
    with open(log, "ab", buffering=0) as f:
        while time.monotonic() < end:
            i += 1
            user = f"victim{i}"
            for k in range(5):
                ts = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S UTC")
                f.write(json.dumps({"audit_record": {"name": "Connect", "record": f"{i * 10 + k}_bench", "timestamp": ts,
                                    "connection_id": str(i * 10 + k), "status": 1045, "user": user, "priv_user": "",
                                    "os_login": "", "proxy_user": "", "host": "scanner", "ip": "203.0.113.9",
                                    "db": ""}}).encode() + b"\n")
            written[user] = time.monotonic()
            time.sleep(0.5)


def watch_alerts(alerts, seen: dict, stop: threading.Event) -> None:
    """Records when each brute_force alert of bench-alerts first becomes visible (polled every 0.1 s)."""
    while not stop.is_set():
        now = time.monotonic()
        for a in alerts.find({"server": "bench-alerts", "rule": "brute_force"}, {"subject": 1}):
            seen.setdefault(a["subject"], now)
        time.sleep(0.1)


def alert_latencies(written: dict, seen: dict, stop: threading.Event, timeout: float = 60) -> list[float]:
    """Seconds from each burst's last line written to its alert visible; waits for stragglers."""
    deadline = time.monotonic() + timeout
    while set(written) - set(seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    stop.set()
    missing = set(written) - set(seen)
    if missing:
        print(f"  ! {len(missing)} of {len(written)} bursts raised no alert within {timeout:.0f}s")
    return [max(seen[u] - written[u], 0.0) for u in written if u in seen]


class StoredCount:
    """How many documents the events collection holds, read from the local FerretDB's SQLite file
    (``SELECT count(*)`` over an index of the bench's own: a few milliseconds, in this process).

    The index is on the record id alone (an integer, every new row at its end: SQLite reads no JSON
    to add to it), made in the file as `index_id_lookups` makes its own; the store has no other to
    count with than the `_id` index (docs/queries.md "Indexes"), and a count of the rows after a
    record id without an index walks the table's own pages, about one a document (FerretDB's rows of
    events are about 4 KB): by the end of the latency run some 300,000 pages a count, ten counts a
    second, in this process, on the cores the stack shares. The bulk-insert ceiling's collection
    does not have it.

    Not through the store's API while the pipeline runs, because on FerretDB 1.24 every way of
    counting there loads the store being measured: count_documents and estimated_document_count
    read every document (58 s at 200,000 events), $collStats reads every page (SQLite's dbstat:
    polling it every 0.5 s during a 200,000-record run cost the store about 40% more CPU per event),
    and even a find by _id took 0.5-0.8 s for a missing id among 40,000 (FerretDB 1.24's pushdown misses
    its own _id index; setup adds a matching one to the uncapped collections only: docs/store.md).
    Nor through Flink's metrics: refreshing them every 0.2 s raised the job's CPU per event from about
    510 to 725 us in a 40,000-record run (2026-11-24).
    The store's own count is taken once at the end, to check this one.
    """

    def __init__(self, cfg):
        path = ferretdb_sqlite_file(cfg)
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        found = ferretdb_table(self.db, cfg.store["events_collection"])
        if found is None:
            raise SystemExit(f"no {cfg.store['events_collection']} table in {path}")
        self.table = found[0]
        self.index = f"{self.table}_bench_record_id"
        try:
            writer = sqlite3.connect(path, timeout=30)
            writer.execute(f'CREATE INDEX IF NOT EXISTS "{self.index}" ON "{self.table}" (_ferretdb_record_id)')
            writer.commit()
            writer.close()
        except sqlite3.Error as e:
            raise SystemExit(f"could not add the bench's record-id index to {path} ({e}): the bench counts stored "
                             "events with it") from e

    def __call__(self) -> int:
        return self.db.execute(f'SELECT count(*) FROM "{self.table}" INDEXED BY "{self.index}"').fetchone()[0]

    def since_now(self):
        """A count of the documents stored from now on, which the capped collection's trimming does not
        lower while it removes older ones (the runs together store more than the local cap of 2 GiB)."""
        mark = self.db.execute(f'SELECT coalesce(max(_ferretdb_record_id), 0) FROM "{self.table}"').fetchone()[0]
        # the rows after the mark in the record-id index: only the new ones are read
        return lambda: self.db.execute(
            f'SELECT count(*) FROM "{self.table}" INDEXED BY "{self.index}" WHERE _ferretdb_record_id > ?',
            (mark,)).fetchone()[0]


WARM_UP_MAX_ROUNDS = 8   # of n_warm records each
JIT_SETTLED = 0.10       # the JIT compiler busy for less than this share of a warm-up round's time: warm


def jit_compile_seconds(pid: int) -> float | None:
    """Seconds the JVM's JIT compilers have spent compiling so far (its own counter, java.ci.totalTime,
    read with jcmd), summed over its compiler threads; None if it cannot be read."""
    jcmd = shutil.which("jcmd") or str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "jcmd")
    try:
        out = subprocess.run([jcmd, str(pid), "PerfCounter.print"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    counters = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    try:
        ticks = counters.get("java.ci.totalTime") or counters["sun.ci.totalTime"]  # JDK 17 names it java.ci
        return int(ticks) / int(counters["sun.os.hrt.frequency"])
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def remove_all_events(cfg) -> None:
    """Empties the local FerretDB's events table in its SQLite file, as the supervisor's trimming deletes
    (cli/auditpipe/store/): FerretDB's own delete would read every document first."""
    con = sqlite3.connect(ferretdb_sqlite_file(cfg), timeout=60)
    try:
        table, _ = ferretdb_table(con, cfg.store["events_collection"])
        con.execute(f'DELETE FROM "{table}"')
        con.commit()
    finally:
        con.close()


def wait_count(count, baseline: int, n: int, timeout: float, samples: list | None = None) -> float:
    """Waits until ``count()`` is ``n`` more than ``baseline`` (polled every 0.1 s); returns when."""
    deadline = time.monotonic() + timeout
    while True:
        now = time.monotonic()
        c = count()
        if samples is not None:
            samples.append((now, c - baseline))
        if c >= baseline + n:
            return now
        if now > deadline:
            raise SystemExit(f"timed out: {c - baseline} of {n} documents stored")
        time.sleep(0.1)

def state_sizes(cfg) -> dict:
    """io.auditpipe.bench.StateSizeBenchmark: the bytes of the sessions' and baselines' keyed state."""
    flink = FlinkJob(cfg)
    out = subprocess.run(["java", "-Xmx256m", "-cp", f"{paths.JOB_JAR}:{paths.BENCH_JAR}:{flink.runtime_lib}/*",
                          "io.auditpipe.bench.StateSizeBenchmark", "50", "10000", "500"],
                         capture_output=True, text=True, check=True)
    return {k: (int(v) if v.isdigit() else v) for k, v in (line.split("=", 1) for line in out.stdout.splitlines()
                                                           if "=" in line)}


def job_features(cfg, root: Path) -> dict[str, tuple[str, str]]:
    """The job's parts a user can do without, each with the benchmark's settings that turn it on as the
    bench's stack has it (the shipped configuration) and off: {name: (on, off)}. The learned baselines
    and the sessions are always on in the job that runs (alerts.baselines.enabled turns the
    baselines off), and so are the links' MACs (the stack makes the link key); the event stream's
    formats and the archive are the configuration's."""
    formats = ",".join(cfg.data["stream"]["formats"])
    archive = str(root / "job-archive") if cfg.archive["enabled"] else "off"
    return {"sessions": ("-Dauditpipe.bench.sessions=on", "-Dauditpipe.bench.sessions=off"),
            "learned baselines": ("-Dauditpipe.bench.baselines=on", "-Dauditpipe.bench.baselines=off"),
            "link MACs": ("-Dauditpipe.bench.link-macs=on", "-Dauditpipe.bench.link-macs=off"),
            f"event stream ({formats or 'off'})": (f"-Dauditpipe.bench.stream={formats}", "-Dauditpipe.bench.stream="),
            "archive": (f"-Dauditpipe.bench.archive={archive}", "-Dauditpipe.bench.archive=off")}


def measure_job_alone(cfg, root: Path, figures: dict, n_job: int, quick: bool) -> tuple[float, float, Path]:
    """The Flink job alone, as the bench's stack configures it (the shipped features: job_features), at
    parallelism 1 and 2, with a profile's top frames, and without each of its features (the cost
    table); each format's parser alone; printed and put in ``figures``. Returns the job's events/s and
    events/s per core at the configured parallelism, and its flight recording."""
    fill_topic(cfg.kafka_bootstrap, "bench.raw", root / "job" / "audit.log", n_job)
    recording = root / "job-alone.jfr"
    features = job_features(cfg, root)
    # the job's options as the bench's stack gives them (its compliance settings, thresholds, baselines)
    options = root / "job-alone.properties"
    options.write_text(FlinkJob(cfg).job_properties(None), encoding="utf-8")
    shipped = (f"-Dauditpipe.bench.job-properties={options}", *(on for on, _ in features.values()))
    job = job_alone(cfg, cfg.kafka_bootstrap, "bench.raw", cfg.flink["parallelism"], recording, properties=shipped)
    per_core = float(job["job_alone_events_per_s_per_core"])
    passes = [round(float(job[f"job_alone_pass_{i}_events_per_s"])) for i in range(1, JOB_ALONE_PASSES)]
    figures["job_alone"] = {"events_per_s": round(float(job["job_alone_events_per_s"])),
                            "events_per_s_per_core": round(per_core), "events": int(job["job_alone_events"]),
                            "cpu_us_per_event": float(job["job_alone_cpu_us_per_event"]),
                            "passes": JOB_ALONE_PASSES, "earlier_passes_events_per_s": passes}
    print(f"flink job alone:          {float(job['job_alone_events_per_s']):10,.0f} events/s "
          f"= {per_core:,.0f} per core  (pass {JOB_ALONE_PASSES} over the topic in one JVM: {job['job_alone_events']} "
          f"events in {float(job['job_alone_seconds']):.1f}s first to last, {float(job['job_alone_seconds_with_startup']):.1f}s "
          f"with job startup; the whole job: parse, enrich, mask, chain, stats, alerts; counting sinks; "
          f"target >= 150,000 per core)")
    print(f"  the passes before it (the JIT compiling): {', '.join(f'{r:,}' for r in passes)} events/s")

    # how the cost grows with parallelism (one server: the chain runs on one subtask whatever the parallelism)
    figures["job_alone_by_parallelism"] = {}
    for p in sorted({1, 2} - {cfg.flink["parallelism"]}):
        other = job_alone(cfg, cfg.kafka_bootstrap, "bench.raw", p, properties=shipped)
        figures["job_alone_by_parallelism"][p] = round(float(other["job_alone_events_per_s"]))
        print(f"  at parallelism {p}:        {float(other['job_alone_events_per_s']):10,.0f} events/s")
    figures["job_alone_by_parallelism"][cfg.flink["parallelism"]] = round(float(job["job_alone_events_per_s"]))
    # the cost table: the job without each feature, the rest as shipped (the learned baselines unseeded here:
    # every principal learns, which is the judging path's cost too, less its rare alerts); CPU per event is the
    # JVM's own CPU time over the pass's events, whatever the threads overlapped. Each run without a feature
    # lies between two runs of the job as shipped (the first is the run above) and is set against their mean:
    # this machine's speed drifts over the table's minutes, and each feature is measured against its own
    rate, first_cpu = float(job["job_alone_events_per_s"]), float(job["job_alone_cpu_us_per_event"])
    cores = os.cpu_count() or 1
    shipped_cpu = [first_cpu]
    withouts = {}
    for name, (_, off) in features.items():
        other = job_alone(cfg, cfg.kafka_bootstrap, "bench.raw", cfg.flink["parallelism"], properties=(*shipped, off))
        shipped_cpu.append(float(job_alone(cfg, cfg.kafka_bootstrap, "bench.raw", cfg.flink["parallelism"],
                                           properties=shipped)["job_alone_cpu_us_per_event"]))
        withouts[name] = (float(other["job_alone_events_per_s"]), float(other["job_alone_cpu_us_per_event"]),
                          (shipped_cpu[-2] + shipped_cpu[-1]) / 2)
    cpu = sum(shipped_cpu) / len(shipped_cpu)
    noise = max(shipped_cpu) - min(shipped_cpu)
    figures["cost_table"] = {"job_alone_events_per_s": round(rate), "cores": cores, "job_cpu_us_per_event": round(cpu, 1),
                             "job_cpu_us_per_event_runs": [round(c, 1) for c in shipped_cpu], "features": {}}
    print(f"  cost table, the job alone: {cpu:.1f} us of CPU per event with every shipped feature ({rate:,.0f} events/s "
          f"on {cores} cores; {min(shipped_cpu):.1f}-{max(shipped_cpu):.1f} us over its {len(shipped_cpu)} runs, one "
          f"before and after each run without a feature: a cost within {noise:.1f} us of zero is noise); without each, "
          f"the rest as shipped, against the mean of the runs beside it:")
    for name, (without, cpu_without, beside) in withouts.items():
        us = beside - cpu_without
        figures["cost_table"]["features"][name] = {"events_per_s_without": round(without), "cpu_us_per_event": round(us, 1),
                                                   "cpu_us_per_event_without": round(cpu_without, 1),
                                                   "cpu_us_per_event_beside": round(beside, 1),
                                                   "share_of_job": round(us / beside, 3)}
        print(f"    {name + ':':32s} {us:6.1f} us/event ({100 * us / beside:3.0f}% of the job's CPU; "
              f"{without:10,.0f} events/s and {cpu_without:.1f} us/event without it, {beside:.1f} beside it)")
    state = state_sizes(cfg)
    figures["state_bytes"] = state
    print(f"  keyed state, as the job's serializers write it (key and timer included): per principal "
          f"{state['state_principal_service_bytes']} B (a service account), {state['state_principal_admin_bytes']} B "
          f"(an administrator), {state['state_principal_bound_bytes']} B at the bounds (500 objects, 50 origins); "
          f"per open connection {state['state_session_bytes']} B ({state['state_session_bound_bytes']} B at 50 tables)")
    print(f"  for {state['state_fleet']}: baselines {int(state['state_fleet_baselines_bytes']) / 2**20:,.0f} MiB "
          f"({int(state['state_fleet_baselines_bound_bytes']) / 2**30:,.1f} GiB at the bounds), sessions "
          f"{int(state['state_fleet_sessions_bytes']) / 2**20:,.0f} MiB "
          f"({int(state['state_fleet_sessions_bound_bytes']) / 2**20:,.0f} MiB at the bound)")
    hostile_n = fill_topic(cfg.kafka_bootstrap, "bench.hostile", root / "job-hostile" / "audit.log", n_job,
                           hostile_every=HOSTILE_EVERY)
    hostile = job_alone(cfg, cfg.kafka_bootstrap, "bench.hostile", cfg.flink["parallelism"], properties=shipped)
    hostile_rate = float(hostile["job_alone_events_per_s"])
    figures["job_alone_hostile"] = {"events_per_s": round(hostile_rate), "hostile_statements": hostile_n,
                                    "share_of_clean": round(hostile_rate / float(job["job_alone_events_per_s"]), 3)}
    print(f"  with one statement in {HOSTILE_EVERY} hostile ({hostile_n:,} of {n_job:,}: 14 nested CASE expressions, "
          f"each on a table of its own): {hostile_rate:10,.0f} events/s = "
          f"{100 * figures['job_alone_hostile']['share_of_clean']:.0f}% of the clean rate (target >= 80%: the SQL "
          "parser is not given statements nested beyond its bounds, docs/compliance.md)")
    last_pass = tuple(job["job_alone_window"].split("/"))
    frames = top_frames(recording, window=last_pass)
    if frames:
        print(f"  top frames of the job alone at parallelism {cfg.flink['parallelism']} (share of Java Flight "
              f"Recorder's execution samples in pass {JOB_ALONE_PASSES}, all threads):")
        for share, frame in frames:
            print(f"    {100 * share:5.1f}%  {frame}")
    figures["job_alone_top_frames"] = [{"share": round(share, 4), "frame": f} for share, f in frames]
    packages = cost_by_package(recording, window=last_pass)
    if packages:
        print("  the same samples by who asked for the work (the first frame from the top outside the JDK):")
        for share, package in packages:
            print(f"    {100 * share:5.1f}%  {package}")
    figures["job_alone_by_package"] = [{"share": round(sh, 4), "package": p} for sh, p in packages]
    figures["parse_alone_records_per_s_one_core"] = {}
    for fmt, (rate, enriched) in parse_alone(cfg, root / "formats").items():
        figures["parse_alone_records_per_s_one_core"][fmt] = {"parse": round(rate), "with_enrichment": round(enriched)}
        print(f"  parsing alone, {fmt + ':':24s}{rate:10,.0f} records/s on one core; with enrichment and masking "
              f"{enriched:10,.0f} ({100 * enriched / rate:.0f}%) (framed as the collector frames them; the job's "
              f"per-core target of 150,000 includes both)")
    return float(job["job_alone_events_per_s"]), per_core, recording


LATENCY_SHARE = 0.7  # the latency run's rate, as a share of the run's own end-to-end rate (bench/results.py GOALS)
LATENCY_LOG_ROTATE_BYTES = 32 * 1024 * 1024
LATENCY_RECORDS_LEAD_S = 20  # making the latency run's 300,000 records takes about 11 s of a core


def write_paced(lines: Path, log: Path, rate: float, rotate_on_size: int) -> None:
    """Appends the lines of ``lines`` to ``log`` at ``rate`` lines a second, the due ones every 10 ms,
    rotating as the plugin does (the simulator's AuditLogWriter). The records are made before (the
    simulator at full speed): making them as they are written took 36% of a core at 10,000 a second
    (measured), a load on the 2 cores the pipeline shares that a MySQL server's audit plugin does not
    put on the pipeline."""
    from auditpipe.tools.simulate import AuditLogWriter

    writer = AuditLogWriter(log, rotate_on_size, rotations=9, late_writes=3)
    start = time.monotonic()
    written = 0
    with open(lines, "rb") as source:
        for line in source:
            while written >= (time.monotonic() - start) * rate:
                writer.flush()
                time.sleep(0.01)
            writer.write(line.rstrip(b"\n"))
            written += 1
    writer.close()


def measure_latency(cfg, db, logs: dict, stored, figures: dict, lat_seconds: int, rate: int) -> None:
    """Latency at ``rate`` events/s, line written -> document visible, with the alert latency of
    brute-force bursts on the busy server's partition and each component's peak resident memory;
    printed and put in ``figures``."""
    log = logs["bench-latency"]
    total = rate * lat_seconds
    samples: list = []
    writer_before = events_writer_metrics(cfg)
    # Made first (write_paced says why), where no collector reads, each record with the time it will be
    # written at: the alert bursts on the same partition carry the time they are written at, and
    # records far behind them (the simulator's default, the run's length before now) are late for
    # their minute's stats once the bursts move the partition's watermark on; each late event fires its
    # window at once (EarlyFiringEventTimeTrigger), a stats upsert per batch of the stats writer for
    # every key: in such runs (2026-11-25) the store took 107-110 us of CPU per event in the latency
    # run against 85-88 in the end-to-end run before it.
    records = log.parent.parent / "latency-records.log"
    begin = datetime.now(timezone.utc) + timedelta(seconds=LATENCY_RECORDS_LEAD_S)
    simulate(path=records, rate=rate, duration=lat_seconds, speedup=1e6, seed=7, rotate_on_size=0, start_time=begin)
    time.sleep(max(0.0, (begin - datetime.now(timezone.utc)).total_seconds()))
    latency_stored = stored.since_now()
    usage = ComponentUsage(cfg.state_dir).start()
    t0 = time.monotonic()
    writer = threading.Thread(target=write_paced, args=(records, log, rate, LATENCY_LOG_ROTATE_BYTES))
    writer.start()
    bursts: dict = {}
    alerts_seen: dict = {}
    stop_watching = threading.Event()
    threading.Thread(target=watch_alerts, args=(db[cfg.store["alerts_collection"]], alerts_seen, stop_watching),
                     daemon=True).start()
    burster = threading.Thread(target=write_failed_login_bursts,
                               args=(logs["bench-alerts"], lat_seconds, bursts))
    burster.start()
    wait_count(latency_stored, 0, total, timeout=900, samples=samples)
    writer.join()
    burster.join()
    records.unlink()
    seconds = samples[-1][0] - t0
    latency_usage = usage.stop()
    writer_after = events_writer_metrics(cfg)
    # record k is written at about t0 + k/rate; it is visible once the count reaches k
    by_written = []  # (second of the run it was written in, latency)
    for k in range(1000, total + 1, max(total // 500, 1)):
        seen = next(t for t, c in samples if c >= k)
        by_written.append((k / rate, max(seen - (t0 + k / rate), 0.0)))
    latencies = sorted(lat for _, lat in by_written)
    p50 = statistics.median(latencies)
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    print(f"end to end latency:       p50 {p50:.2f}s  p99 {p99:.2f}s at {rate} events/s for {lat_seconds}s "
          f"(line written -> document visible, counted every 0.1s; target p99 < 2s)")
    # where in the run the slow ones were: a backlog grows, a stall is a bump
    slice_s = max(lat_seconds // 10, 1)
    slices = [max((lat for w, lat in by_written if i <= w < i + slice_s), default=0.0)
              for i in range(0, lat_seconds, slice_s)]
    print(f"  the slowest of each {slice_s}s of the run, by when written: " + ", ".join(f"{x:.1f}" for x in slices) + " s")
    cpu_share = sum(c for c, _ in latency_usage.values()) / seconds / (os.cpu_count() or 1)
    figures["latency"] = {"events_per_s": rate, "seconds": lat_seconds, "p50_s": round(p50, 2), "p99_s": round(p99, 2),
                          "slowest_per_slice_s": [round(x, 2) for x in slices], "slice_seconds": slice_s,
                          "components_cpu_share": round(cpu_share, 3)}
    busy = ""
    if writer_before is not None and writer_after is not None:
        busy_s = (writer_after["storeBusyMillis"] - writer_before["storeBusyMillis"]) / 1000
        figures["latency"]["seconds_store_had_an_events_batch"] = round(busy_s, 1)
        figures["latency"]["events_batches"] = {k: round(writer_after[k] - writer_before[k])
                                                for k in ("batchesFull", "batchesOnFlushTimer", "batchesOnCheckpoint")}
        busy = (f"; the store had a batch of the events' writer {100 * busy_s / seconds:.0f}% of it (storeBusyMillis); "
                "its batches full / on the flush timer / on a checkpoint: "
                + " / ".join(str(v) for v in figures["latency"]["events_batches"].values()))
    print(f"  the stack's components used {100 * cpu_share:.0f}% of the machine's {os.cpu_count()} cores in the "
          f"{seconds:.1f}s until the last was stored{busy}")
    cpu_per_event = {k: 1e6 * c / total for k, (c, _) in latency_usage.items()}
    figures["latency"]["cpu_us_per_event"] = {k: round(v, 1) for k, v in cpu_per_event.items()}
    print("  CPU per event in this run: " + ", ".join(f"{k} {v:.1f} us" for k, v in cpu_per_event.items())
          + f"; all {sum(cpu_per_event.values()):.0f} us")
    alert_lat = sorted(alert_latencies(bursts, alerts_seen, stop_watching))
    if alert_lat:
        a50 = statistics.median(alert_lat)
        a99 = alert_lat[int(0.99 * (len(alert_lat) - 1))]
        print(f"alert latency:            p50 {a50:.2f}s  p99 {a99:.2f}s over {len(alert_lat)} brute-force bursts "
              f"during the {rate} events/s run, their lines on the busy server's partition (5th failed login "
              f"written -> alert visible in the store, polled every 0.1s; target p99 < 1s)")
        slow = results.slow_bursts(bursts, alerts_seen, t0, by_written)
        figures["alert_latency"] = {"bursts": len(alert_lat), "p50_s": round(a50, 2), "p99_s": round(a99, 2),
                                    "slow": slow}
        if slow:
            print(f"  {len(slow)} took {results.ALERT_SLOW_S:.0f} s or more (alert latency / the slowest event written "
                  "within a second of it, at second N of the run): " + ", ".join(
                      f"{s['latency_s']:.2f} / {'-' if s['events_latency_s'] is None else s['events_latency_s']} s "
                      f"at {s['at_s']:.0f}" for s in slow))
    total_rss = sum(r for _, r in latency_usage.values())
    print(f"resident memory during the {rate} events/s run (peak per component): " + ", ".join(
        f"{k} {r:,.0f} MiB" for k, (_, r) in latency_usage.items()) + f"; together {total_rss:,.0f} MiB "
        f"(target <= 2 GiB)")
    figures["memory_at_latency_rate_mib"] = {**{k: round(r) for k, (_, r) in latency_usage.items()},
                                             "total": round(total_rss)}


RECEIVER_LISTEN = "tcp://127.0.0.1:29614"  # the bench stack's syslog receiver (rsyslog imtcp)


def syslog_frames(lines: list[bytes], host: str) -> bytes:
    """``lines`` as octet-counted RFC 5424 messages (RFC 6587) from ``host``, tag percona-audit."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ").encode()
    head = b"<110>1 " + now + b" " + host.encode() + b" percona-audit - - - "
    return b"".join(b"%d %s" % (len(head) + len(line), head + line) for line in lines)


def raw_total(cfg) -> int:
    return sum(end_offsets(cfg.kafka_bootstrap, topic_name("raw")).values())


def wait_raw(cfg, base: int, n: int, timeout: float = 1800) -> float:
    """Waits until audit.raw holds ``n`` messages more than ``base``; the time it did (monotonic)."""
    deadline = time.monotonic() + timeout
    while raw_total(cfg) - base < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"audit.raw did not receive {n} messages in {timeout:.0f} s")
        time.sleep(0.1)
    return time.monotonic()


def measure_receiver(cfg, root: Path, figures: dict, n: int, file_rate: float) -> None:
    """The syslog receiver (rsyslog's imtcp) alone: ``n`` records sent over one TCP connection as
    octet-counted RFC 5424 messages, as fast as the connection takes them; messages/s into Kafka and the
    collector's CPU per message, beside the file collector's rate of this run."""
    host, port = RECEIVER_LISTEN.split("://")[1].rsplit(":", 1)
    address = (host, int(port))
    made = root / "receiver" / "audit.log"
    simulate(made, rate=n, duration=1, speedup=1e6, seed=8, rotate_on_size=0)
    frames = syslog_frames([line for line in made.read_bytes().splitlines() if line], "bench-sender")
    base = raw_total(cfg)
    usage = ComponentUsage(cfg.state_dir).start()
    start = time.monotonic()
    with socket.create_connection(address) as s:
        s.sendall(frames)
    sent = time.monotonic()
    done = wait_raw(cfg, base, n)
    used = usage.stop()
    rate = n / (done - start)
    cpu_us = 1e6 * used["collector"][0] / n
    figures["syslog_receiver"] = {"messages": n, "messages_per_s": round(rate), "collector_cpu_us_per_message":
                                  round(cpu_us, 1), "seconds_sending": round(sent - start, 2),
                                  "file_collector_lines_per_s": round(file_rate)}
    print(f"syslog receiver (rsyslog imtcp, one TCP connection, octet-counted RFC 5424): {rate:,.0f} messages/s "
          f"into Kafka ({n} messages, all on audit.raw after {done - start:.1f}s), the collector {cpu_us:.1f} us of "
          f"CPU per message; the file collector in this run: {file_rate:,.0f} lines/s")


FLEET_SOURCES = 50  # the bench stack's logs bench-fleet-00 .. -49, written only by measure_fleet


def fleet_logs(root: Path) -> dict[str, Path]:
    return {f"bench-fleet-{i:02d}": root / f"bench-fleet-{i:02d}" / "audit.log" for i in range(FLEET_SOURCES)}


IDLE_SETTLE_S = 60  # after `up`: the job's start and first checkpoints are over; its JIT compiler keeps ~2% for minutes
IDLE_SECONDS = 30


def measure_idle(cfg, figures: dict, sources: int) -> None:
    """What the stack costs while nothing happens: each component's CPU over IDLE_SECONDS, every
    configured source idle and nothing stored yet, once IDLE_SETTLE_S have passed since `up` (the
    job's own start and first checkpoints are no part of idling; its JIT compiler still is, a little). Later, the job's
    timers and the store's trimming of earlier runs' events would be in it."""
    time.sleep(IDLE_SETTLE_S)
    usage = ComponentUsage(cfg.state_dir).start()
    time.sleep(IDLE_SECONDS)
    idle = usage.stop()
    figures["idle"] = {"sources": sources, "seconds": IDLE_SECONDS, "after_up_s": IDLE_SETTLE_S,
                       "cpu_percent_of_a_core": {k: round(100 * c / IDLE_SECONDS, 1) for k, (c, _) in idle.items()}}
    print(f"idle, {sources} sources configured and nothing written, {IDLE_SECONDS} s from {IDLE_SETTLE_S} s after `up`: "
          + ", ".join(f"{k} {100 * c / IDLE_SECONDS:.1f}%" for k, (c, _) in sorted(idle.items())) + " of a core; all "
          f"{sum(100 * c / IDLE_SECONDS for c, _ in idle.values()):.1f}% (target < 5%)")


def measure_fleet(cfg, root: Path, figures: dict, stored, n: int) -> None:
    """What a source costs under load: ``n`` records written to one of the fleet's 50 logs, then ``n``
    records spread over all 50, each as fast as the simulator writes; each component's CPU per event in
    the two runs, one after the other on the same warmed job, and whether anything was stored twice."""
    logs = list(fleet_logs(root).values())

    def run(targets: list[Path], seed: int) -> dict:
        count = stored.since_now()
        usage = ComponentUsage(cfg.state_dir).start()
        start = time.monotonic()
        written = sum(simulate(log, rate=n // len(targets), duration=1, speedup=1e6, seed=seed + i,
                               rotate_on_size=32 * 1024 * 1024).records for i, log in enumerate(targets))
        done = wait_count(count, 0, written, timeout=1800)
        used = usage.stop()
        time.sleep(5)  # anything stored twice would show now
        return {"logs": len(targets), "records": written, "events_per_s": round(written / (done - start)),
                "seconds_all_stored": round(done - start, 1), "stored_beyond_written": count() - written,
                "cpu_us_per_event": {k: round(1e6 * c / written, 1) for k, (c, _) in used.items()}}

    one = run(logs[:1], 30)
    fleet = run(logs, 40)
    figures["fleet"] = {"sources": FLEET_SOURCES, "one_log": one, "all_logs": fleet}
    cpu_one, cpu_all = one["cpu_us_per_event"], fleet["cpu_us_per_event"]
    print(f"fleet: {one['records']} records to one log, then {fleet['records']} over {FLEET_SOURCES} logs at once: "
          f"{one['events_per_s']:,} / {fleet['events_per_s']:,} events/s end to end ("
          f"{one['stored_beyond_written'] + fleet['stored_beyond_written']} stored beyond them); CPU per event, one log / "
          f"{FLEET_SOURCES}: " + ", ".join(f"{k} {cpu_one[k]:.1f} / {cpu_all[k]:.1f} us" for k in sorted(cpu_all)))


QUIET_SENDER = "127.0.0.2"  # the quiet sender's own address: its own server at the receiver (from-host)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_flood_fairness(cfg, root: Path, figures: dict, n: int) -> None:
    """Whether a flood from one sender starves another: a quiet sender (its own address, its own
    connection) sends a message every 50 ms, first alone, then while a flooding sender pushes ``n``
    messages over one connection as fast as the receiver takes them. A consumer of audit.raw, assigned
    at its end before anything is sent, notes the wall-clock time each quiet message arrives (the same
    clock as the sender's; Kafka's own message timestamps are whole seconds here); the figures are the
    quiet sender's delays into Kafka alone and during the flood, and how many of its messages arrived."""
    from confluent_kafka import Consumer, TopicPartition

    from auditpipe.stack.kafka.topics import QUIET_CLIENT

    host, port = RECEIVER_LISTEN.split("://")[1].rsplit(":", 1)
    made = root / "flood" / "audit.log"
    simulate(made, rate=n, duration=1, speedup=1e6, seed=18, rotate_on_size=0)
    flood = syslog_frames([line for line in made.read_bytes().splitlines() if line], "bench-flood")
    quiet_made = root / "quiet" / "audit.log"
    simulate(quiet_made, rate=10_000, duration=1, speedup=1e6, seed=19, rotate_on_size=0)
    quiet_lines = [line for line in quiet_made.read_bytes().splitlines() if line]
    topic = topic_name("raw")
    consumer = Consumer({**cfg.kafka_client, "group.id": "auditpipe-bench-fairness", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 5, **QUIET_CLIENT})
    consumer.assign([TopicPartition(topic, p, o) for p, o in end_offsets(cfg.kafka_bootstrap, topic).items()])
    seen: dict[int, float] = {}
    stop = threading.Event()
    marker = b" bench-quiet percona-audit - q"

    def consume() -> None:
        while not stop.is_set():
            for msg in consumer.consume(num_messages=5000, timeout=0.05):
                value = msg.value()
                if msg.error() is None and value and marker in value:
                    at = time.time()
                    seq = int(value[value.index(marker) + len(marker):].split(b" ", 1)[0])
                    seen.setdefault(seq, at)

    sent: dict[int, float] = {}

    def quiet(first: int, until: threading.Event, at_most: int) -> int:
        """Sends a message every 50 ms from QUIET_SENDER until ``until`` is set or ``at_most`` are sent."""
        seq = first
        with socket.socket() as s:
            s.bind((QUIET_SENDER, 0))
            s.connect((host, int(port)))
            while not until.is_set() and seq < first + at_most:
                stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ").encode()
                msg = b"<110>1 " + stamp + marker + b"%d - " % seq + quiet_lines[seq % len(quiet_lines)]
                sent[seq] = time.time()
                s.sendall(b"%d %s" % (len(msg), msg))
                seq += 1
                time.sleep(0.05)
        return seq

    def delays(first: int, last: int) -> dict:
        waited = [1000 * (seen[i] - sent[i]) for i in range(first, last) if i in seen]
        return {"sent": last - first, "arrived": len(waited),
                **({"p50_ms": round(percentile(waited, 0.5)), "p99_ms": round(percentile(waited, 0.99)),
                    "max_ms": round(max(waited))} if waited else {})}

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    try:
        alone_end = quiet(0, threading.Event(), 40)
        # the flood, with the quiet sender going on beside it until the flood is all on audit.raw
        flooding = threading.Event()
        result: dict = {}
        beside = threading.Thread(target=lambda: result.setdefault("end", quiet(alone_end, flooding, 100_000)))
        base = raw_total(cfg)
        beside.start()
        start = time.monotonic()
        with socket.create_connection((host, int(port))) as s:
            s.sendall(flood)
        # the flood's messages and the quiet ones sent meanwhile: at least n more on the topic
        done = wait_raw(cfg, base, n)
        flooding.set()
        beside.join()
        end = result["end"]
        deadline = time.monotonic() + 60  # the last quiet messages' way through
        while len([i for i in range(end) if i in seen]) < end and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        reader.join()
        consumer.close()
    alone, during = delays(0, alone_end), delays(alone_end, end)
    figures["syslog_flood"] = {"flood_messages": n, "flood_messages_per_s": round(n / (done - start)),
                               "quiet_alone": alone, "quiet_during_flood": during}

    def shown(d: dict) -> str:
        if not d["arrived"]:
            return f"none of {d['sent']} arrived"
        return (f"{d['arrived']} of {d['sent']} arrived, delay p50 {d['p50_ms']} ms, p99 {d['p99_ms']} ms, "
                f"max {d['max_ms']} ms")

    print(f"syslog flood: one sender {n} messages over one connection at {n / (done - start):,.0f}/s; a quiet sender "
          f"beside it (a message every 50 ms): alone {shown(alone)}; during the flood {shown(during)}")


def stack_config(root: Path, ports: dict, sources: list[dict], flink: dict | None = None,
                 stream: tuple[str, ...] | None = None, store: dict | None = None) -> Path:
    """The configuration of a bench's own stack: the repository's auditpipe.yaml, what a user of the
    local stack runs (the event stream's formats, the compliance settings, continuous verification at
    its interval, the archive, the alert rules and baselines, the JVMs' heaps), with the bench's ``ports``,
    its state under ``root``, and ``sources`` instead of the file's; written to
    root/auditpipe.yaml. ``flink``, ``store``: more settings of those sections; ``stream``: the event
    stream's formats instead of the shipped ones (an empty tuple: none)."""
    import yaml

    shipped = yaml.safe_load((REPO / "auditpipe.yaml").read_text(encoding="utf-8")) or {}
    cfg = {**shipped, "state_dir": str(root / "state"), "tools_dir": str(REPO / ".auditpipe" / "tools"),
           "kafka": {**shipped.get("kafka", {}), "port": ports["kafka"], "controller_port": ports["controller"]},
           "store": {**shipped.get("store", {}), "port": ports["store"], **(store or {})},
           "flink": {**shipped.get("flink", {}), "rest_port": ports["flink"], **(flink or {})},
           "sources": [{k: str(v) if isinstance(v, Path) else v for k, v in src.items()} for src in sources]}
    if stream is not None:
        cfg["stream"] = {**shipped.get("stream", {}), "formats": list(stream)}
    cfg_file = root / "auditpipe.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return cfg_file


def shipped_stream_formats() -> list[str]:
    """The event stream's formats of the repository's auditpipe.yaml (what users run)."""
    import yaml

    return list((yaml.safe_load((REPO / "auditpipe.yaml").read_text(encoding="utf-8")) or {})
                .get("stream", {}).get("formats", []))


def main() -> None:
    quick = "--quick" in sys.argv
    end_to_end_only = "--end-to-end-only" in sys.argv
    json_out = Path(sys.argv[sys.argv.index("--json") + 1]) if "--json" in sys.argv else None
    # the event stream's formats: the shipped ones (auditpipe.yaml), or --stream's ("none": off)
    given = sys.argv[sys.argv.index("--stream") + 1] if "--stream" in sys.argv else None
    stream = (tuple(shipped_stream_formats()) if given is None else
              () if given == "none" else tuple(given.split(",")))
    keep_recordings = Path(sys.argv[sys.argv.index("--recordings") + 1]) if "--recordings" in sys.argv else None
    # the latency run at this rate rather than at 70% of the run's own: to set two commits side by side
    # on one day; such a run's latency is not judged against the goal (bench/results.py)
    latency_rate = round(float(sys.argv[sys.argv.index("--latency-rate") + 1])) if "--latency-rate" in sys.argv else None
    if json_out is not None and not (json_out.parent.is_dir() and os.access(json_out.parent, os.W_OK)):
        raise SystemExit(f"--json {json_out}: cannot write there (its folder must exist and be writable); "
                         "checked before the run, not after it")
    n_bulk, n_job, n_e2e, lat_seconds = (40_000, 100_000, 40_000, 10) if quick else (100_000, 500_000, 200_000, 30)
    n_warm = 40_000 if quick else 100_000  # per warm-up round
    figures: dict = {"run": {"quick": quick, "end_to_end_only": end_to_end_only, "stream_formats": list(stream),
                             "latency_rate_given": latency_rate,
                             "store_bulk_documents": n_bulk, "job_alone_events": n_job,
                             "end_to_end_records": n_e2e, "warm_up_records": n_warm,
                             "latency_seconds": lat_seconds}}
    root = Path(tempfile.mkdtemp(prefix="auditpipe-bench-"))
    logs = {s: root / s / "audit.log" for s in ["bench-warmup", "bench-e2e", "bench-latency"]}
    logs["bench-alerts"] = log_on_partition_of(root, "bench-alerts", logs["bench-latency"], "bench-latency")
    cfg_file = stack_config(root, PORTS, [{"path": log, "server": s} for s, log in {**logs, **fleet_logs(root)}.items()]
                            + [{"listen": RECEIVER_LISTEN, "format": "auto"}], stream=stream,
                            flink={"checkpoint_interval": "5s"}, store={"database": "bench", "events_capped_size_mb": 2048})
    cfg = config.load(cfg_file)
    assert cfg.kafka["raw_partitions"] == 4, "log_on_partition_of assumes audit.raw's 4 partitions"
    rsyslog = subprocess.run(['rsyslogd', '-v'], capture_output=True, text=True).stdout.split()[1]
    figures.update(machine=machine(), cores=os.cpu_count(), parallelism=cfg.flink["parallelism"], commit=git_commit(),
                   versions={"kafka": KAFKA_VERSION, "flink": FLINK_VERSION, "ferretdb": FERRETDB_VERSION,
                             "rsyslog": rsyslog, "auditpipe_commit": git_commit()},
                   # the stack's configuration, its own paths and sources aside
                   configuration={k: v for k, v in cfg.data.items() if k not in ("state_dir", "tools_dir", "sources")},
                   sources=len(cfg.data["sources"]),
                   started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    print(f"machine: {machine()}")
    print(f"components: Kafka {KAFKA_VERSION} (KRaft), Flink {FLINK_VERSION} MiniCluster, FerretDB {FERRETDB_VERSION} "
          f"(SQLite), rsyslog {rsyslog}, parallelism {cfg.flink['parallelism']}"
          + (f"; the event stream on: {', '.join(stream)} (stream.formats)" if stream else ""))
    cli(cfg_file, "up")
    try:
        measure_idle(cfg, figures, len(cfg.collector_sources()))
        from pymongo import MongoClient

        db = MongoClient(cfg.store_uri, socketTimeoutMS=600000)[cfg.store["database"]]
        events = db[cfg.store["events_collection"]]

        usage = ComponentUsage(cfg.state_dir).start()
        bulk_started = time.monotonic()
        sample_bulk = store_bulk_rate(db, n_bulk)
        bulk_seconds = time.monotonic() - bulk_started
        store_cpu = usage.stop()["store"][0]
        figures["store_bulk_docs_per_s"] = round(sample_bulk)
        figures["store_bulk_cpu_us_per_doc"] = round(1e6 * store_cpu / n_bulk, 1)
        print(f"store bulk insert:        {sample_bulk:10,.0f} docs/s  ({n_bulk} event-shaped sample docs, 2 writers, "
              f"batches of 1000; the store used {1e6 * store_cpu / n_bulk:.0f} us of CPU per document, "
              f"{100 * store_cpu / bulk_seconds:.0f}% of a core)")

        if end_to_end_only:
            job_rate = per_core = recording = None
        else:
            job_rate, per_core, recording = measure_job_alone(cfg, root, figures, n_job, quick)

        stored = StoredCount(cfg)
        flink_pid = ComponentUsage(cfg.state_dir).pids["flink"]
        job_recording = LiveRecording(flink_pid, root / "job-end-to-end.jfr")
        recording_job = job_recording.start()
        # Warm-up: the job's JVM compiles its hot code under load. Measured cold, the JIT compiler
        # threads took 12.6 of the job's 32 CPU seconds in a 200,000-record run; after a warm-up of
        # 100,000 records they still had about half of the job's CPU in the measured run (2026-11-25):
        # a one-time cost of every start, not the steady state a busy server meets. So
        # rounds of records until the compiler's time in a round is under JIT_SETTLED of it, then the
        # warm-up's events are removed, so that the measured run starts on an empty collection as the
        # bulk-insert ceiling does (and the capped collection's trimming does not run during it).
        warm_started = time.monotonic()
        warm_rounds = []
        compiled_before = jit_compile_seconds(flink_pid)
        for round_number in range(1 if quick else WARM_UP_MAX_ROUNDS):
            round_started = time.monotonic()
            count = stored.since_now()  # the capped collection's trimming may remove older rows meanwhile
            warm = simulate(root / "bench-warmup" / "audit.log", rate=n_warm, duration=1, speedup=1e6,
                            seed=4 + 100 * round_number, rotate_on_size=32 * 1024 * 1024)
            wait_count(count, 0, warm.records, timeout=1800)
            seconds = time.monotonic() - round_started
            compiled = jit_compile_seconds(flink_pid)
            compiling = (compiled - compiled_before) / seconds if compiled is not None and compiled_before is not None else None
            compiled_before = compiled
            warm_rounds.append({"records": warm.records, "events_per_s": round(warm.records / seconds),
                                "jit_compiling_share": None if compiling is None else round(compiling, 3)})
            print(f"warm-up round {round_number + 1}: {warm.records / seconds:,.0f} events/s ({warm.records} records, "
                  f"file -> store, server bench-warmup; not counted below); the JIT compiler busy "
                  + ("(unknown: jcmd failed)" if compiling is None else f"{100 * compiling:.0f}% of the round"))
            if compiling is None or compiling < JIT_SETTLED:
                break
        figures["end_to_end_warm_up"] = {"rounds": warm_rounds, "seconds": round(time.monotonic() - warm_started),
                                         "jit_settled_below": JIT_SETTLED}
        remove_all_events(cfg)

        log = root / "bench-e2e" / "audit.log"
        kafka_base = sum(end_offsets(cfg.kafka_bootstrap, topic_name("raw")).values())
        in_kafka: dict = {}

        def watch_kafka(n: int) -> None:
            while time.monotonic() - start < 1800:
                if sum(end_offsets(cfg.kafka_bootstrap, topic_name("raw")).values()) - kafka_base >= n:
                    in_kafka["t"] = time.monotonic()
                    return
                time.sleep(0.2)

        e2e_base = stored()
        writer_before = events_writer_metrics(cfg)
        usage = ComponentUsage(cfg.state_dir).start()
        e2e_window_begin = utc_now()
        start = time.monotonic()
        watcher = threading.Thread(target=watch_kafka, args=(n_e2e,), daemon=True)
        watcher.start()
        m = simulate(log, rate=n_e2e, duration=1, speedup=1e6, seed=6, rotate_on_size=32 * 1024 * 1024)
        written = time.monotonic()
        done = wait_count(stored, e2e_base, m.records, timeout=1800)
        used = usage.stop()
        e2e_window = (e2e_window_begin, utc_now())
        e2e_recording = job_recording.dump(e2e_window) if recording_job else None
        writer_after = events_writer_metrics(cfg)
        watcher.join(timeout=5)
        in_store = document_count(events)
        # the ceiling: the store's bulk rate for the very documents this run stored (the issue's "same
        # documents"): they are larger than the sample above (the original line, enrichment, chain fields)
        # (batch_size: FerretDB 1.24 would send them all in one reply, larger than a message may be)
        stored_docs = list(events.find({"server": "bench-e2e"}).limit(n_bulk).batch_size(2000))
        doc_bytes = statistics.mean(len(bson.encode(d)) for d in stored_docs[:1000])
        usage = ComponentUsage(cfg.state_dir).start()
        bulk = store_bulk_rate_of(db, stored_docs, events)
        bulk_store_us = 1e6 * usage.stop()["store"][0] / len(stored_docs)
        # one batch at a time: as the events sink writes to MongoDB (the chain's order: docs/archive.md);
        # to FerretDB it has two in flight, as the 2 writers above
        one_writer = store_bulk_rate_of(db, stored_docs, events, writers=1)
        del stored_docs
        figures["store_bulk_stored_documents"] = {"docs_per_s": round(bulk), "documents": n_bulk,
                                                  "mean_bson_bytes": round(doc_bytes),
                                                  "cpu_us_per_doc": round(bulk_store_us, 1),
                                                  "one_writer_docs_per_s": round(one_writer)}
        print(f"store bulk insert of the documents this run stored: {bulk:,.0f} docs/s ({n_bulk} of them, "
              f"{doc_bytes:,.0f} bytes of BSON on average; the events collection's indexes; 2 writers, batches "
              f"of 1000; the store used {bulk_store_us:.0f} us of CPU per document, "
              f"{100 * bulk_store_us * bulk / 1e6:.0f}% of a core); "
              f"one writer, one batch at a time (the events sink has two in flight on FerretDB, one on MongoDB): "
              f"{one_writer:,.0f} docs/s")
        e2e = m.records / (done - start)
        kafka_at = in_kafka.get("t", done) - start
        print(f"end to end throughput:    {e2e:10,.0f} events/s  ({m.records} events, file -> store; written in "
              f"{written - start:.1f}s, all stored after {done - start:.1f}s; {in_store - e2e_base} more in the "
              f"store) = "
              f"{100 * e2e / bulk:.0f}% of the store's bulk rate for the same documents (target >= 80%; "
              f"{100 * e2e / one_writer:.0f}% of one writer's, {100 * e2e / sample_bulk:.0f}% of the sample's)")
        print(f"  stages: all lines in Kafka after {kafka_at:.1f}s (collector), all documents in the store after "
              f"{done - start:.1f}s (Flink job + store writes)")
        writer = {k: writer_after[k] - writer_before[k] for k in EVENTS_WRITER_METRICS} \
            if writer_before is not None and writer_after is not None else None
        if writer is not None:
            waited, busy = writer["storeWaitMillis"] / 1000, writer["storeBusyMillis"] / 1000
            batches = {k: round(writer[k]) for k in ("batchesFull", "batchesOnFlushTimer", "batchesOnCheckpoint")}
            run_checkpoints = [c for i, c in writer_after["checkpoints"].items() if i not in writer_before["checkpoints"]]
            figures["end_to_end"] = {"seconds_events_writer_waited_for_store": round(waited, 1),
                                     "seconds_store_had_an_events_batch": round(busy, 1),
                                     "events_batches": batches,
                                     "checkpoints": run_checkpoints}
            print(f"  the events' store writer held its task (the server's chain) {waited:.1f}s of the "
                  f"{done - start:.1f}s waiting for the store (a batch in flight; metric storeWaitMillis); the "
                  f"store had one of its batches {busy:.1f}s ({100 * busy / (done - start):.0f}%, storeBusyMillis, "
                  f"{1000 * busy / max(sum(batches.values()), 1):.0f} ms a batch)")
            print(f"  its batches: {batches['batchesFull']} full, {batches['batchesOnFlushTimer']} on the flush timer, "
                  f"{batches['batchesOnCheckpoint']} on a checkpoint; {len(run_checkpoints)} checkpoints in Flink's "
                  f"history from this run, the chain's synchronous part "
                  + ", ".join(f"{c['sync_ms']}" for c in run_checkpoints) + " ms, its alignment "
                  + ", ".join(f"{c['alignment_ms']}" for c in run_checkpoints) + " ms")
        seconds = done - start
        cpu_per_event = {k: 1e6 * c / m.records for k, (c, _) in used.items()}
        print(f"  CPU per event in this run (the components share {os.cpu_count()} cores):")
        for k, (c, rss) in sorted(used.items(), key=lambda kv: -kv[1][0]):
            print(f"    {k:11s} {cpu_per_event[k]:7.1f} us/event  {100 * c / seconds:4.0f}% of a core  "
                  f"peak resident {rss:6,.0f} MiB")
        total_us = sum(cpu_per_event.values())
        ceiling = os.cpu_count() * 1e6 / total_us
        print(f"    all        {total_us:7.1f} us/event: these {os.cpu_count()} cores can carry at most "
              f"{ceiling:,.0f} events/s end to end at this cost")
        if e2e_recording:
            packages = cost_by_package(e2e_recording, window=e2e_window)
            print(f"  where the job's Java threads spent this run (Java Flight Recorder, {100 * sum(s for s, _ in packages):.0f}"
                  f"% of its samples; each sample counted for the first frame from the top outside the JDK):")
            for share, package in packages:
                print(f"    {100 * share:5.1f}%  {package}")
            frames = top_frames(e2e_recording, window=e2e_window)
            print("  top frames of the job in this run (self time):")
            for share, frame in frames:
                print(f"    {100 * share:5.1f}%  {frame}")
            figures["end_to_end_job_by_package"] = [{"share": round(sh, 4), "package": p} for sh, p in packages]
            figures["end_to_end_job_top_frames"] = [{"share": round(sh, 4), "frame": f} for sh, f in frames]
        figures["end_to_end"] = {**figures.get("end_to_end", {}), "events_per_s": round(e2e), "records": m.records,
                                 "percent_of_store_bulk": round(100 * e2e / bulk),
                                 "percent_of_sample_bulk": round(100 * e2e / sample_bulk),
                                 "percent_of_one_writer_bulk": round(100 * e2e / one_writer),
                                 "seconds_all_in_kafka": round(kafka_at, 2),
                                 "seconds_all_stored": round(seconds, 2),
                                 "cpu_us_per_event": {k: round(v, 1) for k, v in cpu_per_event.items()},
                                 "peak_resident_mib": {k: round(r) for k, (_, r) in used.items()},
                                 "cpu_ceiling_events_per_s": round(ceiling)}

        # the latency goal's rate: 70% of what this run carried end to end (these machines' speed varies)
        rate = latency_rate or max(500, round(LATENCY_SHARE * e2e / 100) * 100)
        measure_latency(cfg, db, logs, stored, figures, lat_seconds, rate)
        measure_fleet(cfg, root, figures, stored, n_e2e)

        collector_rate = m.records / max(kafka_at, 1e-6)
        downstream_rate = m.records / max(done - start - 0, 1e-6)
        stages = {"collector (file -> Kafka)": collector_rate,
                  "Flink job alone (the whole job, counting sinks)": job_rate,
                  "store bulk insert of the same documents, alone": bulk,
                  "Flink job writing to the store (Kafka -> store, end to end)": downstream_rate}
        measure_receiver(cfg, root, figures, n_e2e, collector_rate)
        measure_flood_fairness(cfg, root, figures, n_e2e)
        stages = {k: v for k, v in stages.items() if v is not None}
        slowest = min(stages, key=stages.get)
        figures["stage_rates_per_s"] = {k: round(v) for k, v in stages.items()}
        print("stage rates: " + "; ".join(f"{k} {v:,.0f}/s" for k, v in stages.items()))
        # the slowest stage end to end is the job and the store together: storeWaitMillis says which of the two
        # the chain's task waited on (more than half of the run waiting for its batch in flight: the store)
        wait_share = writer["storeWaitMillis"] / 1000 / seconds if writer is not None else None
        if slowest.startswith("Flink job writing to the store") and wait_share is not None:
            if wait_share > 0.5:
                bottleneck = "the store's writes (Kafka -> store, end to end)"
                why = (f"the chain's task waited for its batch in flight {100 * wait_share:.0f}% of the run; the job's "
                       f"own work took the rest")
            else:
                bottleneck = "the Flink job's own work (Kafka -> store, end to end)"
                why = (f"the chain's task waited for the store only {100 * wait_share:.0f}% of the run; the rest was "
                       f"the job's own work")
            print(f"bottleneck: {bottleneck} at {stages[slowest]:,.0f}/s: {why}")
        else:
            bottleneck = slowest
            print(f"bottleneck: {bottleneck} at {stages[bottleneck]:,.0f}/s")
        figures["bottleneck"] = bottleneck
        if bulk < rate:
            print(f"  latency at {rate:,} events/s: the store's own bulk rate for these documents ({bulk:,.0f} docs/s, "
                  f"the machine to itself) is below the rate offered, so a backlog grows whatever the job does")
        if per_core is not None and per_core < 150_000:
            print("  flink job alone is below its target of 150,000 events/s per core")
        if e2e < 0.8 * bulk:
            others = total_us - cpu_per_event.get("store", 0)
            print(f"  end to end is below 80% of the store's bulk rate. That rate is the store's with the machine to "
                  f"itself; end to end, all components share its {os.cpu_count()} cores, and at {total_us:.0f} us of CPU "
                  f"per event (the store {cpu_per_event.get('store', 0):.0f}, the job {cpu_per_event.get('flink', 0):.0f}) "
                  f"they carry at most {ceiling:,.0f} events/s")
            # what 80% would take: the store at its own bulk cost per document, and everything else in what is left
            store_cores = 0.8 * bulk * bulk_store_us / 1e6
            left_us = (os.cpu_count() - store_cores) * 1e6 / (0.8 * bulk)
            print(f"  at 80% of the bulk rate ({0.8 * bulk:,.0f} events/s) the store alone, at its bulk cost of "
                  f"{bulk_store_us:.0f} us per document, would need {store_cores:.2f} of the {os.cpu_count()} cores; "
                  f"collector, Kafka and job would have {max(left_us, 0):.0f} us per event left, against the "
                  f"{others:.0f} they used in this run")
            figures["end_to_end"]["cpu_us_per_event_left_at_80_percent"] = round(max(left_us, 0))
        print("goals (ratios within this run: bench/README.md \"Goals\"):")
        for line in results.goals_lines(figures):
            print(line)
        if json_out:
            json_out.write_text(json.dumps(figures, indent=2) + "\n")
            print(f"figures written to {json_out}")
        print(f"figures kept in {results.save('pipeline', figures)}; ./auditpipe bench --tables puts them in bench/README.md")
        if keep_recordings:
            keep_recordings.mkdir(parents=True, exist_ok=True)
            for kept in (recording, e2e_recording):
                if kept and kept.exists():
                    shutil.copy2(kept, keep_recordings / kept.name)
            print(f"flight recordings kept in {keep_recordings}")
    finally:
        cli(cfg_file, "down")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
