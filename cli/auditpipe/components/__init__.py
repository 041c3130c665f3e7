"""The parts of the local stack, in start order. Each knows how to install, start, check and stop itself."""

from __future__ import annotations

from auditpipe.components.base import Component, StatusRow
from auditpipe.config import Config


def all_components(cfg: Config) -> list[Component]:
    from auditpipe.components.collector import RsyslogCollector
    from auditpipe.components.flink import FlinkJob
    from auditpipe.components.kafka import KafkaBroker
    from auditpipe.components.store import LocalStore

    return [KafkaBroker(cfg), LocalStore(cfg), FlinkJob(cfg), RsyslogCollector(cfg)]


__all__ = ["Component", "StatusRow", "all_components"]
