"""The parts of the local stack, in start order. Each knows how to install, start, check and stop itself."""

from __future__ import annotations

from auditpipe.config import Config
from auditpipe.stack.components.base import Component, StatusRow
from auditpipe.stack.kafka.kafka_acls import Grants


def kafka_grants() -> Grants:
    """The consumer groups and transactional ids of the pipeline's parts, for their ACLs. The job's two
    sources read in its group id (only the store path commits offsets there) and its event stream writes
    in transactions (docs/stream.md); the forwarder commits what it delivered; the collector's catch-up
    assigns partitions and commits nothing, so it needs no group."""
    from auditpipe.stack.alerts import forwarder
    from auditpipe.stack.flink import job_settings

    return Grants(groups=(("job", job_settings.job_group_id()), ("forwarder", forwarder.GROUP)),
                  transactions=(("job", job_settings.stream_transactional_id_prefix()),))


def all_components(cfg: Config) -> list[Component]:
    from auditpipe.stack.collector.rsyslog import RsyslogCollector
    from auditpipe.stack.components.store import LocalStore
    from auditpipe.stack.flink.job import FlinkJob
    from auditpipe.stack.kafka.broker import KafkaBroker

    if cfg.flink["mode"] == "cluster":
        from auditpipe.stack.flink.cluster import FlinkJobManager, FlinkTaskManager

        # TaskManagers first: the JobManager's start waits for the job to run on their slots
        flink = [FlinkTaskManager(cfg, n) for n in range(1, cfg.flink["taskmanagers"] + 1)] + [FlinkJobManager(cfg)]
    else:
        flink = [FlinkJob(cfg)]
    return [KafkaBroker(cfg, kafka_grants()), LocalStore(cfg), *flink, RsyslogCollector(cfg)]


__all__ = ["Component", "StatusRow", "all_components", "kafka_grants"]
