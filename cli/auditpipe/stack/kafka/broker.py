"""Kafka 4.2 in KRaft mode (one combined broker/controller), from Maven Central jars.

Install: ``mvn dependency:copy-dependencies`` of deploy/local/kafka/pom.xml into tools_dir.
Start: format the storage once (cluster id kept in the state dir), then ``java kafka.Kafka``.
Topics come from schemas/topics.yaml.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from auditpipe import paths, prereqs, progress
from auditpipe.config import Config
from auditpipe.errors import ComponentError
from auditpipe.process import port_open, refuse_taken_port, wait_until
from auditpipe.stack import limits
from auditpipe.stack.components.base import Component, StatusRow, log4j2_properties, made_from, properties_value
from auditpipe.stack.kafka import kafka_acls, topics

KAFKA_VERSION = "4.2.0"
LOG4J2 = log4j2_properties({"kafka": "WARN", "org.apache.kafka": "WARN", "state.change.logger": "WARN"})


class KafkaBroker(Component):
    name = "kafka"

    def __init__(self, cfg: Config, grants: kafka_acls.Grants):
        super().__init__(cfg)
        self.grants = grants  # the parts' groups and transactional ids, for their ACLs

    @property
    def libs(self):
        return self.cfg.tools_dir / f"kafka-{KAFKA_VERSION}" / "libs"

    def is_managed(self) -> bool:
        return self.cfg.kafka_is_local

    def install(self) -> None:
        """The jars of deploy/local/kafka/pom.xml; fetched again, into an empty folder, whenever that
        pom changes (a jar left from an earlier set, e.g. another slf4j binding, would stay on the
        classpath)."""
        if not self.is_managed():
            return
        pom = paths.DEPLOY_LOCAL / "kafka" / "pom.xml"
        stamp = self.libs / ".complete"
        wanted = made_from(KAFKA_VERSION, pom)
        if stamp.exists() and stamp.read_text().strip() == wanted:
            return
        prereqs.require_java17()
        mvn = prereqs.require_maven()
        shutil.rmtree(self.libs, ignore_errors=True)
        with progress.step(f"fetch Kafka {KAFKA_VERSION} from Maven Central"):
            progress.run_logged([mvn, "-q", "-B", "-f", str(pom),
                                 "dependency:copy-dependencies", f"-DoutputDirectory={self.libs}"],
                                self.cfg.tools_dir / "install.log", "fetching Kafka")
        stamp.write_text(wanted)

    def _security_properties(self) -> list[str]:
        """The listeners: PLAINTEXT, or SASL_PLAINTEXT with PLAIN, the controller's too. PLAIN's users
        are the configured one (the administrator, whom the broker and controller also log in as) and
        the principals of kafka.security.principals that use PLAIN, whose passwords the broker reads
        from this file (the state directory is the user's). A principal with SCRAM adds its mechanism
        to the client listener; its credentials are made by `up` through the administrator
        (kafka_acls.ensure_scram_credentials) and kept by the broker as a salted hash. With
        principals the authorizer is on: the administrator is the super user, everyone else may do
        only what an ACL allows (kafka_acls.py)."""
        sec = self.cfg.kafka["security"]
        if sec["protocol"] == "PLAINTEXT":
            return ["listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    "inter.broker.listener.name=PLAINTEXT"]

        def quoted(value: str) -> str:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

        admin = sec["username"]
        principals = sec.get("principals", {})
        users = {admin: self.cfg.kafka_password(),
                 **{p["username"]: self.cfg.kafka_password(part) for part, p in principals.items()
                    if self.cfg.kafka_mechanism(part) == "PLAIN"}}
        scram = sorted({m for part in principals if (m := self.cfg.kafka_mechanism(part)) != "PLAIN"})
        jaas = properties_value("org.apache.kafka.common.security.plain.PlainLoginModule required "
                                f"username={quoted(admin)} password={quoted(users[admin])} "
                                + " ".join(f"user_{u}={quoted(pw)}" for u, pw in users.items()) + ";")
        out = ["listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
               "inter.broker.listener.name=SASL_PLAINTEXT",
               "sasl.enabled.mechanisms=" + ",".join(["PLAIN", *scram]),
               "sasl.mechanism.inter.broker.protocol=PLAIN",
               "sasl.mechanism.controller.protocol=PLAIN",
               "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + jaas,
               "listener.name.controller.sasl.enabled.mechanisms=PLAIN",
               "listener.name.controller.plain.sasl.jaas.config=" + jaas]
        out += [f"listener.name.sasl_plaintext.{m.lower()}.sasl.jaas.config="
                "org.apache.kafka.common.security.scram.ScramLoginModule required;" for m in scram]
        if sec.get("principals"):
            out += ["authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                    f"super.users=User:{admin}",
                    "allow.everyone.if.no.acl.found=false"]
        return out

    def _properties(self) -> str:
        k = self.cfg.kafka
        client = k["security"]["protocol"]
        return "\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@{k['host']}:{k['controller_port']}",
            f"listeners={client}://{k['host']}:{k['port']},CONTROLLER://{k['host']}:{k['controller_port']}",
            f"advertised.listeners={client}://{k['host']}:{k['port']}",
            "controller.listener.names=CONTROLLER",
            *self._security_properties(),
            f"log.dirs={self.home / 'data'}",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "auto.create.topics.enable=false",
            f"message.max.bytes={limits.from_config(self.cfg).broker_message_bytes}",
            "num.partitions=1",
            "group.initial.rebalance.delay.ms=0",
            # the log cleaner's offset map, allocated on the heap when the broker starts: 128 MiB by
            # default, two thirds of the broker's live heap here. The stack's compacted topics are Kafka's
            # own (offsets, transactions); 16 MiB maps about 600,000 records a pass, and a map that fills
            # up ends the pass inside a segment (KAFKA-3894), so a smaller map only makes more passes
            "log.cleaner.dedupe.buffer.size=16777216",
            "",
        ])

    def _ensure_topics(self) -> None:
        for note in kafka_acls.ensure_configured_topics(self.cfg, self.grants):
            progress.info(f"  ! {note}")

    def start(self) -> None:
        if not self.is_managed():
            if not self.healthy():
                raise ComponentError(f"the Kafka cluster at {self.cfg.kafka_bootstrap} (kafka.bootstrap_servers) does "
                                     f"not answer: {self._problem()}")
            self._ensure_topics()
            return
        if self.proc.running():
            self._ensure_topics()
            return
        k = self.cfg.kafka
        refuse_taken_port(k["host"], k["port"], "kafka.port", self.cfg.file)
        refuse_taken_port(k["host"], k["controller_port"], "kafka.controller_port", self.cfg.file)
        java = prereqs.require_java17()
        props = self.home / "server.properties"
        props.touch(mode=0o600)  # may hold the SASL password
        props.chmod(0o600)
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
                                 *storage_format_args(cluster_id_file.read_text(), props)],
                                self.proc.log_file, "formatting Kafka storage")
        self.proc.start([java, f"-Xmx{k['heap']}", f"-Xms{k['heap']}", "-XX:+UseG1GC",
                         f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath, "kafka.Kafka", str(props)])
        wait_until(lambda: port_open(k["host"], k["port"]) and self.healthy(),
                   90, "waiting for Kafka to accept clients", self.proc)
        self._ensure_topics()

    def _problem(self) -> str:
        try:
            topics.admin(self.cfg.kafka_client).list_topics(timeout=5)
            return ""
        except Exception as e:  # noqa: BLE001
            return str(e)[:200]

    def healthy(self) -> bool:
        if self.is_managed() and not port_open(self.cfg.kafka["host"], self.cfg.kafka["port"]):
            return False
        try:
            topics.admin(self.cfg.kafka_client).list_topics(timeout=2)
            return True
        except Exception:  # noqa: BLE001
            return False

    def stop(self) -> bool:
        return self.proc.stop() if self.is_managed() else False

    def status(self) -> StatusRow:
        pid = self.proc.pid() if self.is_managed() else None
        if pid is None and not self.is_managed():
            ok = self.healthy()
            return StatusRow(self.name, None, self.cfg.kafka_bootstrap, "ok" if ok else "unhealthy",
                             "external cluster" + ("" if ok else f": {self._problem()[:80]}"))
        if pid is None:
            return StatusRow(self.name, None, self.cfg.kafka_bootstrap, "stopped", "")
        if not self.healthy():
            return StatusRow(self.name, pid, self.cfg.kafka_bootstrap, "unhealthy", "not accepting clients")
        try:
            md = topics.admin(self.cfg.kafka_client).list_topics(timeout=3).topics
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
