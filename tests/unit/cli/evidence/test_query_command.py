"""`auditpipe query`: its options and errors, before any store."""


def test_unknown_saved_query_is_a_clear_error(tmp_path, auditpipe):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("")
    r = auditpipe("--config", str(cfg), "query", "no-such-query")
    assert r.returncode == 2 and "no saved query 'no-such-query'" in r.stderr


def test_query_reads_one_tier_when_asked_never_two(auditpipe):
    r = auditpipe("query", "failed-logins", "--archive", "--store")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr, r.stderr


def test_query_list_needs_no_store(auditpipe):
    r = auditpipe("query", "--list")
    assert r.returncode == 0 and "failed-logins" in r.stdout
