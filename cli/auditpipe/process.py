"""Processes of the local stack: started detached, tracked by pid files, stopped only if ours.

A pid file alone is not proof: a pid can be reused. A process counts as ours only if its command
line still contains the marker we started it with (a path inside our state directory), so
``auditpipe down`` never signals anything it did not start.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Sequence

from auditpipe.errors import ComponentError


def _cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


class ManagedProcess:
    def __init__(self, name: str, state_dir: Path, marker: str | None = None):
        self.name = name
        self.state_dir = state_dir
        self.marker = marker or str(state_dir)
        self.pid_file = state_dir / "run" / f"{name}.pid"
        self.log_file = state_dir / "logs" / f"{name}.log"

    def pid(self) -> int | None:
        """The pid if the process we started is still alive, else None."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        cmd = _cmdline(pid)
        if cmd is None or self.marker not in cmd or _is_zombie(pid):
            return None
        return pid

    def running(self) -> bool:
        return self.pid() is not None

    def start(self, argv: Sequence[str], env: dict | None = None, cwd: Path | None = None) -> int:
        if not any(self.marker in a for a in argv):
            raise AssertionError(f"{self.name}: command line must contain the marker {self.marker}")
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
            log.flush()
            proc = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=cwd, env={**os.environ, **(env or {})}, start_new_session=True)
        # Until exec, /proc/<pid>/cmdline is still ours (python); wait for the real command line.
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            cmd = _cmdline(proc.pid)
            if cmd is not None and self.marker in cmd:
                break
            time.sleep(0.01)
        self.pid_file.write_text(str(proc.pid))
        return proc.pid

    def stop(self, timeout: float = 30) -> bool:
        """SIGTERM, then SIGKILL after ``timeout``. Returns False if it was not running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pid() is None:
                break
            time.sleep(0.2)
        else:
            os.kill(pid, signal.SIGKILL)
            while self.pid() is not None:
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)
        return True

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True if something accepts connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_until(check: Callable[[], bool], timeout: float, what: str, proc: ManagedProcess | None = None,
               interval: float = 0.5) -> None:
    """Polls ``check`` until true; on timeout, or if ``proc`` dies, raises with its log tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - a failing probe just means "not yet"
            pass
        if proc is not None and not proc.running():
            raise ComponentError(f"{proc.name} exited while {what}. Last lines of {proc.log_file}:\n{proc.log_tail()}")
        time.sleep(interval)
    tail = f" Last lines of {proc.log_file}:\n{proc.log_tail()}" if proc else ""
    raise ComponentError(f"timed out after {timeout:.0f}s {what}.{tail}")
