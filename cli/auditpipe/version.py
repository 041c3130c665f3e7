"""What `auditpipe --version` says: the release and the commit of the code that runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from auditpipe import __version__, bundle, paths

HERE = Path(__file__).resolve().parent


def commit() -> str | None:
    """The commit of this code, with ", with uncommitted changes" when the checkout differs from it; for an
    installed wheel the commit it was built from; None where neither is known (or without git)."""
    if not paths.IN_CHECKOUT:
        recorded = paths.BUNDLE / bundle.COMMIT
        return (recorded.read_text().strip() or None) if recorded.exists() else None
    try:
        head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        changed = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    dirty = ", with uncommitted changes" if changed.returncode == 0 and changed.stdout.strip() else ""
    return head.stdout.strip() + dirty


def describe() -> str:
    """`auditpipe 0.2.0 (commit 0123456789ab)`; without the commit where none is known."""
    c = commit()
    return f"auditpipe {__version__}" + (f" (commit {c})" if c else "")
