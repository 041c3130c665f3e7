"""Formatting Kafka's storage with the real StorageTool, for every kind of cluster id.

CI failed once because the random id began with '-' (one id in 64) and the tool's argument parser
read it as an option: every stack on that machine then failed to start."""

import shutil
import subprocess
from pathlib import Path

import pytest

from auditpipe import paths
from auditpipe.components.kafka import KAFKA_VERSION, _kraft_id, storage_format_args

LIBS = paths.REPO / ".auditpipe" / "tools" / f"kafka-{KAFKA_VERSION}" / "libs"


def _seed_whose_id_starts_with_dash() -> str:
    for n in range(10_000):
        if _kraft_id(str(n)).startswith("-"):
            return str(n)
    raise AssertionError("no seed found")


@pytest.mark.skipif(not (LIBS / ".complete").exists(), reason="Kafka not installed (./auditpipe setup)")
@pytest.mark.parametrize("seed", ["plain", _seed_whose_id_starts_with_dash()])
def test_storage_formats_whatever_the_cluster_id_starts_with(tmp_path: Path, seed: str):
    props = tmp_path / "server.properties"
    props.write_text("\n".join([
        "process.roles=broker,controller", "node.id=1",
        "controller.quorum.voters=1@127.0.0.1:1", "controller.listener.names=CONTROLLER",
        "listeners=PLAINTEXT://127.0.0.1:2,CONTROLLER://127.0.0.1:1",
        f"log.dirs={tmp_path / 'data'}", ""]))
    r = subprocess.run([shutil.which("java") or "java", "-cp", f"{LIBS}/*", "kafka.tools.StorageTool", "format",
                        *storage_format_args(seed, props)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    meta = (tmp_path / "data" / "meta.properties").read_text()
    assert f"cluster.id={_kraft_id(seed)}" in meta
