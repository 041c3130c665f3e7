"""The project speaks in the present: no text in it tells how it was developed (numbered rounds or
sessions of work, ticket numbers, "before this", CI anecdotes). That history is in git log."""

from __future__ import annotations

import re
import subprocess

from auditpipe import paths

HISTORY = re.compile("|".join((
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|previous|last)"
    r" (session|round)s?\b",
    r"\bround [0-9]+\b",
    r"\bissues? #?[0-9]+\b",
    r"\bbefore this(,| change\b| existed\b| fix\b)",
    r"(^|\"\"\"|# )Before: ",
    r"\bused to\b",
    r"\bearlier version\b",
    r"(?-i:\bCI\b)",
    r"\bour (build )?machines\b",
)), re.IGNORECASE)
TEXT = (".md", ".py", ".java", ".yml", ".yaml", ".json", ".conf", ".tmpl", ".xml", ".j2", ".toml", ".rb", ".csv")


def tracked_text_files():
    out = subprocess.run(["git", "ls-files"], cwd=paths.REPO, capture_output=True, text=True, check=True).stdout
    for name in out.splitlines():
        if name.endswith(TEXT) and not name.startswith(".ci/") and not name.endswith("test_docs_present.py"):
            yield name


def test_no_text_tells_the_projects_history():
    found = []
    for name in tracked_text_files():
        path = paths.REPO / name
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert found == []


def test_the_pattern_finds_what_it_is_for():
    for text in ("the ninth session's runs", "issue 11", "CI once failed", "Before this, the job",
                 "on our build machines", "round 3", '"""Before: a restart lost'):
        assert HISTORY.search(text), text
    for text in ("a database session", "java.ci.totalTime", "the sessions of a server"):
        assert HISTORY.search(text) is None, text
