"""Kafka 4.2 in KRaft mode (one combined broker/controller), from Maven Central jars.

Install: ``mvn dependency:copy-dependencies`` of deploy/local/kafka/pom.xml into tools_dir.
Start: format the storage once (cluster id kept in the state dir), then ``java kafka.Kafka``.
Topics come from schemas/topics.yaml.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from auditpipe import limits, paths, prereqs, progress, topics
from auditpipe.components.base import Component, StatusRow, log4j2_properties
from auditpipe.errors import ComponentError, UserError
from auditpipe.process import port_open, wait_until

KAFKA_VERSION = "4.2.0"
LOG4J2 = log4j2_properties({"kafka": "WARN", "org.apache.kafka": "WARN"})


class KafkaBroker(Component):
    name = "kafka"

    @property
    def libs(self):
        return self.cfg.tools_dir / f"kafka-{KAFKA_VERSION}" / "libs"

    def install(self) -> None:
        stamp = self.libs / ".complete"
        if stamp.exists():
            return
        prereqs.require_java17()
        mvn = prereqs.require_maven()
        with progress.step(f"fetch Kafka {KAFKA_VERSION} from Maven Central"):
            progress.run_logged([mvn, "-q", "-B", "-f", str(paths.DEPLOY_LOCAL / "kafka" / "pom.xml"),
                                 "dependency:copy-dependencies", f"-DoutputDirectory={self.libs}"],
                                self.cfg.tools_dir / "install.log", "fetching Kafka")
        stamp.write_text(KAFKA_VERSION)

    def _properties(self) -> str:
        k = self.cfg.kafka
        return "\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@{k['host']}:{k['controller_port']}",
            f"listeners=PLAINTEXT://{k['host']}:{k['port']},CONTROLLER://{k['host']}:{k['controller_port']}",
            f"advertised.listeners=PLAINTEXT://{k['host']}:{k['port']}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name=PLAINTEXT",
            f"log.dirs={self.home / 'data'}",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "auto.create.topics.enable=false",
            f"message.max.bytes={limits.from_config(self.cfg).broker_message_bytes}",
            "num.partitions=1",
            "group.initial.rebalance.delay.ms=0",
            "",
        ])

    def start(self) -> None:
        if self.proc.running():
            for note in topics.ensure_topics(self.cfg.kafka_bootstrap, limits.from_config(self.cfg)):
                progress.info(f"  ! {note}")
            return
        k = self.cfg.kafka
        for port in (k["port"], k["controller_port"]):
            if port_open(k["host"], port):
                raise UserError(f"port {port} on {k['host']} is in use by another program; stop it or set "
                                f"kafka.port / kafka.controller_port in {self.cfg.file}")
        java = prereqs.require_java17()
        props = self.home / "server.properties"
        props.write_text(self._properties())
        log4j = self.home / "log4j2.properties"
        log4j.write_text(LOG4J2)
        classpath = f"{self.libs}/*"
        if not (self.home / "data" / "meta.properties").exists():
            cluster_id_file = self.home / "cluster.id"
            if not cluster_id_file.exists():
                cluster_id_file.write_text(uuid.uuid4().hex[:22])
            progress.run_logged([java, "-cp", classpath, f"-Dlog4j2.configurationFile={log4j}",
                                 "kafka.tools.StorageTool", "format",
                                 *storage_format_args(cluster_id_file.read_text(), props)], self.proc.log_file, "formatting Kafka storage")
        self.proc.start([java, f"-Xmx{k['heap']}", f"-Xms{k['heap']}", "-XX:+UseG1GC",
                         f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath, "kafka.Kafka", str(props)])
        wait_until(lambda: port_open(k["host"], k["port"]) and self.healthy(),
                   90, "waiting for Kafka to accept clients", self.proc)
        for note in topics.ensure_topics(self.cfg.kafka_bootstrap, limits.from_config(self.cfg)):
            progress.info(f"  ! {note}")

    def healthy(self) -> bool:
        if not port_open(self.cfg.kafka["host"], self.cfg.kafka["port"]):
            return False
        try:
            topics.admin(self.cfg.kafka_bootstrap).list_topics(timeout=2)
            return True
        except Exception:  # noqa: BLE001
            return False

    def status(self) -> StatusRow:
        pid = self.proc.pid()
        if pid is None:
            return StatusRow(self.name, None, self.cfg.kafka_bootstrap, "stopped", "")
        if not self.healthy():
            return StatusRow(self.name, pid, self.cfg.kafka_bootstrap, "unhealthy", "not accepting clients")
        try:
            md = topics.admin(self.cfg.kafka_bootstrap).list_topics(timeout=3).topics
            detail = ", ".join(f"{t.name}({len(md[t.name].partitions)}p)" if t.name in md else f"{t.name}(missing)"
                               for t in topics.definitions().values())
            return StatusRow(self.name, pid, self.cfg.kafka_bootstrap, "ok", detail)
        except Exception as e:  # noqa: BLE001
            return StatusRow(self.name, pid, self.cfg.kafka_bootstrap, "unhealthy", str(e)[:80])


def storage_format_args(seed: str, props: Path) -> list[str]:
    """The StorageTool arguments. The id is joined to its option with '=': a base64 id starts with
    '-' one time in 64, and as a separate argument the tool's parser takes it for an option."""
    return [f"--cluster-id={_kraft_id(seed)}", "--config", str(props)]


def _kraft_id(seed: str) -> str:
    """A KRaft cluster id: 16 bytes, URL-safe base64 without padding (22 characters)."""
    import base64
    import hashlib

    return base64.urlsafe_b64encode(hashlib.md5(seed.encode()).digest()).decode().rstrip("=")


__all__ = ["KafkaBroker", "ComponentError"]
