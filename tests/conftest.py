import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))
sys.path.insert(0, str(REPO / "tests"))  # tests/stack.py (the test stack), tests/oracle.py (the oracle)

from stack import StackOfTheSession  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    StackOfTheSession.after_test(item)  # a folder's stack stops after its last test, not idle through the rest


@pytest.fixture
def events_emptied_per_test(stack):
    """The events collection emptied before each test, for modules of tests that each write many events
    (Fluentd's restart test alone 80,000): FerretDB reads the whole collection for every filtered query
    (docs/store.md), so each test's waits and queries read only its own events (in the fault suite, a
    test that found the earlier tests' events in the store took several times as long). ``stack``: the
    folder's own (tests/e2e, tests/faults)."""
    stack.empty_events()
