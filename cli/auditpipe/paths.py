"""Where things are in the repository checkout."""

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
