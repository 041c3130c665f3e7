"""The end-to-end tests' stack (tests/helpers/stack.py): one for the whole session, on ports of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.e2e_stack import (
    FORMATS,
    LISTEN,
    LISTEN_MTLS,
    LISTEN_TLS,
    MTLS_PEER,
    PORTS,
    SERVERS,
    mutual_tls_files,
    receiver_certificate,
    tls_receiver_possible,
)
from helpers.stack import StackOfTheSession

SESSION_STACK = StackOfTheSession("session_stack")
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items):
    """The modules on stacks of their own (a cluster, SASL, a state backend move) run after the modules
    on the session's stack, which then stops (StackOfTheSession) rather than idling beside theirs;
    each group in name order."""
    on_session = {i.path for i in items if HERE in i.path.parents and "session_stack" in i.fixturenames}
    ours = iter(sorted((i for i in items if HERE in i.path.parents), key=lambda i: i.path not in on_session))
    items[:] = [next(ours) if HERE in i.path.parents else i for i in items]


@pytest.fixture(scope="session")
def session_stack(tmp_path_factory):
    # room for the largest single test's events: the capped collection must not trim what a test counts
    # (it trims the oldest inserts: earlier tests' events go first). FerretDB counts about 4.1 KB per event
    # (docs/store.md): 256 MiB held 64,800 of the Fluentd restart test's 80,000 (found by the archive, which
    # held them all); 640 MiB holds about 160,000. Not more: FerretDB scans the whole collection for every
    # query (docs/store.md), and with 2000 MiB the session's later query tests took several times as long
    # (the e2e suite grew from about 35 to over 80 minutes).
    root = tmp_path_factory.mktemp("stack")
    listen = list(LISTEN)
    if tls_receiver_possible():  # else test_syslog_receiver.py's TLS test skips, saying why
        cert, key = receiver_certificate(root / "tls")
        listen.append({"listen": LISTEN_TLS, "server": "e2e-syslog-tls", "tls_cert": str(cert), "tls_key": str(key)})
        mtls = mutual_tls_files(root / "mtls")
        listen.append({"listen": LISTEN_MTLS, "server": "e2e-syslog-mtls", "tls_cert": str(mtls["receiver"][0]),
                       "tls_key": str(mtls["receiver"][1]), "tls_ca": str(mtls["ca"][0]), "tls_peers": [MTLS_PEER]})
    # the event stream in every format (tests/e2e/job/test_event_stream.py): every module's events go through it
    yield SESSION_STACK.start(root, PORTS, SERVERS, "auditpipe_e2e", capped_mb=640, formats=FORMATS, listen=listen,
                              extra="stream: {formats: [auditpipe, ocsf, ecs]}")
    SESSION_STACK.stop()


@pytest.fixture(scope="module")
def stack(session_stack):
    """The session's stack, its events and what the job derives from them emptied for each module:
    FerretDB reads every event for every filtered query (docs/store.md): about 14 s each at the 54,000
    events of the demo, and the session holds up to 160,000, whoever's events a query looks for (each
    formats test takes 11-17 s with this, about 3 minutes without). Chain heads are kept."""
    session_stack.empty_events()
    session_stack.empty_derived()
    yield session_stack

