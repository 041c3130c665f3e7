"""The wheel a release ships (docs/releasing.md), outside the repository: pip builds it from this
checkout, a clean virtual environment installs it, and its `auditpipe` runs with what the wheel
bundles: the version and commit, `status` of the running stack, and `parse` with the bundled job jar
on a Flink runtime fetched from the wheel's own pom."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditpipe import paths, version
from auditpipe.stack.flink.job import FlinkJob
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """(the installed `auditpipe`, the environment to run it in, an empty working folder)."""
    root = tmp_path_factory.mktemp("wheel")
    # nothing of the checkout: no PYTHONPATH (./auditpipe sets one: pip would take the checkout's
    # auditpipe for installed and install nothing), no configuration named
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AUDITPIPE_CONFIG", "VIRTUAL_ENV")}
    env["XDG_DATA_HOME"] = str(root / "data")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check",
                    "-w", str(root / "dist"), str(paths.REPO)], check=True, capture_output=True, text=True, env=env)
    wheel = next((root / "dist").glob("auditpipe-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, env=env)
    installed = subprocess.run([str(root / "venv" / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                                str(wheel)], check=True, capture_output=True, text=True, env=env)
    assert (root / "venv" / "bin" / "auditpipe").exists(), installed.stdout + installed.stderr
    work = root / "work"
    work.mkdir()
    return root / "venv" / "bin" / "auditpipe", env, work


def run(wheel_env, *args: str) -> subprocess.CompletedProcess:
    exe, env, work = wheel_env
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=work, timeout=600)


def test_the_installed_auditpipe_is_the_wheel_and_says_its_release(wheel_env):
    exe, env, work = wheel_env
    where = subprocess.run([str(exe.parent / "python"), "-c", "import auditpipe.paths as p; print(p.IN_CHECKOUT, p.REPO)"],
                           capture_output=True, text=True, env=env, cwd=work, check=True).stdout.split()
    assert where[0] == "False" and Path(where[1]).is_relative_to(exe.parents[1]), where
    assert run(wheel_env, "--version").stdout.strip() == version.describe()  # the checkout's release and commit
    # without a configuration: the bundled defaults, their state under $XDG_DATA_HOME/auditpipe
    down = run(wheel_env, "status", "--json")
    assert down.returncode == 3, down.stderr
    rows = {r["component"]: r for r in json.loads(down.stdout)}
    assert Path(rows["archive"]["endpoint"]).is_relative_to(Path(env["XDG_DATA_HOME"]) / "auditpipe"), rows
    # it names itself as installed, not as the checkout's launcher
    assert rows["kafka"]["detail"].endswith("run auditpipe up") and "./auditpipe" not in down.stdout, rows
    refused = run(wheel_env, "test")
    assert refused.returncode == 2 and "checkout" in refused.stderr, refused.stderr


def test_status_of_the_running_stack_from_the_wheel(wheel_env, stack):
    installed = run(wheel_env, "--config", str(stack.cfg_file), "status", "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    health = {r["component"]: r["health"] for r in json.loads(installed.stdout)}
    assert health == {r["component"]: r["health"] for r in stack.status()}
    assert {health[part] for part in ("kafka", "store", "flink", "collector", "supervisor")} == {"ok"}, health


def test_parse_with_the_bundled_job_on_its_own_flink_runtime(wheel_env, stack, tmp_path):
    log = tmp_path / "audit.log"
    manifest = simulate(log, rate=200, duration=5, speedup=1000, seed=7, malformed=0, late_writes=0)
    cfg = tmp_path / "auditpipe.yaml"
    cfg.write_text(f"state_dir: {tmp_path / 'state'}\ntools_dir: {tmp_path / 'tools'}\n")
    parsed = run(wheel_env, "--config", str(cfg), "parse", str(log), "--server", "wheel-db")
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    events = [json.loads(line) for line in parsed.stdout.splitlines()]
    assert len(events) == manifest.records and {e["server"] for e in events} == {"wheel-db"}
    # the runtime the wheel's pom fetched is the checkout's: the same jars
    fetched = sorted(p.name for p in (tmp_path / "tools" / "flink-2.2.0" / "lib").glob("*.jar"))
    assert fetched == sorted(p.name for p in FlinkJob(stack.cfg).runtime_lib.glob("*.jar"))
