"""What every test folder shares: its stack stopped after its last test. Imports come from the checkout's
cli/ and tests/ (pyproject.toml's pythonpath): tests/helpers is the tests' own package."""

import pytest
from helpers.stack import StackOfTheSession


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
