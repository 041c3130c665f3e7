"""The fault suite's stack (tests/stack.py), one for its modules: its own ports and state, so that
killing its parts cannot disturb the end-to-end tests."""

from __future__ import annotations

import pytest
from stack import StackOfTheSession

PORTS = {"kafka": 29192, "controller": 29193, "store": 27317, "flink": 28181}
SERVERS = ["fault-collector", "fault-kafka", "fault-store", "fault-frozen-store", "fault-rotation",
           "fault-malformed", "fault-fast-rotation", "fault-xml-stamped", "fault-alerts", "fault-lost",
           "fault-lost-restart"]
FORMATS = {"fault-xml-stamped": "percona-xml"}
# syslog receivers: logger's (test_killed_parts.py) and a real MariaDB's local syslog's (test_mariadb_syslog.py)
LISTEN_TCP, LISTEN_MARIADB = "tcp://127.0.0.1:29514", "tcp://127.0.0.1:29515"
# the job's longest wait for the store's answer to a write (sink.request-timeout; shipped: 60 s), shorter
# here: a frozen store must outlast it for its writes to time out and be retried, and each second of it
# is a second of the suite. What the timeout does is the same at 20 s as at 60.
SINK_REQUEST_TIMEOUT_S = 20


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
