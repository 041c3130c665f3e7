"""The command line: help, and clear errors (no tracebacks) for bad configuration."""

import subprocess

from auditpipe import paths


def test_help_lists_every_command(auditpipe):
    out = auditpipe("--help").stdout
    for cmd in ("setup", "up", "down", "status", "simulate", "query", "demo", "test", "config"):
        assert cmd in out
    assert "$AUDITPIPE_CONFIG" in out


def test_bad_config_key_is_named_without_traceback(tmp_path, auditpipe):
    bad = tmp_path / "bad.yaml"
    bad.write_text("flink:\n  rest_prot: 1\n")
    r = auditpipe("--config", str(bad), "status")
    assert r.returncode == 2
    assert "flink.rest_prot: unknown key" in r.stderr
    assert "Traceback" not in r.stderr










def test_a_copied_checkout_runs_its_own_code_config_and_state(tmp_path):
    """The Python environment is an editable install that records the directory it was made in; a
    copied clone (with its .venv) must run its own code, config and state, not the original's."""
    import os
    import shutil

    venv = paths.REPO / ".venv"
    if not (venv / "bin" / "python").exists():
        import pytest

        pytest.skip("no .venv in this checkout (tests run through ./auditpipe test make one)")
    copy = tmp_path / "moved-clone"
    copy.mkdir()
    for name in ("auditpipe", "pyproject.toml", "setup.py", "auditpipe.yaml"):
        shutil.copy2(paths.REPO / name, copy / name)
    for name in ("cli", "schemas"):
        shutil.copytree(paths.REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(venv, copy / ".venv")  # the environment as it was made for the original
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(copy / "auditpipe"), "config", "check"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{copy / 'auditpipe.yaml'}: valid", "the copy's own config, so its own code and state"


def subcommands():
    """Every subcommand's parser, by its full name ("archive prune")."""
    import argparse

    from auditpipe.cli import build_parser

    out = {}

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    full = f"{prefix} {name}".strip()
                    if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                        walk(sub, full)
                    else:
                        out[full] = sub

    walk(build_parser(), "")
    return out


def test_every_subcommand_has_a_description_and_an_example():
    commands = subcommands()
    assert {"up", "down", "status", "query", "report", "alerts", "verify", "archive prune", "config check",
            "parse", "simulate", "import"} <= set(commands)
    for name, parser in commands.items():
        assert parser.description, name
        assert parser.epilog and parser.epilog.startswith("examples:") and "./auditpipe" in parser.epilog, name


def test_periods_and_servers_are_the_same_options_everywhere():
    for name, parser in subcommands().items():
        flags = {s: a for a in parser._actions for s in a.option_strings}
        if "--since" in flags or "--from" in flags:
            assert flags["--from"] is flags["--since"] and flags["--to"] is flags["--until"], name
        if "--server" in flags and name not in ("parse", "import"):  # theirs name the events they make: one server
            assert flags["--server"].dest == "servers" and flags["--server"].nargs is None \
                and type(flags["--server"]).__name__ == "_AppendAction", name


def test_the_supervisor_is_not_offered_and_archive_actions_have_their_own_help(auditpipe):
    top = auditpipe("--help").stdout
    assert "supervise" not in top
    prune = auditpipe("archive", "prune", "--help").stdout
    assert "--dry-run" in prune and "--retention-days" in prune
    status = auditpipe("archive", "status", "--help").stdout
    assert "--dry-run" not in status
