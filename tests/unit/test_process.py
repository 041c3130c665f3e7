"""Process tracking: `down` stops only what we started; a port a server of ours cannot listen on
is refused before the server is started, naming the setting."""

import socket
import subprocess
import sys

import pytest

from auditpipe.errors import UserError
from auditpipe.process import ManagedProcess, refuse_taken_port


def test_start_track_stop(tmp_path):
    p = ManagedProcess("sleeper", tmp_path)
    pid = p.start([sys.executable, "-c", f"import time; time.sleep(60)  # {tmp_path}"])
    assert p.pid() == pid and p.running()
    assert p.stop(timeout=5)
    assert not p.running() and not p.pid_file.exists()
    assert not p.stop()


def test_a_reused_pid_is_not_ours(tmp_path):
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        p = ManagedProcess("x", tmp_path)
        p.pid_file.parent.mkdir(parents=True)
        p.pid_file.write_text(str(stranger.pid))
        assert p.pid() is None, "a process without our marker is not ours"
        assert not p.stop()
        assert stranger.poll() is None, "and it is left alone"
    finally:
        stranger.kill()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_free_port_is_accepted():
    refuse_taken_port("127.0.0.1", _free_port(), "kafka.port", "auditpipe.yaml")


def test_a_port_another_program_listens_on_is_refused():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with pytest.raises(UserError, match=f"port {port} on 127.0.0.1 is in use by another program; "
                                            "stop it or set store.port in auditpipe.yaml"):
            refuse_taken_port("127.0.0.1", port, "store.port", "auditpipe.yaml")


def test_a_port_held_by_a_connection_is_refused():
    """The kernel gives outgoing connections ports of the ephemeral range: nothing listens there, yet
    the broker's bind would fail."""
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.connect(server.getsockname())
        port = client.getsockname()[1]
        with pytest.raises(UserError, match=rf"port {port} on 127.0.0.1 cannot be listened on \(.+\): a connection "
                                            r"of another program holds it; ports \d+-\d+ are the kernel's .+ "
                                            "set kafka.controller_port in auditpipe.yaml"):
            refuse_taken_port("127.0.0.1", port, "kafka.controller_port", "auditpipe.yaml")


def test_a_host_that_is_not_this_machines_is_named_as_such():
    """192.0.2.1 (TEST-NET-1, never assigned) cannot be bound here: not a held port."""
    with pytest.raises(UserError, match=r"cannot listen on 192\.0\.2\.1:\d+ \(.+\): is 192\.0\.2\.1 \(kafka\.host in "
                                        r"auditpipe\.yaml\) an address of this machine\?"):
        refuse_taken_port("192.0.2.1", 25192, "kafka.port", "auditpipe.yaml")
