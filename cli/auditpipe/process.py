"""Processes of the local stack: started detached, tracked by pid files, stopped only if ours.

A pid file alone is not proof: a pid can be reused. A process counts as ours only if its command
line still contains the marker we started it with (a path inside our state directory), so
``auditpipe down`` never signals anything it did not start.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from auditpipe.errors import ComponentError, UserError


def cmdline(pid: int) -> str | None:
    """The process's command line, its arguments joined by spaces; None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def gone_or_zombie(pid: int) -> bool:
    """True when the process is gone or a zombie (dead, not yet reaped by its parent)."""
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
        cmd = cmdline(pid)
        if cmd is None or self.marker not in cmd or gone_or_zombie(pid):
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
            cmd = cmdline(proc.pid)
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


EPHEMERAL_PORTS = (32768, 60999)  # Linux's default net.ipv4.ip_local_port_range


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return EPHEMERAL_PORTS


def refuse_taken_port(host: str, port: int, setting: str, cfg_file: Path | str) -> None:
    """Raises UserError, naming ``setting``, unless a server of ours can listen on host:port.

    Two ways it can be taken: another program listens on it, or a connection of any program has it
    as its own end (the kernel hands out ports of the ephemeral range to outgoing connections): the
    server would then fail to bind and exit. The bind test uses SO_REUSEADDR as Java's and Go's
    servers do, so a port left in TIME_WAIT by our own last run does not count as taken."""
    hint = f"stop it or set {setting} in {cfg_file}"
    if port_open(host, port):
        raise UserError(f"port {port} on {host} is in use by another program; {hint}")
    host_setting = setting.split(".")[0] + ".host"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as e:
        raise UserError(f"{host} ({host_setting} in {cfg_file}) is not an address to listen on: {e}") from None
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(address)
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise UserError(f"cannot listen on {host}:{port} ({e.strerror}): is {host} ({host_setting} in "
                                f"{cfg_file}) an address of this machine?") from None
            low, high = _ephemeral_range()
            why = (f"; ports {low}-{high} are the kernel's for outgoing connections "
                   f"(net.ipv4.ip_local_port_range), so choose one below {low}") if low <= port <= high else ""
            raise UserError(f"port {port} on {host} cannot be listened on ({e.strerror}): a connection "
                            f"of another program holds it{why}; {hint}") from None


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
