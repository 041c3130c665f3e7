"""A real MariaDB server for tests, with the server_audit plugin writing to a file, or to syslog: its
own data directory, socket and port on 127.0.0.1, started and stopped by the test (Debian's
mariadb-server; `./auditpipe test` installs it, and the tests that need it skip, saying why, where
it is absent).

To syslog, the plugin calls syslog(3), which writes to /dev/log: the server then runs in a mount
namespace of its own (root and util-linux's unshare) whose /dev is a tmpfs holding the devices it
needs and /dev/log pointing at the test's own syslog daemon (``LocalSyslog``), so the machine's
/dev is not touched."""

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


def require_syslog() -> None:
    """What a server writing to syslog needs here: root (a mount namespace) and unshare."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("a MariaDB writing to syslog runs in a mount namespace of its own: needs root and unshare")


class LocalSyslog:
    """A syslog daemon of the test's (rsyslogd): takes what programs send to its socket, as the
    machine's syslog takes /dev/log, and forwards each message over TCP (octet-counted framing, RFC
    5424) to ``target``, writing the same message to ``sent`` (one a line): what was sent."""

    TEMPLATE = "<%PRI%>1 %TIMESTAMP:::date-rfc3339% %HOSTNAME% %APP-NAME% %PROCID% %MSGID% %STRUCTURED-DATA% %msg%"

    def __init__(self, root: Path, target: str):
        self.root, self.target = root, target
        self.socket, self.sent, self.proc = root / "log", root / "sent.log", None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        host, port = self.target.split("://")[1].rsplit(":", 1)
        conf = self.root / "rsyslog.conf"
        conf.write_text(f"""global(workDirectory="{self.root}" parser.escapeControlCharactersOnReceive="off")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="{self.socket}" RateLimit.Interval="0")
template(name="forward" type="string" string="{self.TEMPLATE}")
template(name="written" type="string" string="{self.TEMPLATE}\n")
action(type="omfile" file="{self.sent}" template="written")
action(type="omfwd" target="{host}" port="{port}" protocol="tcp" TCP_Framing="octet-counted" template="forward"
       queue.type="LinkedList" queue.filename="forward" queue.saveOnShutdown="on" action.resumeRetryCount="-1")
""")
        self.proc = subprocess.Popen(["rsyslogd", "-n", "-f", str(conf), "-i", str(self.root / "rsyslogd.pid")],
                                     stdout=open(self.root / "rsyslogd.log", "ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while not self.socket.exists():
            assert self.proc.poll() is None, (self.root / "rsyslogd.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the local syslog did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)

    def lines(self) -> list[bytes]:
        return [line for line in self.sent.read_bytes().split(b"\n") if line] if self.sent.exists() else []


class MariaDB:
    def __init__(self, root: Path, port: int, audit_log: Path, rotate_size: int = 256 * 1024,
                 syslog: LocalSyslog | None = None, syslog_info: str = ""):
        """``syslog``: the plugin writes to syslog (``server_audit_output_type=syslog``), its /dev/log
        being that daemon's socket, with ``syslog_info`` before each record; else to ``audit_log``."""
        self.root, self.port, self.audit_log, self.rotate_size = root, port, audit_log, rotate_size
        self.syslog, self.syslog_info = syslog, syslog_info
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
        output = (["--server-audit-output-type=syslog", f"--server-audit-syslog-info={self.syslog_info}"]
                  if self.syslog else
                  ["--server-audit-output-type=file", f"--server-audit-file-path={self.audit_log}",
                   f"--server-audit-file-rotate-size={self.rotate_size}", "--server-audit-file-rotations=99"])
        command = ["mariadbd", "--no-defaults", f"--datadir={self.data}", f"--port={self.port}", "--bind-address=127.0.0.1",
                   f"--socket={self.socket}", f"--pid-file={self.root / 'mariadbd.pid'}", *user,
                   "--plugin-load-add=server_audit", "--server-audit-logging=ON", *output,
                   "--server-audit-events=CONNECT,QUERY,TABLE"]
        if self.syslog:
            command = self._in_namespace_with_dev_log(command)
        with open(self.root / "mariadbd.log", "ab") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 60
        while subprocess.run(["mariadb", f"--socket={self.socket}", "-uroot", "-e", "SELECT 1"],
                             capture_output=True).returncode != 0:
            assert self.proc.poll() is None, (self.root / "mariadbd.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "MariaDB did not start"
            time.sleep(0.3)

    def _in_namespace_with_dev_log(self, command: list[str]) -> list[str]:
        """``command`` run by unshare in a mount namespace whose /dev is a tmpfs with the machine's
        null, zero, random, urandom and shm bound in, and log a link to the local syslog's socket."""
        import shlex

        old = self.root / "machine-dev"
        old.mkdir(exist_ok=True)
        setup = [f"mount --bind /dev {shlex.quote(str(old))}", "mount -t tmpfs auditpipe-dev /dev"]
        for device in ("null", "zero", "random", "urandom"):
            setup += [f"touch /dev/{device}", f"mount --bind {shlex.quote(str(old / device))} /dev/{device}"]
        setup += ["mkdir /dev/shm", f"mount --bind {shlex.quote(str(old / 'shm'))} /dev/shm",
                  f"ln -s {shlex.quote(str(self.syslog.socket))} /dev/log", "exec " + shlex.join(command)]
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", " && ".join(setup)]

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
