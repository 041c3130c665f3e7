"""The test tree itself: pytest imports test modules by basename (rootdir import mode, no
__init__.py files), so two test files with the same name in different folders stop the whole
run at collection."""
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_unique_basename():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if ".venv" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []
