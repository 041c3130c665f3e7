"""`auditpipe setup`: install what the local stack needs (Kafka, Flink, FerretDB, rsyslog).

Installs what is missing into tools_dir: Kafka and the Flink runtime from Maven Central, the Flink
job jar (built here), FerretDB built from the Go module proxy, rsyslog with its Kafka output from
Debian packages. Idempotent.
"""

from __future__ import annotations

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    from auditpipe.stack import lifecycle

    lifecycle.setup(app.config)
    app.info("setup: done")
    return 0


def register(sub) -> None:
    documented(sub, __doc__,
               ("./auditpipe setup", "./auditpipe --config my.yaml setup"), run)
