"""Kafka with SASL and ACLs: every client of the pipeline (rsyslog, the catch-up, Fluentd, the job's
sources and sinks, the CEF forwarder, the CLI) authenticates, each part as its own user (kafka.security.principals)
allowed only what it does, on a stack of its own whose broker accepts nothing else. The
administrator and the collector (rsyslog: its librdkafka cannot do SCRAM with Kafka 4) log in with
PLAIN; the job, and Fluentd as the deployment's collector, with SCRAM-SHA-512, as in the
deployment, credentials made through the administrator."""

from __future__ import annotations

import os

import pytest
from confluent_kafka import KafkaException
from helpers.stack import running_stack

from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

# below Linux's ephemeral range (32768-60999), which outgoing connections take their own ends from
PORTS = {"kafka": 25192, "controller": 25193, "store": 27417, "flink": 25181}
PASSWORD_ENV = "AUDITPIPE_TEST_KAFKA_PASSWORD"
PASSWORDS = {PASSWORD_ENV: 'a "quoted" pass\\word',  # the quoting of every config it goes into
             "AUDITPIPE_TEST_KAFKA_COLLECTOR": "collector's own", "AUDITPIPE_TEST_KAFKA_JOB": "the job's own",
             "AUDITPIPE_TEST_KAFKA_FORWARDER": "the forwarder's own", "AUDITPIPE_TEST_KAFKA_SIEM": "the SIEM's own"}


@pytest.fixture(scope="module")
def sasl_stack(tmp_path_factory):
    os.environ.update(PASSWORDS)
    try:
        with running_stack(tmp_path_factory.mktemp("sasl"), PORTS, ["sasl-db"], "auditpipe_sasl",
                           kafka_extra=", security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, "
                                       f"username: auditpipe, password_env: {PASSWORD_ENV}, principals: {{"
                                       "collector: {username: auditpipe-collector, "
                                       "password_env: AUDITPIPE_TEST_KAFKA_COLLECTOR}, "
                                       "job: {username: auditpipe-job, password_env: AUDITPIPE_TEST_KAFKA_JOB, "
                                       "sasl_mechanism: SCRAM-SHA-512}, "
                                       "forwarder: {username: auditpipe-forwarder, password_env: AUDITPIPE_TEST_KAFKA_FORWARDER, "
                                       "sasl_mechanism: SCRAM-SHA-512}, "
                                       "siem_ocsf: {username: auditpipe-siem, password_env: AUDITPIPE_TEST_KAFKA_SIEM}}}",
                           # the event stream: the job's transactions under its own user (ACL on their prefix)
                           extra="stream: {formats: [ocsf]}") as s:
            yield s
    finally:
        for name in PASSWORDS:
            os.environ.pop(name, None)


def test_the_pipeline_runs_end_to_end_over_sasl(sasl_stack):
    server = "sasl-db"
    m = simulate(sasl_stack.log_path(server), rate=1000, duration=3, speedup=10, seed=81, rotate_on_size=256 * 1024,
                 rotations=20, malformed=2)
    sasl_stack.assert_stored_and_counted_exactly_once(server, m)
    dead = sasl_stack.wait_for("2 dead letters", lambda: (len(d := sasl_stack.dead_letters(server)) >= 2, d))
    assert len(dead) == 2
    on_topic = [d for d in sasl_stack.dead_letters_on_topic() if d.get("server") == server]
    assert len(on_topic) == 2, "the job's dead-letter producer authenticated too"
    # the event stream's transactional writer too: each stored event once on the OCSF topic, read committed
    from auditpipe.stack.kafka.stream import read_committed

    ids = {f"{server}/{d['record_id']}" for d in sasl_stack.events(server)}
    got = read_committed(sasl_stack.cfg, ("ocsf",), lambda _role, key: key in ids,
                         lambda out: ids <= {x.key().decode() for x in out["ocsf"]}, group="tests-sasl-stream")
    assert sorted(x.key().decode() for x in got["ocsf"]) == sorted(ids)
    status = {r["component"]: r for r in sasl_stack.status()}
    assert status["kafka"]["health"] == "ok" and status["flink"]["health"] == "ok", status


def test_a_client_without_the_password_is_refused(sasl_stack):
    from confluent_kafka.admin import AdminClient

    assert AdminClient(sasl_stack.cfg.kafka_client).list_topics(timeout=10).topics, "the right password works"
    errors: list = []
    wrong = AdminClient({**sasl_stack.cfg.kafka_client, "sasl.password": "wrong", "log_level": 0,
                         "error_cb": errors.append})
    with pytest.raises(KafkaException):
        wrong.list_topics(timeout=10)
    sasl_stack.wait_for("the broker's refusal", lambda: (wrong.poll(1) is not None and
                                                         any("auth" in str(e).lower() for e in errors), errors),
                        timeout=30, every=0)
    plain = AdminClient({"bootstrap.servers": sasl_stack.cfg.kafka_bootstrap, "log_level": 0})
    with pytest.raises(KafkaException):
        plain.list_topics(timeout=5)
    # a SCRAM user's password does not open PLAIN: the broker holds no PLAIN password for it
    job = sasl_stack.cfg.kafka_client_for("job")
    assert job["sasl.mechanisms"] == "SCRAM-SHA-512"
    assert AdminClient({**job, "log_level": 0}).list_topics(timeout=10).topics, "SCRAM works"
    as_plain = AdminClient({**job, "sasl.mechanisms": "PLAIN", "log_level": 0})
    with pytest.raises(KafkaException):
        as_plain.list_topics(timeout=5)


def test_scram_credentials_set_by_anyone_but_the_administrator_are_refused_by_name(sasl_stack, monkeypatch):
    from auditpipe.errors import UserError
    from auditpipe.stack.kafka import kafka_acls

    cfg = sasl_stack.cfg
    assert kafka_acls.ensure_scram_credentials(cfg) == [], "the administrator may"
    monkeypatch.setattr(type(cfg), "kafka_client", property(lambda self: self.kafka_client_for("job")))
    scram = sorted(p["username"] for part, p in cfg.kafka["security"]["principals"].items()
                   if cfg.kafka_mechanism(part).startswith("SCRAM-"))
    assert len(scram) > 1, "several users: the order shows"
    with pytest.raises(UserError, match="did not take the SCRAM credentials of users? ") as refused:
        kafka_acls.ensure_scram_credentials(cfg)
    assert f"users {', '.join(scram)}: " in str(refused.value), "each refused user named, in order"


def test_the_local_collector_refuses_scram_its_librdkafka_cannot_do(tmp_path):
    from auditpipe import config
    from auditpipe.errors import UserError
    from auditpipe.stack.collector import rsyslog

    f = tmp_path / "auditpipe.yaml"
    f.write_text("kafka: {security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: a, password_env: A, "
                 "principals: {collector: {username: c, password_env: C, sasl_mechanism: SCRAM-SHA-512}}}}\n")
    version = rsyslog.librdkafka_version()
    assert version is not None, "rsyslog-kafka's librdkafka"
    if version >= rsyslog.SCRAM_LIBRDKAFKA:
        rsyslog.refuse_scram_it_cannot_do(config.load(f))
    else:
        with pytest.raises(UserError, match="principals.collector.sasl_mechanism: SCRAM-SHA-512 does not work"):
            rsyslog.refuse_scram_it_cannot_do(config.load(f))


def test_fluentd_ships_over_sasl(sasl_stack, tmp_path):
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    from helpers.fluentd import Fluentd, fluentd_command, security_environment

    from auditpipe.stack.kafka import kafka_acls, topics

    # the deployment's collector: Fluentd (ruby-kafka) as the collector's user with SCRAM-SHA-512,
    # credentials set through the administrator as init sets them
    cfg = sasl_stack.cfg
    user, password = cfg.kafka_principal("collector")[0], cfg.kafka_password("collector")
    admin = topics.admin(cfg.kafka_client)
    for f in admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, kafka_acls.SCRAM_ITERATIONS),
            password.encode())]).values():
        f.result()
    server = "sasl-fluentd"
    fluentd = Fluentd(fluentd_command(cfg.tools_dir), sasl_stack, server, tmp_path,
                      env={**security_environment(cfg), "AUDITPIPE_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512"})
    fluentd.start()
    try:
        m = simulate(fluentd.log, rate=1000, duration=3, speedup=5, seed=82, rotate_on_size=0)
        sasl_stack.assert_stored_and_counted_exactly_once(server, m, collector="fluentd")
    finally:
        fluentd.stop()
    assert not fluentd.problems(), "\n".join(fluentd.problems())


def refused(client_config: dict, act) -> str:
    """The error the broker gives ``act`` (a function of a client config), or "" when it is allowed."""

    try:
        act({**client_config, "log_level": 0})
    except KafkaException as e:
        return e.args[0].name()
    return ""


def produce(topic: str):
    def act(conf: dict):
        from confluent_kafka import Producer

        errors = []
        p = Producer({**conf, "message.timeout.ms": 10000})
        p.produce(topic, b"{\"acl_test\": true}", key=b"acl-test", on_delivery=lambda err, msg: errors.append(err))
        p.flush(15)
        if errors and errors[0] is not None:
            raise KafkaException(errors[0])
    return act


def consume(topic: str, group: str = "acl-test"):
    """Reads ``topic`` from its start in ``group`` until it has read what there is (at most 10 s), then
    commits where it got to. librdkafka answers a commit made before it found the group's coordinator
    with _WAIT_COORD: the commit is tried again for up to 10 s; a group the user may not use stays so."""
    def act(conf: dict):
        import time

        from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

        c = Consumer({**conf, "group.id": group, "enable.auto.commit": False})
        try:
            c.assign([TopicPartition(topic, 0, 0)])
            last = None
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                msg = c.poll(0.5)
                if msg is None:
                    if last is not None:
                        break  # what the topic holds is read
                    continue
                if msg.error():
                    raise KafkaException(msg.error())
                last = msg
            if last is None:
                return
            deadline = time.monotonic() + 10
            while True:
                try:
                    c.commit(message=last, asynchronous=False)
                    return
                except KafkaException as e:
                    if e.args[0].code() != KafkaError._WAIT_COORD or time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        finally:
            c.close()
    return act


def read(conf: dict, topic: str, group: str, seconds: float = 10) -> tuple[int, str]:
    """(messages read from ``topic``'s first partition from its start in ``group``, the first error the client
    reported, "" for none): a refusal shows as no message and its error, whichever way librdkafka reports it."""
    import time

    from confluent_kafka import Consumer, TopicPartition

    errors: list[str] = []
    c = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "log_level": 0,
                  "error_cb": lambda e: errors.append(e.name())})
    count = 0
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not errors:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                errors.append(msg.error().name())
            else:
                count += 1
                if count >= 1 and not errors:
                    c.commit(message=msg, asynchronous=False)
                    break
    except Exception as e:  # noqa: BLE001 - the commit's refusal
        name = getattr(e.args[0], "name", None) if e.args else None
        errors.append(name() if callable(name) else str(e))
    finally:
        c.close()
    return count, (errors[0] if errors else "")


def described(conf: dict, topic: str) -> str:
    """The error the broker gives for ``topic`` in a metadata request as ``conf``'s user, "" for none."""
    from confluent_kafka.admin import AdminClient

    meta = AdminClient({**conf, "log_level": 0}).list_topics(topic, timeout=15).topics[topic]
    return meta.error.name() if meta.error is not None else ""


def create_topic(conf: dict):
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient(conf)
    for f in client.create_topics([NewTopic("acl-test-topic", 1, 1)], request_timeout=15).values():
        try:
            f.result()
        except KafkaException as e:
            raise KafkaException(e.args[0]) from None


def test_each_part_may_do_only_what_it_does(sasl_stack):
    """The collector produces to the raw topic only; the job writes its own topics but not the raw
    one; the forwarder reads the alerts in its group; a SIEM's user of the OCSF stream reads that topic
    alone, in groups of its prefix; none creates topics or reads another's; the administrator may do
    anything."""
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka import kafka_acls, topics

    cfg = sasl_stack.cfg
    raw, alerts, dead = (topics.topic_name(r) for r in ("raw", "alerts", "deadletter"))
    collector, job = cfg.kafka_client_for("collector"), cfg.kafka_client_for("job")
    assert collector["sasl.username"] == "auditpipe-collector" and job["sasl.username"] == "auditpipe-job"
    assert refused(collector, produce(alerts)) == "TOPIC_AUTHORIZATION_FAILED", "a forged alert"
    assert refused(collector, produce(dead)) == "TOPIC_AUTHORIZATION_FAILED"
    assert refused(collector, consume(alerts)) in ("TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED")
    assert refused(job, produce(raw)) == "TOPIC_AUTHORIZATION_FAILED", "a forged audit line"
    for who in (collector, job, cfg.kafka_client_for("forwarder")):
        assert refused(who, create_topic) in ("TOPIC_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED")
    assert refused(cfg.kafka_client, produce(alerts)) == "", "the administrator (the CLI) may"
    # the CEF forwarder reads the alerts in its group, and does nothing else
    from auditpipe.stack.alerts import forwarder

    fwd = cfg.kafka_client_for("forwarder")
    assert fwd["sasl.username"] == "auditpipe-forwarder"
    assert refused(fwd, produce(alerts)) == "TOPIC_AUTHORIZATION_FAILED", "a forged alert"
    assert refused(fwd, consume(alerts, "another-group")) == "GROUP_AUTHORIZATION_FAILED"
    # (its ACLs: READ and DESCRIBE on the alerts topic and READ on its group, the comparison below)
    # the verifier's integrity alerts go out as the job (idempotent, acks all): allowed
    from datetime import datetime, timezone

    from auditpipe.evidence.chain import Finding
    from auditpipe.stack import verification

    alert = verification.alert_of("store", Finding("DELETED", "sasl-db", 7, None, "link 7 is missing"),
                                  datetime.now(timezone.utc))
    verification._send(cfg, [alert])
    sasl_stack.wait_for("the integrity alert on the topic", lambda: (
        alert["_id"] in (ids := {a.get("_id") for a in sasl_stack.topic_messages("alerts")}), len(ids)))
    assert refused(fwd, consume(alerts, forwarder.GROUP)) == "", "the forwarder reads it in its group"
    # a SIEM's read-only user of the OCSF stream reads that topic in a group of its prefix, and nothing else:
    # counted against what the administrator reads of the same topics (the raw topic: the lines unmasked)
    siem = cfg.kafka_client_for("siem_ocsf")
    ocsf, group = topics.topic_name("ocsf"), f"{kafka_acls.SIEM_GROUP_PREFIX}ocsf-splunk"
    assert siem["sasl.username"] == "auditpipe-siem"
    assert refused(cfg.kafka_client, produce(ocsf)) == "", "something on the feed for the SIEM to read"
    assert read(siem, ocsf, group) == (1, ""), "read and committed in a group of its prefix"
    # in another group the commit is refused: librdkafka reports the refused coordinator lookup as either
    assert refused(siem, consume(ocsf, "another-group")) in ("GROUP_AUTHORIZATION_FAILED", "_WAIT_COORD")
    assert refused(siem, produce(ocsf)) == "TOPIC_AUTHORIZATION_FAILED", "a forged event in the SIEM's feed"
    assert read(cfg.kafka_client, alerts, "acl-test-admin")[0] >= 1, "the alerts the administrator wrote above"
    for topic in (raw, alerts):  # not even described to it, and nothing read
        assert described(siem, topic) == "TOPIC_AUTHORIZATION_FAILED", topic
        assert read(siem, topic, group)[0] == 0, topic
    # what the broker holds is exactly what kafka_acls asks for
    from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    client = topics.admin(cfg.kafka_client)
    held = client.describe_acls(everything, request_timeout=15).result()
    held = sorted({(b.principal, b.restype.name, b.name, b.operation.name) for b in held})
    assert held == kafka_acls.wanted(cfg, kafka_grants())


def test_a_forwarder_the_broker_refuses_names_the_refusal(sasl_stack, tmp_path):
    """The forwarder as a user without the alerts topic's ACLs (the collector's): `forward --once` ends
    with Kafka's refusal named, not silence."""
    import yaml

    from auditpipe import config
    from auditpipe.errors import UserError
    from auditpipe.stack.alerts import forwarder

    data = yaml.safe_load(sasl_stack.cfg_file.read_text())
    principals = data["kafka"]["security"]["principals"]
    principals["forwarder"] = principals.pop("collector")  # one user per part: this config's forwarder alone
    data["alerts"] = {"cef": {"target": "tcp://127.0.0.1:9"}}
    f = sasl_stack.cfg_file.parent / "refused-forwarder.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match="AUTHORIZATION") as e:
        forwarder.run(config.load(f), once=True, log=lambda m: None)
    assert "confirmed" in str(e.value)
