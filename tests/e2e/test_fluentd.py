"""The Fluentd collector config (collectors/fluentd) against the local Kafka.

Fluentd is not installable on these machines (no RubyGems). The config is still ours to keep
correct for deployments, so this test runs wherever a `fluentd` binary with fluent-plugin-kafka
is on PATH, and is reported as skipped, with the reason, everywhere else.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from auditpipe import paths
from auditpipe.simulate import simulate

pytestmark = pytest.mark.e2e


@pytest.mark.skipif(shutil.which("fluentd") is None,
                    reason="no fluentd binary on PATH: Fluentd cannot be installed here (no RubyGems); "
                           "collectors/fluentd is exercised where it can be")
def test_fluentd_ships_a_rotating_log_exactly_once(stack, tmp_path):
    server = "e2e-fluentd"
    log = tmp_path / "logs" / "audit.log"
    log.parent.mkdir(parents=True)
    env = {**os.environ, "AUDITPIPE_KAFKA_BROKERS": stack.cfg.kafka_bootstrap, "AUDITPIPE_SERVER": server,
           "AUDITPIPE_AUDIT_LOG": str(log), "AUDITPIPE_FORMAT": "percona-json",
           "AUDITPIPE_STATE_DIR": str(tmp_path / "fluentd")}
    proc = subprocess.Popen(["fluentd", "-c", str(paths.COLLECTORS / "fluentd" / "fluent.conf")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        time.sleep(5)
        m = simulate(log, rate=1000, duration=10, speedup=20, seed=31, rotate_on_size=128 * 1024, late_writes=0)
        ids = stack.wait_for("fluentd's events", lambda: (len(v := stack.stored_ids(server)) >= m.records, v))
        assert len(ids) == len(set(ids)) == m.records
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
