"""The Flink job, run locally in an embedded MiniCluster (web UI on 127.0.0.1:flink.rest_port);
``flink.mode: cluster`` runs it on a local standalone cluster instead (stack/flink/cluster.py).

The job jar (pipelines/flink-job) is the same artifact a real cluster runs; locally it runs with
the Flink runtime (the jar's provided dependencies, copied into tools_dir) on its classpath and
Flink settings passed as ``flink.*`` entries of its properties file. Checkpoints are retained in
the state directory; every start restores from the newest complete one, so a killed job resumes
where its last checkpoint was and the idempotent sinks absorb the replay.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from auditpipe import bundle, paths, prereqs, progress
from auditpipe.errors import ComponentError
from auditpipe.evidence import signing
from auditpipe.process import refuse_taken_port, wait_until
from auditpipe.stack.components.base import Component, StatusRow, log4j2_properties, made_from
from auditpipe.stack.flink import flink_rest, job_settings
from auditpipe.stack.kafka import topics

FLINK_VERSION = "2.2.0"
#: how the job's log line begins that says it does not start from a snapshot (AuditPipelineJob.main)
REFUSAL = "auditpipe job refuses to start: "
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
    if not paths.IN_CHECKOUT:
        return made_from(FLINK_VERSION, paths.BUNDLE / bundle.RUNTIME_POM)
    return made_from(FLINK_VERSION, paths.PIPELINES / "pom.xml", paths.PIPELINES / "flink-job" / "pom.xml")


def _newest_source_mtime() -> float:
    newest = 0.0
    for p in paths.PIPELINES.rglob("*"):
        if p.is_file() and "target" not in p.parts and (p.suffix in (".java", ".xml", ".properties")):
            newest = max(newest, p.stat().st_mtime)
    return newest


def latest_checkpoint(checkpoint_dir: Path) -> Path | None:
    """The newest complete checkpoint (a chk-N folder with its _metadata written last), or a savepoint
    (``savepoints/``, FlinkJob.move_state) when no checkpoint was completed after it.

    Flink deletes older checkpoints while it runs, so a folder may vanish while we look.
    """
    best, best_time = None, -1.0
    for meta in [*checkpoint_dir.glob("*/chk-*/_metadata"),
                 *checkpoint_dir.glob(f"{job_settings.SAVEPOINTS}/savepoint-*/_metadata")]:
        try:
            t = meta.stat().st_mtime
        except FileNotFoundError:
            continue
        if t > best_time:
            best, best_time = meta.parent, t
    return best


def is_savepoint(restore: Path | None) -> bool:
    """Whether ``restore`` (latest_checkpoint's) is a savepoint in the canonical format, not a checkpoint."""
    return restore is not None and restore.parent.name == job_settings.SAVEPOINTS


class StateRefused(ComponentError):
    """The job did not start from its snapshot: it would have lost an operator's state (RestoreCheck)."""

    def __init__(self, reason: str):
        super().__init__(f"the Flink job did not start: {reason}")
        self.reason = reason


class FlinkJob(Component):
    name = "flink"
    #: whether `up` leaves the build alone while the job runs: the job's process reads the runtime
    #: folder a build may replace, and a new build runs through `upgrade`, which keeps the one to go back to
    runs_the_jar_file = True

    @property
    def runtime_lib(self) -> Path:
        return self.cfg.tools_dir / f"flink-{FLINK_VERSION}" / "lib"

    @property
    def checkpoint_dir(self) -> Path:
        """The same folder in both flink.mode's (stack/flink/cluster.py): either restores the other's."""
        d = self.cfg.state_dir / "flink" / "checkpoints"
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def rest_url(self) -> str:
        return flink_rest.base_url(self.cfg)

    def install(self) -> None:
        if not paths.IN_CHECKOUT:
            self._install_runtime_of_the_wheel()
            return
        newest = _newest_source_mtime()
        jar_fresh = all(j.exists() and j.stat().st_mtime >= newest for j in (paths.JOB_JAR, paths.BENCH_JAR))
        marker = self.runtime_lib / ".complete"
        # a pom change (a new provided jar, such as the file connector the archive needs) refreshes it
        runtime_ok = marker.exists() and marker.read_text().strip() == runtime_id()
        if jar_fresh and runtime_ok:
            return
        if self.runs_the_jar_file and self.is_managed() and self.proc.running():
            progress.info(f"  {self.name}: the job's code changed while it runs: `{paths.COMMAND} upgrade` builds the "
                          "new job and runs it with the running one's state")
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

    def _install_runtime_of_the_wheel(self) -> None:
        """An installed wheel brings its job jar; the Flink runtime comes from the pom beside it."""
        marker = self.runtime_lib / ".complete"
        if marker.exists() and marker.read_text().strip() == runtime_id():
            return
        prereqs.require_java17()
        mvn = prereqs.require_maven()
        if self.runtime_lib.exists():
            shutil.rmtree(self.runtime_lib)
        pom = self.cfg.tools_dir / "build" / "flink-runtime" / "pom.xml"
        pom.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.BUNDLE / bundle.RUNTIME_POM, pom)
        with progress.step(f"fetch the Flink {FLINK_VERSION} runtime"):
            progress.run_logged([mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                                 f"-DoutputDirectory={self.runtime_lib}"],
                                self.cfg.tools_dir / "install.log", "fetching the Flink runtime")
        marker.write_text(runtime_id())

    def job_properties(self, restore_from: Path | None, target: job_settings.Target | None = None,
                       backend: str | None = None) -> str:
        """The job's properties file (stack/flink/job_settings.py): for the local MiniCluster, or with
        ``target`` for a Flink cluster (the deployment); ``backend``: the state backend, when not the configured one."""
        target = target or job_settings.Target(store_uri=self.cfg.store_uri, checkpoint_dir=self.checkpoint_dir.as_uri(),
                                               archive_path=self.cfg.archive_path.as_uri(), local=True,
                                               signing_key_file=self.signing_key_file(),
                                               link_key_file=self.link_key_file())
        return job_settings.properties_text(job_settings.job_properties(self.cfg, target, restore_from, backend))

    def signing_key_file(self) -> str:
        """The heads' signing key on this machine (config chain), made when absent (docs/security.md)."""
        if signing.make_key_pair(self.cfg.signing_key_file, self.cfg.public_key_file):
            progress.info(f"  flink: made the chain heads' signing key {self.cfg.signing_key_file} "
                          f"(public key {self.cfg.public_key_file})")
        return str(self.cfg.signing_key_file)

    def link_key_file(self) -> str:
        """The links' key on this machine (config chain), made when absent (docs/security.md)."""
        if signing.make_link_key(self.cfg.link_key_file):
            progress.info(f"  flink: made the chain links' key {self.cfg.link_key_file}")
        return str(self.cfg.link_key_file)

    def start(self, jar: Path | None = None) -> None:
        """Runs the job (``jar``: another build of it than the checkout's) from its newest snapshot."""
        if self.proc.running():
            return
        self._refuse_taken_ports("rest_port")
        java = prereqs.require_java17()
        restore = self._checkpoint_to_restore()
        backend = job_settings.choose_state_backend(self.cfg, self.checkpoint_dir, restore is not None,
                                                    is_savepoint(restore))
        # RocksDB's working files of a job that was killed: the state comes back from the checkpoint
        shutil.rmtree(job_settings.local_tmp_dir(self.cfg), ignore_errors=True)
        props = self._write_job_properties(self.job_properties(restore, backend=backend))
        log4j = self.home / "log4j2.properties"
        log4j.write_text(LOG4J2)
        if restore:
            progress.info(f"  flink: restoring from {'savepoint' if is_savepoint(restore) else 'checkpoint'} {restore}")
        running = self._running_copy(jar or paths.JOB_JAR)
        self.proc.start([java, f"-Xmx{self.cfg.flink['heap']}", *JAVA_OPENS,
                         f"-Dlog4j2.configurationFile={log4j}",
                         "-cp", f"{running}:{self.runtime_lib}/*",
                         "io.auditpipe.flink.AuditPipelineJob", "--config", str(props)])
        try:
            wait_until(lambda: self.job_state() == "RUNNING", 120, "waiting for the Flink job to run", self.proc)
        except ComponentError:
            refusal = self.refusal()
            if refusal is None:
                raise
            raise StateRefused(refusal) from None
        self._move_state_if_needed(backend)

    def restart(self) -> None:
        """The build that ran, not a newer build of the checkout: a new build runs by `up` or
        `upgrade`, and after an upgrade the new job refused, the checkout's build is the one that refuses."""
        self.start(jar=self.jar_that_ran())

    def jar_that_ran(self) -> Path | None:
        """The copy of the jar the job last ran (``_running_copy``); None before its first start."""
        ran = self.home / "job.jar"
        return ran if ran.exists() else None

    def _running_copy(self, jar: Path) -> Path:
        """The job runs a copy of its jar in its home: a new build (or an installed wheel's upgrade)
        replaces the source file, never the one under the running process, and upgrade keeps it."""
        running = self.home / "job.jar"
        if jar.resolve() != running.resolve():
            tmp = running.with_suffix(".jar.tmp")
            shutil.copy2(jar, tmp)
            tmp.replace(running)
        return running

    def _move_state_if_needed(self, running_on: str) -> None:
        if running_on != job_settings.state_backend(self.cfg):
            self.move_state(running_on)

    def upgrade(self, build: Callable[[], None]) -> str:
        """Runs the job ``build`` makes in place of the running one, with its state: the running job
        stops with a savepoint in Flink's canonical format and the new one starts from it. A new job
        that refuses the state (it lacks an operator whose state the savepoint holds: RestoreCheck)
        leaves the previous build running again from the same savepoint, and the refusal is raised.
        Returns the savepoint's location."""
        location, kept = self._stop_for_upgrade(next(j["jid"] for j in self.jobs() if j["state"] == "RUNNING"))
        self._wait_ended()
        build()
        try:
            self.start()
        except StateRefused as refused:
            self.proc.stop()
            progress.info(f"  {self.name}: the new job refused the state; the previous one runs again from it")
            self.start(jar=kept)
            raise ComponentError(f"the new job did not start: {refused.reason} The previous job runs again from "
                                 f"{location}.") from None
        return location

    def _stop_for_upgrade(self, job: str) -> tuple[str, Path]:
        """Stops ``job`` with a savepoint and keeps the build that ran (the next start replaces the
        running copy); returns the savepoint's location and the kept jar."""
        try:
            location = self._stop_with_savepoint(job)
        except (OSError, RuntimeError) as e:
            raise ComponentError(f"the running job could not stop with a savepoint, and runs on as it was: {e}. "
                                 f"Try again once `{paths.COMMAND} status` shows it healthy.") from None
        progress.info(f"  {self.name}: stopped with savepoint {location}")
        kept = self.home / "previous-job.jar"
        shutil.copy2(self.home / "job.jar", kept)
        return location, kept

    def _stop_with_savepoint(self, job: str) -> str:
        """Stops ``job`` with a savepoint in Flink's canonical format once every task of it runs (a
        savepoint needs them all; a job reported RUNNING may still be deploying them)."""
        wait_until(lambda: self._every_task_running(job), 120, "waiting for every task of the job to run", self.proc)
        return flink_rest.stop_with_savepoint(self.cfg, job, self.checkpoint_dir / job_settings.SAVEPOINTS)

    def _every_task_running(self, job: str) -> bool:
        vertices = flink_rest.call(self.cfg, f"/jobs/{job}")["vertices"]
        return all(v["status"] == "RUNNING" and not any(n for state, n in v["tasks"].items() if state != "RUNNING")
                   for v in vertices)

    def refusal(self) -> str | None:
        """The job's reason not to start from a snapshot (io.auditpipe.flink.state.RestoreCheck), if its
        log's last run gave one."""
        try:
            lines = self.proc.log_file.read_text(errors="replace").splitlines()
        except OSError:
            return None
        starts = [n for n, line in enumerate(lines) if line.startswith("=== ") and " starting: " in line]
        said = [line for line in lines[starts[-1] if starts else 0:] if line.startswith(REFUSAL)]
        return said[-1][len(REFUSAL):] if said else None

    def move_state(self, written_by: str) -> None:
        """Moves the running job's state from the state backend ``written_by`` to the configured one:
        the job stops with a savepoint in Flink's canonical format, which either backend restores (a
        checkpoint restores only on the backend that wrote it), and runs again from it. The
        savepoint is the newest snapshot until the job completes a checkpoint, so a kill in between
        restores from it (latest_checkpoint)."""
        configured = job_settings.state_backend(self.cfg)
        job = next(j["jid"] for j in self.jobs() if j["state"] == "RUNNING")
        progress.info(f"  {self.name}: moving the job's state from {written_by} to {configured}: stopping it "
                      f"with a savepoint in Flink's canonical format, then running it from that savepoint")
        try:
            location = self._stop_with_savepoint(job)
        except (OSError, RuntimeError, ComponentError) as e:
            # the job goes on on the backend it restored on; the next start tries again
            progress.info(f"  {self.name}: the job stays on {written_by} for now: {e}")
            return
        progress.info(f"  {self.name}: savepoint {location}")
        self._run_again_after_stop()

    def _run_again_after_stop(self) -> None:
        """The MiniCluster's process ends with its job: start it again (from the newest snapshot), the
        same build."""
        self._wait_ended()
        self.restart()

    def _wait_ended(self) -> None:
        """The process of a job stopped with a savepoint, ended."""
        try:
            wait_until(lambda: not self.proc.running() or self.job_state() == "FINISHED", 60,
                       "waiting for the stopped job to finish")
        except ComponentError:
            pass  # stopped below all the same: the savepoint is complete
        self.proc.stop()

    def _refuse_taken_ports(self, *keys: str) -> None:
        for key in keys:
            refuse_taken_port("127.0.0.1", self.cfg.flink[key], f"flink.{key}", self.cfg.file)

    def _checkpoint_to_restore(self) -> Path | None:
        """The newest complete checkpoint (or savepoint), the folders of earlier runs pruned."""
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
        return flink_rest.call(self.cfg, "/jobs/overview", timeout=3)["jobs"]

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
            lag = topics.consumer_lag(self.cfg.kafka_client, topics.topic_name("raw"), job_settings.job_group_id())
            lag_text = f", lag {lag} records (as of the last checkpoint)"
        except Exception as e:  # noqa: BLE001 - e.g. no offsets committed yet right after the start
            lag_text = f", lag not available yet ({str(e)[:60]})"
        return StatusRow(self.name, pid, self.rest_url, "ok" if state == "RUNNING" else "unhealthy",
                         f"job {state or 'not answering'}{lag_text}")
