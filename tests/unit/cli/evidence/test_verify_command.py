"""`auditpipe verify`: what --watch refuses."""


def test_verify_watch_refuses_what_it_cannot_honour(tmp_path, auditpipe):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("chain: {watch_interval: 0s}\n")
    r = auditpipe("--config", str(cfg), "verify", "--watch")
    assert r.returncode == 2 and "chain.watch_interval is 0s" in r.stderr, r.stderr
    r = auditpipe("--config", str(cfg), "verify", "--watch", "--server", "db-01")
    assert r.returncode == 2 and "--server, --from, --to and --where are for a single verify" in r.stderr, r.stderr
