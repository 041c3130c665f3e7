"""Kafka with SASL: every client of the pipeline (rsyslog, the catch-up, the job's source and
sinks, the CLI) authenticates, on a stack of its own whose broker accepts nothing else."""

from __future__ import annotations

import os

import pytest
from auditpipe.tools.simulate import simulate
from stack import running_stack

pytestmark = pytest.mark.e2e

# below Linux's ephemeral range (32768-60999), which outgoing connections take their own ends from
PORTS = {"kafka": 25192, "controller": 25193, "store": 27417, "flink": 25181}
PASSWORD_ENV = "AUDITPIPE_TEST_KAFKA_PASSWORD"


@pytest.fixture(scope="module")
def sasl_stack(tmp_path_factory):
    os.environ[PASSWORD_ENV] = 'a "quoted" pass\\word'  # the quoting of every config it goes into
    try:
        with running_stack(tmp_path_factory.mktemp("sasl"), PORTS, ["sasl-db"], "auditpipe_sasl",
                           kafka_extra=", security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, "
                                       f"username: auditpipe, password_env: {PASSWORD_ENV}}}") as s:
            yield s
    finally:
        os.environ.pop(PASSWORD_ENV, None)


def test_the_pipeline_runs_end_to_end_over_sasl(sasl_stack):
    server = "sasl-db"
    m = simulate(sasl_stack.log_path(server), rate=1000, duration=3, speedup=10, seed=81, rotate_on_size=256 * 1024,
                 rotations=20, malformed=2)
    sasl_stack.assert_stored_and_counted_exactly_once(server, m)
    dead = sasl_stack.wait_for("2 dead letters", lambda: (len(d := sasl_stack.dead_letters(server)) >= 2, d))
    assert len(dead) == 2
    on_topic = [d for d in sasl_stack.dead_letters_on_topic() if d.get("server") == server]
    assert len(on_topic) == 2, "the job's dead-letter producer authenticated too"
    status = {r["component"]: r for r in sasl_stack.status()}
    assert status["kafka"]["health"] == "ok" and status["flink"]["health"] == "ok", status


def test_a_client_without_the_password_is_refused(sasl_stack):
    from confluent_kafka.admin import AdminClient

    assert AdminClient(sasl_stack.cfg.kafka_client).list_topics(timeout=10).topics, "the right password works"
    errors: list = []
    wrong = AdminClient({**sasl_stack.cfg.kafka_client, "sasl.password": "wrong", "log_level": 0,
                         "error_cb": errors.append})
    with pytest.raises(Exception):
        wrong.list_topics(timeout=10)
    sasl_stack.wait_for("the broker's refusal", lambda: (wrong.poll(1) is not None and
                                                         any("auth" in str(e).lower() for e in errors), errors),
                        timeout=30, every=0)
    plain = AdminClient({"bootstrap.servers": sasl_stack.cfg.kafka_bootstrap, "log_level": 0})
    with pytest.raises(Exception):
        plain.list_topics(timeout=5)


def test_fluentd_ships_over_sasl(sasl_stack, tmp_path):
    from fluentd import Fluentd, fluentd_command

    server = "sasl-fluentd"
    fluentd = Fluentd(fluentd_command(sasl_stack.cfg.tools_dir), sasl_stack, server, tmp_path)
    fluentd.start()
    try:
        m = simulate(fluentd.log, rate=1000, duration=3, speedup=5, seed=82, rotate_on_size=0)
        sasl_stack.assert_stored_and_counted_exactly_once(server, m, collector="fluentd")
    finally:
        fluentd.stop()
    assert not fluentd.problems(), "\n".join(fluentd.problems())
