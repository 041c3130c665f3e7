"""What every component of the local stack offers."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from auditpipe.config import Config
from auditpipe.process import ManagedProcess


def properties_value(value: str) -> str:
    """``value`` as the value of a Java .properties line (backslashes and newlines escaped)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def made_from(version: str, *lists: Path) -> str:
    """What an installed folder of jars was made from: the version and a digest of the files that list
    its jars (poms). Kept in the folder's stamp; when it differs, the folder is made again."""
    digest = hashlib.sha1(b"".join(f.read_bytes() for f in lists)).hexdigest()[:12]
    return f"{version} {digest}"


def log4j2_properties(quiet_loggers: dict[str, str]) -> str:
    """A log4j2 configuration for our JVM processes: INFO to the console (our log file), with
    chatty libraries turned down ({logger name: level})."""
    lines = ["rootLogger.level = INFO", "rootLogger.appenderRef.main.ref = Main", "appender.main.name = Main",
             "appender.main.type = Console", "appender.main.layout.type = PatternLayout",
             "appender.main.layout.pattern = %d{ISO8601} %-5p [%c{1}] %m%n"]
    for i, (name, level) in enumerate(quiet_loggers.items()):
        lines += [f"logger.l{i}.name = {name}", f"logger.l{i}.level = {level}"]
    return "\n".join(lines) + "\n"


@dataclass
class StatusRow:
    component: str
    pid: int | None
    endpoint: str
    health: str
    detail: str


class Component:
    name = "component"
    # the supervisor's longest wait before restarting this part after it keeps dying (seconds): long for
    # parts whose restarts cost much and lose nothing while they are down (stack/supervisor.py)
    longest_restart_wait = 60.0

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.proc = ManagedProcess(self.name, cfg.state_dir)

    @property
    def home(self):
        """This component's folder in the state directory."""
        d = self.cfg.state_dir / self.name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def install(self) -> None:
        """Installs what is missing into tools_dir; idempotent."""

    def start(self) -> None:
        raise NotImplementedError

    def restart(self) -> None:
        """What the supervisor runs for a part that died: start it as it ran."""
        self.start()

    def healthy(self) -> bool:
        raise NotImplementedError

    def status(self) -> StatusRow:
        raise NotImplementedError

    def stop(self) -> bool:
        return self.proc.stop()

    def is_managed(self) -> bool:
        """False when this part is external (e.g. a configured MongoDB) and the CLI runs nothing."""
        return True
