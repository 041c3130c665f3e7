"""The real Kafka from the installed jars: formatting its storage for every kind of cluster id, and
a broker that cannot start saying why in its log.

A random cluster id begins with '-' once in 64, and the tool's argument parser must not read it as
an option (every stack on the machine would fail to start). A broker that cannot bind its port must
say so in its log: slf4j-api 1.7 paired with log4j's binding for slf4j 2 sends every line nowhere."""

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from auditpipe import paths
from auditpipe.stack.kafka.broker import KAFKA_VERSION, LOG4J2, _kraft_id, storage_format_args

LIBS = paths.REPO / ".auditpipe" / "tools" / f"kafka-{KAFKA_VERSION}" / "libs"


def _seed_whose_id_starts_with_dash() -> str:
    for n in range(10_000):
        if _kraft_id(str(n)).startswith("-"):
            return str(n)
    raise AssertionError("no seed found")


needs_kafka = pytest.mark.skipif(not (LIBS / ".complete").exists(), reason="Kafka not installed (./auditpipe setup)")


def _format(props: Path, seed: str) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("java") or "java", "-cp", f"{LIBS}/*", "kafka.tools.StorageTool", "format",
                           *storage_format_args(seed, props)], capture_output=True, text=True, timeout=120)


def _server_properties(tmp_path: Path, port: int, controller_port: int) -> Path:
    props = tmp_path / "server.properties"
    props.write_text("\n".join([
        "process.roles=broker,controller", "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller_port}", "controller.listener.names=CONTROLLER",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        f"log.dirs={tmp_path / 'data'}", ""]))
    return props


@needs_kafka
@pytest.mark.parametrize("seed", ["plain", _seed_whose_id_starts_with_dash()])
def test_storage_formats_whatever_the_cluster_id_starts_with(tmp_path: Path, seed: str):
    r = _format(_server_properties(tmp_path, 2, 1), seed)
    assert r.returncode == 0, r.stdout + r.stderr
    meta = (tmp_path / "data" / "meta.properties").read_text()
    assert f"cluster.id={_kraft_id(seed)}" in meta


@needs_kafka
def test_a_broker_that_cannot_bind_its_port_says_so_in_its_log(tmp_path: Path):
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.bind(("127.0.0.1", 0))  # an outgoing connection's end: the port the broker is given
        client.connect(server.getsockname())
        held = client.getsockname()[1]
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            controller = free.getsockname()[1]
        props = _server_properties(tmp_path, held, controller)
        assert _format(props, "bind").returncode == 0
        log4j = tmp_path / "log4j2.properties"
        log4j.write_text(LOG4J2)  # the configuration the stack's broker runs with
        r = subprocess.run([shutil.which("java") or "java", f"-Dlog4j2.configurationFile={log4j}", "-cp", f"{LIBS}/*",
                            "kafka.Kafka", str(props)], capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "no-operation (NOP) logger" not in out, out
    assert "Address already in use" in out and str(held) in out, out
