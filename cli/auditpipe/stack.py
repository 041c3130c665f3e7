"""The local stack as a whole: setup (install), up (install + start), down, status."""

from __future__ import annotations

import json

from auditpipe import progress
from auditpipe.components import StatusRow, all_components
from auditpipe.config import Config


def setup(cfg: Config) -> None:
    cfg.tools_dir.mkdir(parents=True, exist_ok=True)
    progress.info(f"setup: installing into {cfg.tools_dir}")
    for c in all_components(cfg):
        c.install()


def up(cfg: Config) -> None:
    setup(cfg)
    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    progress.info(f"up: starting the local stack (state in {cfg.state_dir})")
    for c in all_components(cfg):
        already = c.is_managed() and c.proc.running()
        with progress.step(f"{c.name}: {'already running' if already else 'start'}"):
            c.start()


def down(cfg: Config) -> list[str]:
    """Stops what `up` started, in reverse order; returns the names of what was stopped."""
    stopped = []
    for c in reversed(all_components(cfg)):
        if c.stop():
            stopped.append(c.name)
    return stopped


def status(cfg: Config) -> list[StatusRow]:
    return [c.status() for c in all_components(cfg)]


def format_status(rows: list[StatusRow], as_json: bool = False) -> str:
    if as_json:
        return json.dumps([r.__dict__ for r in rows], indent=2)
    header = ("COMPONENT", "PID", "ENDPOINT", "HEALTH", "DETAIL")
    table = [header] + [(r.component, str(r.pid or "-"), r.endpoint, r.health, r.detail) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row))
                     for row in table)
