"""`auditpipe upgrade`: what it needs before it stops anything (the handover itself runs on a real stack
in tests/e2e/job/test_state_backend_move.py)."""


def test_upgrade_needs_a_running_local_job(tmp_path, auditpipe):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("")
    r = auditpipe("--config", str(cfg), "upgrade")
    assert r.returncode == 2 and "the job is not running: `./auditpipe up`" in r.stderr, r.stderr
    cfg.write_text("flink: {mode: cluster}\n")
    r = auditpipe("--config", str(cfg), "upgrade")
    assert r.returncode == 2 and "with flink.mode: cluster, `./auditpipe down` then `./auditpipe up`" in r.stderr, \
        r.stderr
