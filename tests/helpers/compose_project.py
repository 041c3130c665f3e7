"""The deployment's docker-compose.yml as `docker compose` resolves it: loaded by compose-go (the
library `docker compose` uses) through deploy/compose-check, built here with Go. For the tests of
the deployment's files (tests/unit/test_deployment.py, tests/e2e/deployment/test_deployment_job_options.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from auditpipe import paths

COMPOSE = paths.REPO / "docker-compose.yml"
ENV = paths.REPO / ".env"
SECRETS_EXAMPLE = paths.REPO / ".env.example"
DEPLOY_CONFIG = paths.REPO / "deploy" / "compose" / "auditpipe.yaml"


def env_file(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def build_compose_check(out_dir: Path) -> Path:
    go = shutil.which("go")
    assert go, "the deployment check builds deploy/compose-check with Go (README: a JDK 17, Maven and Go)"
    out = out_dir / "compose-check"
    r = subprocess.run([go, "build", "-o", str(out), "."], cwd=paths.REPO / "deploy" / "compose-check",
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def load(compose_check: Path, *profiles: str, secrets: bool = True) -> subprocess.CompletedProcess:
    """compose-check with the committed .env and, with ``secrets``, .env.example's placeholder passwords."""
    args = [str(compose_check), "--env-file", str(ENV)]
    if secrets:
        args += ["--env-file", str(SECRETS_EXAMPLE)]
    for p in profiles:
        args += ["--profile", p]
    # a clean environment: nothing of this machine's may fill in a variable
    return subprocess.run([*args, str(COMPOSE)], capture_output=True, text=True, timeout=120, cwd=paths.REPO,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})


def project(compose_check: Path, *profiles: str) -> dict:
    r = load(compose_check, *profiles)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)
