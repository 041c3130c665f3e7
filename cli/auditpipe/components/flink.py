"""The Flink job, run locally in an embedded MiniCluster (web UI on 127.0.0.1:flink.rest_port);
``flink.mode: cluster`` runs it on a local standalone cluster instead (components/flink_cluster.py).

The job jar (pipelines/flink-job) is the same artifact a real cluster runs; locally it runs with
the Flink runtime (the jar's provided dependencies, copied into tools_dir) on its classpath and
Flink settings passed as ``flink.*`` entries of its properties file. Checkpoints are retained in
the state directory; every start restores from the newest complete one, so a killed job resumes
where its last checkpoint was and the idempotent sinks absorb the replay.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from auditpipe import compliance, limits, paths, prereqs, progress, topics
from auditpipe.components.base import Component, StatusRow, log4j2_properties, made_from, properties_value
from auditpipe.config import duration_seconds
from auditpipe.process import refuse_taken_port, wait_until

FLINK_VERSION = "2.2.0"
JOB_GROUP_ID = "auditpipe-flink"
JAVA_OPENS = [
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.time=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
]
# MetricGroup: Flink 2.2's sink committers register their pendingCommittables gauge again at every
# checkpoint (FLINK-35321, fixed after 2.2), a "Name collision" warning each time, 20 a checkpoint
# here: two thirds of a day's log. SourceCoordinator: a line per source per checkpoint.
LOG4J2 = log4j2_properties({"org.apache.kafka": "WARN", "org.mongodb": "WARN",
                            "org.apache.flink.metrics.MetricGroup": "ERROR",
                            "org.apache.flink.runtime.source.coordinator.SourceCoordinator": "WARN"})


def runtime_id() -> str:
    """What the runtime folder was made from: the Flink version and the poms that list its jars."""
    return made_from(FLINK_VERSION, paths.PIPELINES / "pom.xml", paths.PIPELINES / "flink-job" / "pom.xml")


def _newest_source_mtime() -> float:
    newest = 0.0
    for p in paths.PIPELINES.rglob("*"):
        if p.is_file() and "target" not in p.parts and (p.suffix in (".java", ".xml", ".properties")):
            newest = max(newest, p.stat().st_mtime)
    return newest


def latest_checkpoint(checkpoint_dir: Path) -> Path | None:
    """The newest complete checkpoint (a chk-N folder with its _metadata written last).

    Flink deletes older checkpoints while it runs, so a folder may vanish while we look.
    """
    best, best_time = None, -1.0
    for meta in checkpoint_dir.glob("*/chk-*/_metadata"):
        try:
            t = meta.stat().st_mtime
        except FileNotFoundError:
            continue
        if t > best_time:
            best, best_time = meta.parent, t
    return best


@dataclass(frozen=True)
class ClusterTarget:
    """Where the job runs when it is not the local MiniCluster (cli/auditpipe/deployment.py)."""
    store_uri: str  # the job's own store user
    checkpoint_dir: str  # a URI every JobManager and TaskManager reaches, e.g. file:///flink/checkpoints
    archive_path: str  # a URI every TaskManager reaches


class FlinkJob(Component):
    name = "flink"

    @property
    def runtime_lib(self) -> Path:
        return self.cfg.tools_dir / f"flink-{FLINK_VERSION}" / "lib"

    @property
    def checkpoint_dir(self) -> Path:
        """The same folder in both flink.mode's (components/flink_cluster.py): either restores the other's."""
        d = self.cfg.state_dir / "flink" / "checkpoints"
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.cfg.flink['rest_port']}"

    def install(self) -> None:
        newest = _newest_source_mtime()
        jar_fresh = all(j.exists() and j.stat().st_mtime >= newest for j in (paths.JOB_JAR, paths.BENCH_JAR))
        marker = self.runtime_lib / ".complete"
        # a pom change (a new provided jar, such as the file connector the archive needs) refreshes it
        runtime_ok = marker.exists() and marker.read_text().strip() == runtime_id()
        if jar_fresh and runtime_ok:
            return
        prereqs.require_java17()
        mvn = prereqs.require_maven()
        goals = ["-DskipTests", "package"]
        if not runtime_ok:
            if self.runtime_lib.exists():
                shutil.rmtree(self.runtime_lib)
            goals += ["dependency:copy-dependencies", "-DincludeScope=provided", f"-DoutputDirectory={self.runtime_lib}"]
        title = "build the Flink job" + ("" if runtime_ok else f" and fetch the Flink {FLINK_VERSION} runtime")
        with progress.step(title):
            progress.run_logged([mvn, "-q", "-B", "-f", str(paths.PIPELINES / "pom.xml"), *goals],
                                self.cfg.tools_dir / "install.log", "building the Flink job")
        if not runtime_ok:
            marker.write_text(runtime_id())

    def job_properties(self, restore_from: Path | None, cluster: "ClusterTarget | None" = None) -> str:
        """The job's options (docs/job-options.md) from the configuration: for the local MiniCluster,
        or with ``cluster`` for a Flink cluster (the deployment), whose own configuration says where
        the REST endpoint is, and whose checkpoints and store user differ."""
        f = self.cfg.flink
        s = self.cfg.store
        entries = {
            "kafka.bootstrap-servers": self.cfg.kafka_bootstrap,
            "kafka.topic.raw": topics.topic_name("raw"),
            "kafka.topic.dead-letter": topics.topic_name("deadletter"),
            "kafka.topic.alerts": topics.topic_name("alerts"),
            "kafka.group-id": JOB_GROUP_ID,
            "kafka.dead-letter.max-message-bytes": str(limits.from_config(self.cfg).dead_letter_message_bytes),
            "store.uri": cluster.store_uri if cluster else self.cfg.store_uri,
            "store.database": s["database"],
            "store.collection.events": s["events_collection"],
            "store.collection.stats": s["stats_collection"],
            "store.collection.dead-letters": s["dead_letter_collection"],
            "store.collection.alerts": s["alerts_collection"],
            "store.collection.chain-heads": s["chain_heads_collection"],
            "store.collection.servers": s["servers_collection"],
            "store.collection.kafka-lag": s["kafka_lag_collection"],
            "checkpoint.interval": f"{int(duration_seconds(f['checkpoint_interval']) * 1000)}ms",
            "flink.rest.address": "127.0.0.1",
            "flink.rest.bind-address": "127.0.0.1",
            "flink.rest.port": str(f["rest_port"]),
            "flink.parallelism.default": str(f["parallelism"]),
            "flink.execution.checkpointing.dir": cluster.checkpoint_dir if cluster else self.checkpoint_dir.as_uri(),
            "flink.execution.checkpointing.num-retained": "2",
            "flink.restart-strategy.type": "exponential-delay",
            "flink.taskmanager.memory.network.max": "128m",
        }
        if cluster:
            for key in ("flink.rest.address", "flink.rest.bind-address", "flink.rest.port"):
                del entries[key]  # the cluster's own configuration
        if self.cfg.archive["enabled"]:
            entries["archive.path"] = cluster.archive_path if cluster else self.cfg.archive_path.as_uri()
        for key, value in self.cfg.kafka_java_client.items():
            if key != "bootstrap.servers":
                entries[f"kafka.client.{key}"] = value  # security: TLS and SASL (config kafka.security)
        entries.update(compliance.job_properties(self.cfg))
        entries.update(compliance.alert_job_properties(self.cfg))
        for key, value in f["job_options"].items():
            entries[key] = str(value).lower() if isinstance(value, bool) else str(value)
        if restore_from is not None:
            entries["flink.execution.state-recovery.path"] = restore_from.as_uri()
            # a checkpoint of an earlier version may hold state of an operator this version no longer has
            # (0.1 -> archive: count-each-event-once became first-copies-in-chain): restore the rest
            # rather than refuse to start; every kept operator keeps its uid, so nothing else is dropped
            entries["flink.execution.state-recovery.ignore-unclaimed-state"] = "true"
        return "".join(f"{k}={properties_value(v)}\n" for k, v in entries.items())

    def start(self) -> None:
        if self.proc.running():
            return
        self._refuse_taken_ports("rest_port")
        java = prereqs.require_java17()
        restore = self._checkpoint_to_restore()
        props = self._write_job_properties(self.job_properties(restore))
        log4j = self.home / "log4j2.properties"
        log4j.write_text(LOG4J2)
        if restore:
            progress.info(f"  flink: restoring from checkpoint {restore}")
        self.proc.start([java, f"-Xmx{self.cfg.flink['heap']}", *JAVA_OPENS,
                         f"-Dlog4j2.configurationFile={log4j}",
                         "-cp", f"{paths.JOB_JAR}:{self.runtime_lib}/*",
                         "io.auditpipe.flink.AuditPipelineJob", "--config", str(props)])
        wait_until(lambda: self.job_state() == "RUNNING", 120, "waiting for the Flink job to run", self.proc)

    def _refuse_taken_ports(self, *keys: str) -> None:
        for key in keys:
            refuse_taken_port("127.0.0.1", self.cfg.flink[key], f"flink.{key}", self.cfg.file)

    def _checkpoint_to_restore(self) -> Path | None:
        """The newest complete checkpoint, the folders of earlier runs pruned."""
        restore = latest_checkpoint(self.checkpoint_dir)
        self._prune_old_checkpoints(keep=restore)
        return restore

    def _write_job_properties(self, text: str) -> Path:
        props = self.home / "job.properties"
        props.touch(mode=0o600)  # may hold the Kafka password and the store URI's
        props.chmod(0o600)
        props.write_text(text)
        return props

    def _prune_old_checkpoints(self, keep: Path | None) -> None:
        """Drops the checkpoint folders of earlier job runs, keeping the one being restored."""
        if keep is None or not self.checkpoint_dir.exists():
            return
        for job_dir in self.checkpoint_dir.iterdir():
            if job_dir.is_dir() and job_dir != keep.parent:
                shutil.rmtree(job_dir, ignore_errors=True)

    def jobs(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.rest_url}/jobs/overview", timeout=3) as r:
            return json.loads(r.read())["jobs"]

    def job_state(self) -> str | None:
        try:
            jobs = self.jobs()
        except Exception:  # noqa: BLE001
            return None
        states = [j["state"] for j in jobs]
        return "RUNNING" if "RUNNING" in states else (states[0] if states else None)

    def healthy(self) -> bool:
        return self.job_state() == "RUNNING"

    def status(self) -> StatusRow:
        pid = self.proc.pid()
        if pid is None:
            return StatusRow(self.name, None, self.rest_url, "stopped", "")
        state = self.job_state()
        try:
            lag = topics.consumer_lag(self.cfg.kafka_client, topics.topic_name("raw"), JOB_GROUP_ID)
            lag_text = f", lag {lag} records (as of the last checkpoint)"
        except Exception as e:  # noqa: BLE001 - e.g. no offsets committed yet right after the start
            lag_text = f", lag not available yet ({str(e)[:60]})"
        return StatusRow(self.name, pid, self.rest_url, "ok" if state == "RUNNING" else "unhealthy",
                         f"job {state or 'not answering'}{lag_text}")
