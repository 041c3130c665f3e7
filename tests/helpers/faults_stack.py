"""The fault suite's stack (tests/faults/conftest.py starts it): its ports, servers, formats and
syslog receivers, and the store's answer time its frozen-store tests outlast."""

from __future__ import annotations

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
