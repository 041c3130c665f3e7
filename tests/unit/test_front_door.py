"""README.md is the front door: what auditpipe is, the picture, the two commands and where to go
next, read in two minutes. What it does not hold is in docs/, where it links."""

from __future__ import annotations

import re

from auditpipe import paths

MOST_LINES = 150


def test_the_readme_reads_in_two_minutes():
    lines = (paths.REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MOST_LINES, f"README.md has {len(lines)} lines, at most {MOST_LINES}: move detail into docs/"


def test_every_doc_the_readme_names_exists():
    text = (paths.REPO / "README.md").read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"\b(?:docs|bench|schemas|tests)/[\w./-]*\w", text)))
    assert len(named) > 10, named
    assert [n for n in named if not (paths.REPO / n).exists()] == []
