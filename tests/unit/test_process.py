"""Process tracking: `down` stops only what we started."""

import subprocess
import sys

from auditpipe.process import ManagedProcess


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
