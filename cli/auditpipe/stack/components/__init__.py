"""The parts of the local stack, in start order. Each knows how to install, start, check and stop itself."""

from __future__ import annotations

from auditpipe.config import Config
from auditpipe.stack.components.base import Component, StatusRow


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
    return [KafkaBroker(cfg), LocalStore(cfg), *flink, RsyslogCollector(cfg)]


__all__ = ["Component", "StatusRow", "all_components"]
