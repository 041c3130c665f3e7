"""What the command-line tests share: the CLI run as a user runs it."""

import subprocess
import sys

import pytest

from auditpipe import paths


def run(*args, env=None) -> subprocess.CompletedProcess:
    """`auditpipe ARGS` in the repository, its output captured."""
    return subprocess.run([sys.executable, "-m", "auditpipe", *args], capture_output=True, text=True,
                          cwd=paths.REPO, env=env)


@pytest.fixture
def auditpipe():
    return run
