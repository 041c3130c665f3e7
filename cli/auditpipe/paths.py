"""Where things are in the repository checkout."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
PIPELINES = REPO / "pipelines"
COLLECTORS = REPO / "collectors"
DEPLOY_LOCAL = REPO / "deploy" / "local"
DEFAULT_CONFIG = REPO / "auditpipe.yaml"
JOB_JAR = PIPELINES / "flink-job" / "target" / "auditpipe-flink-job.jar"
# the job's benchmarks (pipelines/job-bench), run with the job's jar and the Flink runtime
BENCH_JAR = PIPELINES / "job-bench" / "target" / "auditpipe-job-bench.jar"


def cli_pythonpath() -> str:
    """PYTHONPATH for an `auditpipe` child process (`python -m auditpipe`): this checkout's code first,
    as the ./auditpipe launcher sets it."""
    return str(REPO / "cli") + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
