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


BENCH_MOST_LINES = 300


def test_the_bench_readme_is_a_reference_not_a_log():
    lines = (paths.REPO / "bench" / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= BENCH_MOST_LINES, f"bench/README.md has {len(lines)} lines, at most {BENCH_MOST_LINES}"


def test_every_section_of_the_bench_readme_that_is_named_elsewhere_exists():
    """Docs, code and the benches' own output name bench/README.md's sections ("The long run"): each
    name leads to a heading (a name a string literal cuts short, to the start of one)."""
    headings = [re.sub(r"\s+", " ", h).strip() for h in re.findall(
        r"^#+ (.+)$", (paths.REPO / "bench" / "README.md").read_text(encoding="utf-8"), re.M)]
    named = re.compile(r'bench/README\.md,?\s+(?:figure \d+,\s+)?\\?"([^"\\]+)')
    wrong = []
    for folder, pattern in (("docs", "*.md"), ("cli", "*.py"), ("bench", "*.py"), ("pipelines", "*.java"),
                            ("tests", "*.py"), (".", "README.md")):
        for f in sorted((paths.REPO / folder).rglob(pattern) if folder != "." else [paths.REPO / pattern]):
            if ".venv" in f.parts or "target" in f.parts:
                continue
            # a name broken over lines of a comment: the lines' comment marks go
            text = re.sub(r"\s+", " ", re.sub(r"\n\s*(?:\*|#|//)(?!/)\s?", " ", f.read_text(encoding="utf-8")))
            for name in named.findall(text):
                name = name.strip()
                if name and not any(h == name or h.startswith(name) for h in headings):
                    wrong.append(f"{f.relative_to(paths.REPO)}: {name!r}")
    assert wrong == [], "\n".join(wrong)
