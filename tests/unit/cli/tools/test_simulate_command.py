"""`auditpipe simulate`: nonsense flags refused, nothing written."""


def test_simulate_rejects_nonsense_flags(tmp_path, auditpipe):
    for flag, value, message in (("--rate", "0", "must be greater than 0"), ("--speedup", "-1", "must be greater than 0"),
                                 ("--rotations", "0", "must be at least 1"), ("--malformed", "-2", "must not be negative"),
                                 ("--duration", "soon", "is not a number")):
        r = auditpipe("simulate", "--path", str(tmp_path / "audit.log"), flag, value)
        assert r.returncode == 2, (flag, r.stderr)
        assert message in r.stderr, (flag, r.stderr)
    assert not (tmp_path / "audit.log").exists(), "nothing is written on bad flags"
