"""`auditpipe upgrade`: what it needs before it stops anything (the handover itself runs on a real stack
in tests/e2e/job/test_state_backend_move.py and, on the local cluster, tests/e2e/job/test_flink_cluster.py)."""


def test_upgrade_needs_a_running_job_on_the_minicluster_or_the_local_cluster(tmp_path, auditpipe):
    cfg = tmp_path / "c.yaml"
    for text in ("", "flink: {mode: cluster}\n"):
        cfg.write_text(text)
        r = auditpipe("--config", str(cfg), "upgrade")
        assert r.returncode == 2 and "the job is not running: `./auditpipe up`" in r.stderr, r.stderr
