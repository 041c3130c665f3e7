"""The test tree itself: pytest imports test modules by basename (rootdir import mode, no
__init__.py files), so two test files with the same name in different folders stop the whole
run at collection; and the docs name tests by their paths, which must lead to them."""
import re
from collections import Counter
from pathlib import Path

from auditpipe import paths

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_unique_basename():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if ".venv" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []


def test_every_test_file_the_docs_name_exists():
    """A doc that backs a claim with a test names it by path: the path must lead to it (files move)."""
    named = re.compile(r"\btests/[\w/]+\.py\b")
    missing = []
    for doc in [paths.REPO / "README.md", *sorted((paths.REPO / "docs").glob("*.md")), paths.REPO / "bench" / "README.md"]:
        for path in sorted(set(named.findall(doc.read_text(encoding="utf-8")))):
            if not (paths.REPO / path).is_file():
                missing.append(f"{doc.relative_to(paths.REPO)}: {path}")
    assert not missing, "\n".join(missing)
