"""The job on a local Flink standalone session cluster (``flink.mode: cluster``).

A JobManager (``StandaloneSessionClusterEntrypoint``) and ``flink.taskmanagers`` TaskManagers
(``TaskManagerRunner``), each a JVM of its own, started from the same Flink jars as the
MiniCluster (tools_dir/flink-2.2.0/lib, from Maven Central) plus the two libraries the Flink
distribution bundles and no Maven artifact of Flink brings (commons-lang3, commons-math3: Flink's
flink-dist is not served here). Their JVM options come from Flink's own memory model, through
the ``BashJavaUtils`` that Flink's start scripts call; one ``config.yaml`` serves them all.

The job jar is uploaded through the JobManager's REST API (``POST /jars/upload``), which answers
only the holder of the stack's client key (mutual TLS, stack/flink/flink_rest.py), and run from
there (``POST /jars/<id>/run``) with the same options file as the MiniCluster's, restoring from
the newest retained checkpoint (``savepointPath``). Checkpoints go to the same folder in both
modes, so ``flink.mode`` can change between runs and the job carries on where it was.

What survives what:
- a TaskManager killed: the job fails over within the JobManager (restart strategy) to the
  slots left (each TaskManager has ``flink.parallelism`` slots), restoring its last completed
  checkpoint; the supervisor starts the TaskManager again, which registers by itself;
- the JobManager killed: a standalone session cluster keeps no job across that (no HA
  services); the supervisor starts it again and this module submits the job anew from the newest
  checkpoint, as the MiniCluster does after a kill. The TaskManagers reconnect by themselves.

Start order (``components.all_components``): TaskManagers, then the JobManager, whose start
waits for the job to run, which needs their slots. Everything binds to 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import uuid
from collections.abc import Callable
from pathlib import Path

from auditpipe import prereqs, progress
from auditpipe.config import Config
from auditpipe.errors import ComponentError
from auditpipe.process import wait_until
from auditpipe.stack.components.base import Component, StatusRow
from auditpipe.stack.flink import flink_rest, job_settings
from auditpipe.stack.flink.job import FLINK_VERSION, JAVA_OPENS, LOG4J2, REFUSAL, FlinkJob, is_savepoint

# What flink-dist bundles that no Flink artifact on Maven Central depends on (versions of Flink 2.2.0's pom)
DIST_LIBRARIES = ("org.apache.commons:commons-lang3:3.18.0", "org.apache.commons:commons-math3:3.6.1")
ACTIVE_JOB_STATES = ("INITIALIZING", "CREATED", "RUNNING", "RESTARTING", "FAILING", "CANCELLING", "RECONCILING")
JOB_NAME = "auditpipe"


def cluster_home(cfg: Config) -> Path:
    d = cfg.state_dir / "flink-cluster"
    d.mkdir(parents=True, exist_ok=True)
    return d


def dist_lib(cfg: Config) -> Path:
    return cfg.tools_dir / f"flink-{FLINK_VERSION}" / "cluster-lib"


def classpath(cfg: Config) -> str:
    return f"{cfg.tools_dir / f'flink-{FLINK_VERSION}' / 'lib'}/*:{dist_lib(cfg)}/*"


def install_dist_libraries(cfg: Config) -> None:
    marker = dist_lib(cfg) / ".complete"
    if marker.exists() and marker.read_text().strip() == " ".join(DIST_LIBRARIES):
        return
    mvn = prereqs.require_maven()
    dist_lib(cfg).mkdir(parents=True, exist_ok=True)
    with progress.step("fetch the libraries of the Flink distribution for the local cluster"):
        for artifact in DIST_LIBRARIES:
            progress.run_logged([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}",
                                 f"-DoutputDirectory={dist_lib(cfg)}"],
                                cfg.tools_dir / "install.log", f"fetching {artifact}")
    marker.write_text(" ".join(DIST_LIBRARIES))


def write_cluster_config(cfg: Config) -> Path:
    """conf/config.yaml for the JobManager and every TaskManager; returns the conf folder."""
    f = cfg.flink
    home = cluster_home(cfg)
    conf = home / "conf"
    conf.mkdir(exist_ok=True)
    (home / "tmp").mkdir(exist_ok=True)
    settings = {
        "jobmanager.rpc.address": "127.0.0.1",
        "jobmanager.rpc.port": f["rpc_port"],
        "jobmanager.bind-host": "127.0.0.1",
        "jobmanager.memory.process.size": "768m",
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "rest.port": f["rest_port"],
        "web.upload.dir": str(home / "upload"),
        "taskmanager.host": "127.0.0.1",
        "taskmanager.bind-host": "127.0.0.1",
        "taskmanager.numberOfTaskSlots": f["parallelism"],
        "taskmanager.memory.process.size": f["taskmanager_memory"],
        # the job keeps its keyed state in RocksDB, whose memory is Flink's managed memory
        "taskmanager.memory.managed.fraction": 0.25,
        "taskmanager.memory.network.max": "128m",
        "parallelism.default": f["parallelism"],
        "io.tmp.dirs": str(home / "tmp"),
        # a killed TaskManager is noticed within seconds, not Flink's default 50
        "heartbeat.interval": 2000,
        "heartbeat.timeout": 10000,
        # no jar upload or run through REST except by the holder of the stack's client key (the
        # upload this module makes): REST is mutual TLS (stack/flink/flink_rest.py); cancel likewise
        "web.cancel.enable": "false",
        # and the JobManager's and TaskManagers' own connections (RPC, BLOB, data exchange): mutual TLS too
        **flink_rest.cluster_settings(cfg),
    }
    config_file = conf / "config.yaml"
    config_file.touch(mode=0o600)  # holds the REST keystore's password
    config_file.chmod(0o600)
    config_file.write_text("".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n"
                                              for k, v in settings.items()))
    (conf / "log4j2.properties").write_text(LOG4J2)
    return conf


def resource_params(java: str, cfg: Config, conf: Path, which: str) -> tuple[list[str], list[str]]:
    """(JVM options, dynamic -D properties) from Flink's memory model, as Flink's start scripts get them."""
    import subprocess

    r = subprocess.run([java, "-cp", classpath(cfg), "org.apache.flink.runtime.util.bash.BashJavaUtils",
                        f"GET_{which}_RESOURCE_PARAMS", "--configDir", str(conf)],
                       capture_output=True, text=True, timeout=120)
    results = [line.split(":", 1)[1] for line in r.stdout.splitlines() if line.startswith("BASH_JAVA_UTILS_EXEC_RESULT:")]
    if r.returncode != 0 or len(results) < 2:
        raise ComponentError(f"Flink could not work out the {which} memory from {conf / 'config.yaml'} "
                             f"(check flink.taskmanager_memory):\n{(r.stdout + r.stderr)[-2000:]}")
    return results[-2].split(), results[-1].split()


class FlinkTaskManager(Component):
    """One TaskManager of the local cluster, ``flink-taskmanager-<n>``."""

    def __init__(self, cfg: Config, number: int):
        self.number = number
        self.name = f"flink-taskmanager-{number}"
        super().__init__(cfg)

    def start(self) -> None:
        if self.proc.running():
            return
        java = prereqs.require_java17()
        conf = write_cluster_config(self.cfg)
        jvm, dynamic = resource_params(java, self.cfg, conf, "TM")
        self.proc.start([java, *jvm, *JAVA_OPENS, f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
                         "-cp", classpath(self.cfg), "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                         "--configDir", str(conf), *dynamic, "-D", f"taskmanager.resource-id={self.name}"])
        # registering needs the JobManager, which may start after this: wait for the JVM to be up only
        wait_until(lambda: "Starting TaskManager with ResourceID" in self.proc.log_file.read_text(errors="replace")
                   .rsplit("=== ", 1)[-1], 60, f"waiting for {self.name} to start", self.proc)

    def registered(self) -> dict | None:
        """This TaskManager as the JobManager lists it, or None."""
        answer = flink_rest.get(self.cfg, "/taskmanagers", timeout=3)
        return None if answer is None else next((t for t in answer["taskmanagers"] if t["id"] == self.name), None)

    def healthy(self) -> bool:
        return self.registered() is not None

    def status(self) -> StatusRow:
        pid = self.proc.pid()
        if pid is None:
            return StatusRow(self.name, None, "-", "stopped", "")
        tm = self.registered()
        if tm is None:
            return StatusRow(self.name, pid, "-", "unhealthy", "not registered with the JobManager")
        return StatusRow(self.name, pid, "-", "ok",
                         f"registered, {tm['slotsNumber'] - tm['freeSlots']} of {tm['slotsNumber']} slots in use")


class FlinkJobManager(FlinkJob):
    """The JobManager of the local cluster, and the job it runs (submitted by ``start``)."""

    name = "flink-jobmanager"
    runs_the_jar_file = False

    def install(self) -> None:
        super().install()
        install_dist_libraries(self.cfg)

    def start(self, jar: Path | None = None) -> None:
        if not self.proc.running():
            self._refuse_taken_ports("rest_port", "rpc_port")
            java = prereqs.require_java17()
            conf = write_cluster_config(self.cfg)
            shutil.rmtree(cluster_home(self.cfg) / "upload", ignore_errors=True)  # jars of earlier runs
            jvm, dynamic = resource_params(java, self.cfg, conf, "JM")
            self.proc.start([java, *jvm, *JAVA_OPENS, f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
                             "-cp", classpath(self.cfg), "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                             "--configDir", str(conf), *dynamic])
            wait_until(lambda: self._get("/overview") is not None, 120, "waiting for the JobManager's REST API", self.proc)
        running_on = None
        if not self.active_job():
            running_on = self.submit(jar)[1]
        self._wait_running()
        if running_on is not None:
            self._move_state_if_needed(running_on)

    def _wait_running(self) -> None:
        wait_until(lambda: self.job_state() == "RUNNING", 180,
                   f"waiting for the job to run on the cluster (TaskManagers registered: {self._taskmanager_count()})",
                   self.proc)

    def _run_again_after_stop(self) -> None:
        """The cluster outlives its job: run the job again (from the newest snapshot)."""
        wait_until(lambda: self.active_job() is None, 120, "waiting for the stopped job to finish", self.proc)
        self.submit(self.jar_that_ran())  # the same build
        self._wait_running()

    def _get(self, path: str):
        return flink_rest.get(self.cfg, path)

    def _post(self, path: str, body: bytes, content_type: str, timeout: float = 120) -> dict:
        try:
            return flink_rest.call(self.cfg, path, "POST", body, content_type, timeout)
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            try:
                detail = "\n".join(json.loads(detail).get("errors", [detail]))
            except ValueError:
                pass
            raise ComponentError(f"the JobManager refused POST {path} ({e.code}):\n{detail[:3000]}") from None

    def _taskmanager_count(self) -> int:
        return len((self._get("/taskmanagers") or {}).get("taskmanagers", []))

    def active_job(self) -> dict | None:
        jobs = (self._get("/jobs/overview") or {}).get("jobs", [])
        return next((j for j in jobs if j["name"] == JOB_NAME and j["state"] in ACTIVE_JOB_STATES), None)

    def upgrade(self, build: Callable[[], None]) -> str:
        """FlinkJob.upgrade on the cluster, which outlives the job: the running job stops with a
        savepoint, the new jar is submitted from it; a new job that refuses the state (its main, in
        the JobManager, throws the refusal back through the REST API) leaves the previous jar
        submitted again from the same savepoint."""
        location, kept = self._stop_for_upgrade(self.active_job()["jid"])
        wait_until(lambda: self.active_job() is None, 120, "waiting for the stopped job to finish", self.proc)
        build()
        try:
            self.submit()
        except ComponentError as e:
            reason = next((line.split(REFUSAL, 1)[1] for line in str(e).splitlines() if REFUSAL in line), None)
            if reason is None:
                raise
            progress.info(f"  {self.name}: the new job refused the state; the previous one runs again from it")
            self.submit(jar=kept)
            self._wait_running()
            raise ComponentError(f"the new job did not start: {reason} The previous job runs again from "
                                 f"{location}.") from None
        self._wait_running()
        return location

    def submit(self, jar: Path | None = None) -> tuple[str, str]:
        """Uploads the job jar (``jar``: another build of it than the checkout's) and runs it, from the
        newest checkpoint (or savepoint) if there is one; returns the job id and the state backend it
        runs on."""
        from auditpipe import paths

        restore = self._checkpoint_to_restore()
        target = job_settings.Target(store_uri=self.cfg.store_uri, checkpoint_dir=self.checkpoint_dir.as_uri(),
                                     archive_path=self.cfg.archive_path.as_uri(), local=False,
                                     signing_key_file=self.signing_key_file(), link_key_file=self.link_key_file())
        backend = job_settings.choose_state_backend(self.cfg, self.checkpoint_dir, restore is not None,
                                                    is_savepoint(restore))
        # the restore goes in the run request (savepointPath), not in the options
        props = self._write_job_properties(self.job_properties(None, target, backend=backend))
        boundary = uuid.uuid4().hex
        submitted = self._running_copy(jar or paths.JOB_JAR)
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"{paths.JOB_JAR.name}\"\r\n"
                "Content-Type: application/x-java-archive\r\n\r\n").encode() + submitted.read_bytes() + \
            f"\r\n--{boundary}--\r\n".encode()
        jar_id = Path(self._post("/jars/upload", body, f"multipart/form-data; boundary={boundary}")["filename"]).name
        run = {"programArgsList": ["--config", str(props)], "parallelism": self.cfg.flink["parallelism"]}
        if restore:
            progress.info(f"  {self.name}: restoring the job from "
                          f"{'savepoint' if is_savepoint(restore) else 'checkpoint'} {restore}")
            # the job reads the snapshot before it runs: it refuses to start without the state of any
            # operator but a sink it no longer has (RestoreCheck), so the cluster may leave sinks' behind
            run["programArgsList"] += ["--restored-from", restore.as_uri()]
            run.update(savepointPath=restore.as_uri(), allowNonRestoredState=True)
        return self._post(f"/jars/{jar_id}/run", json.dumps(run).encode(), "application/json")["jobid"], backend

    def jobs(self) -> list[dict]:
        return [j for j in super().jobs() if j["name"] == JOB_NAME]

    def status(self) -> StatusRow:
        row = super().status()
        if row.pid is not None:
            overview = self._get("/overview") or {}
            row.detail = (f"{row.detail}; {overview.get('taskmanagers', 0)} TaskManager(s), "
                          f"{overview.get('slots-available', 0)} of {overview.get('slots-total', 0)} slots free")
        return row
