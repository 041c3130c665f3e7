"""The Python tree is clean by ruff, with the rules pyproject.toml's [tool.ruff] chooses: pycodestyle,
pyflakes, import order, bugbear and pyupgrade. `.venv/bin/ruff check --fix` mends what it can."""

from __future__ import annotations

import subprocess
import sys

from auditpipe import paths


def test_ruff_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(paths.REPO)],
                       cwd=paths.REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
