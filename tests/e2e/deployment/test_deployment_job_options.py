"""The options `auditpipe init` writes for the deployment's Flink cluster pass the job's own
validation (`AuditPipelineJob --check-options`, the same JobOptions.load the job runs at start),
with the environment docker-compose.yml gives the init service. Needs the built job jar and the
Flink runtime (what `auditpipe setup` installs), not the stack."""

from __future__ import annotations

import subprocess

import pytest
from helpers import compose_project

from auditpipe import config, paths, prereqs
from auditpipe.stack import deployment
from auditpipe.stack.flink.job import FlinkJob

pytestmark = pytest.mark.e2e


def test_the_deployments_job_options_pass_the_jobs_validation(tmp_path, monkeypatch):
    project = compose_project.project(compose_project.build_compose_check(tmp_path))
    for key, value in project["services"]["init"]["environment"].items():
        monkeypatch.setenv(key, value)
    cfg = config.load(compose_project.DEPLOY_CONFIG)
    props = deployment.write_job_properties(
        cfg, tmp_path / "job.properties", deployment.cluster_target(cfg, "file:///flink/checkpoints", "file:///flink/archive"))
    runtime = FlinkJob(config.load(paths.DEFAULT_CONFIG)).runtime_lib
    assert paths.JOB_JAR.is_file() and runtime.is_dir(), "run ./auditpipe setup first (it builds the job)"
    java = prereqs.require_java17()

    def check(file) -> subprocess.CompletedProcess:
        return subprocess.run([java, "-cp", f"{paths.JOB_JAR}:{runtime}/*", "io.auditpipe.flink.AuditPipelineJob",
                               "--config", str(file), "--check-options"], capture_output=True, text=True, timeout=120)

    r = check(props)
    assert r.returncode == 0 and "the job's options are valid" in r.stdout, r.stderr
    # the check can fail: a bad value is refused, naming the key
    bad = tmp_path / "bad.properties"
    bad.write_text(props.read_text().replace("checkpoint.interval=", "checkpoint.interval=soon"))
    r = check(bad)
    assert r.returncode == 2 and "checkpoint.interval" in r.stderr, (r.stdout, r.stderr)
