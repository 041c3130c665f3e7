"""The fault suite's stack (tests/helpers/stack.py), one for its modules: its own ports and state, so that
killing its parts cannot disturb the end-to-end tests."""

from __future__ import annotations

import pytest
from helpers.faults_stack import FORMATS, LISTEN_MARIADB, LISTEN_TCP, PORTS, SERVERS, SINK_REQUEST_TIMEOUT_S
from helpers.stack import StackOfTheSession

FAULTS_STACK = StackOfTheSession("faults_stack")


@pytest.fixture(scope="session")
def faults_stack(tmp_path_factory):
    # one for the suite's modules (each stack's start and stop is a minute or more on 2 busy cores);
    # room for every event of a module's tests: the capped collection must not trim what a test counts
    yield FAULTS_STACK.start(tmp_path_factory.mktemp("faults"), PORTS, SERVERS, "auditpipe_faults", capped_mb=4096,
                             formats=FORMATS, listen=[{"listen": LISTEN_TCP, "server": "fault-syslog"},
                                                      {"listen": LISTEN_MARIADB, "server": "fault-mariadb-syslog"}],
                             job_options=f", sink.request-timeout: {SINK_REQUEST_TIMEOUT_S}s")
    FAULTS_STACK.stop()


@pytest.fixture(scope="module")
def stack(faults_stack):
    """The suite's stack, its events and what the job derives from them emptied for each module (as
    tests/e2e/conftest.py does): FerretDB reads every event for every filtered query (docs/store.md).
    Every part a module kills or freezes is back before its test ends."""
    faults_stack.empty_events()
    faults_stack.empty_derived()
    yield faults_stack
