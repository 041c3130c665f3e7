"""`auditpipe bench`: the options of one bench refused by the other."""


def test_the_review_bench_refuses_the_pipeline_benchs_options(tmp_path, auditpipe):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("")
    r = auditpipe("--config", str(cfg), "bench", "--review", "--recordings", str(tmp_path))
    assert r.returncode == 2 and "--recordings and --latency-rate belong to the pipeline's bench" in r.stderr, r.stderr
    r = auditpipe("--config", str(cfg), "bench", "--review", "--latency-rate", "1400")
    assert r.returncode == 2 and "belong to the pipeline's bench" in r.stderr, r.stderr
    r = auditpipe("--config", str(cfg), "bench", "--end-to-end-only", "--latency-rate", "0.3")
    assert r.returncode == 2 and "--latency-rate 0.3: at least 1 event a second" in r.stderr, r.stderr
