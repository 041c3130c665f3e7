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


#: how the tests and the bench write a port their stacks or servers listen on
PORT = re.compile(r'"(?:kafka|controller|store|flink)":\s*(\d+)|rpc_port:\s*(\d+)|127\.0\.0\.1:(\d+)'
                  r'|\b[A-Z_]*PORTS?\b(?:,\s*[A-Z_]+)*\s*=\s*(\d+(?:,\s*\d+)*)\s*$|MariaDB\([^,\n]+,\s*(\d+)', re.M)


def test_every_fixed_port_of_the_tests_and_the_bench_is_below_the_ephemeral_range():
    """A port in Linux's ephemeral range (32768-60999) may be held, at the moment a stack starts, by
    an outgoing connection of any program on the machine: `up` then refuses it (process.py)."""
    from auditpipe.process import EPHEMERAL_PORTS

    found = {}
    for path in sorted([*TESTS.rglob("*.py"), *(paths.REPO / "bench").glob("*.py")]):
        if ".venv" in path.parts:
            continue
        for m in PORT.finditer(path.read_text(encoding="utf-8")):
            for port in re.findall(r"\d+", next(g for g in m.groups() if g)):
                found.setdefault(int(port), set()).add(path.relative_to(paths.REPO).as_posix())
    assert len(found) > 30, f"the pattern finds the ports: {sorted(found)}"
    low, high = EPHEMERAL_PORTS
    assert {p: sorted(f) for p, f in found.items() if low <= p <= high} == {}
