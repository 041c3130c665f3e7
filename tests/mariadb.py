"""A real MariaDB server for tests, with the server_audit plugin writing to a file: its own data
directory, socket and port on 127.0.0.1, started and stopped by the test (Debian's mariadb-server;
`./auditpipe test` installs it, and the tests that need it skip, saying why, where it is absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

NEEDED = ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin", "sysbench")


def require() -> None:
    missing = [c for c in NEEDED if not shutil.which(c)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (Debian: apt-get install mariadb-server mariadb-client "
                    "sysbench; ./auditpipe test installs them)")


class MariaDB:
    def __init__(self, root: Path, port: int, audit_log: Path, rotate_size: int = 256 * 1024):
        self.root, self.port, self.audit_log, self.rotate_size = root, port, audit_log, rotate_size
        self.data, self.socket = root / "data", root / "mariadb.sock"
        self.proc: subprocess.Popen | None = None
        self.env = {**os.environ, "TZ": "UTC"}  # its audit log's local time is then UTC (the source's time zone)

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        user = ["--user=root"] if os.geteuid() == 0 else []
        r = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}", *user,
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           capture_output=True, text=True, timeout=300, env=self.env)
        assert r.returncode == 0, r.stdout + r.stderr
        self.audit_log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.root / "mariadbd.log", "ab") as out:
            self.proc = subprocess.Popen(
                ["mariadbd", "--no-defaults", f"--datadir={self.data}", f"--port={self.port}", "--bind-address=127.0.0.1",
                 f"--socket={self.socket}", f"--pid-file={self.root / 'mariadbd.pid'}", *user,
                 "--plugin-load-add=server_audit", "--server-audit-logging=ON", "--server-audit-output-type=file",
                 f"--server-audit-file-path={self.audit_log}", f"--server-audit-file-rotate-size={self.rotate_size}",
                 "--server-audit-file-rotations=99", "--server-audit-events=CONNECT,QUERY,TABLE"],
                stdout=out, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 60
        while subprocess.run(["mariadb", f"--socket={self.socket}", "-uroot", "-e", "SELECT 1"],
                             capture_output=True).returncode != 0:
            assert self.proc.poll() is None, (self.root / "mariadbd.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "MariaDB did not start"
            time.sleep(0.3)

    def sql(self, statements: str) -> None:
        r = subprocess.run(["mariadb", f"--socket={self.socket}", "-uroot", "-e", statements], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr

    def login(self, user: str, password: str) -> bool:
        """A TCP login, as a client on the network would try it; True if it got in."""
        return subprocess.run(["mariadb", "-h127.0.0.1", f"-P{self.port}", f"-u{user}", f"-p{password}", "-e", "SELECT 1"],
                              capture_output=True, timeout=60).returncode == 0

    def sysbench(self, *args: str) -> None:
        r = subprocess.run(["sysbench", "oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1",
                            f"--mysql-port={self.port}", "--mysql-user=sbtest", "--mysql-password=sbpass",
                            "--mysql-db=sbtest", "--tables=2", "--table-size=500", *args],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            subprocess.run(["mariadb-admin", f"--socket={self.socket}", "-uroot", "shutdown"], capture_output=True,
                           timeout=120)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def audit_files(self) -> list[Path]:
        """The live audit log and every rotated one (server_audit.log.1, .2 ...)."""
        return sorted(self.audit_log.parent.glob(self.audit_log.name + "*"))
