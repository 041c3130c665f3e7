"""Configuration: validation names the bad key, defaults come from the schema, docs are generated."""

import pytest

from auditpipe import config, paths
from auditpipe.errors import UserError
from auditpipe.stack.flink import job_settings


def write(tmp_path, text):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(text)
    return f


def refused(tmp_path, text: str) -> str:
    """The error that a config file of ``text`` is refused with."""
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, text))
    return str(e.value)


def test_empty_file_gets_every_default(tmp_path):
    cfg = config.load(write(tmp_path, ""))
    assert cfg.kafka["port"] == 9092
    assert cfg.store["events_collection"] == "audit_events"
    assert cfg.store["events_capped_size_mb"] == 1024
    assert cfg.flink["rest_port"] == 8081
    assert cfg.state_dir == (tmp_path / ".auditpipe/state").resolve()
    assert cfg.store_uri == "mongodb://127.0.0.1:27017/?directConnection=true"


def test_repository_config_is_valid():
    assert config.load(paths.DEFAULT_CONFIG).data["sources"] == []


def test_unknown_key_is_named_with_its_path(tmp_path):
    message = refused(tmp_path, "kafka:\n  prot: 9092\n")
    assert "kafka.prot: unknown key" in message
    assert "port" in message  # the allowed keys are listed


def test_bad_value_is_named(tmp_path):
    assert "flink.checkpoint_interval" in refused(tmp_path, "flink:\n  checkpoint_interval: soon\n")


def test_bad_source_entry_is_named(tmp_path):
    assert "sources.0.path" in refused(tmp_path, "sources:\n  - path: relative/audit.log\n    server: db-01\n")
    assert "sources[0].server: a file source needs its server's name" in refused(tmp_path, "sources:\n  - path: /a/audit.log\n")


def test_port_clash_is_refused(tmp_path):
    assert "port 8081 is already used by" in refused(tmp_path, "kafka:\n  port: 8081\n")


def test_cluster_mode_parts_in_start_order_and_its_rpc_port_checked(tmp_path):
    from auditpipe.stack.components import all_components

    assert [c.name for c in all_components(config.load(write(tmp_path, "")))] == ["kafka", "store", "flink", "collector"]
    cfg = config.load(write(tmp_path, "flink: {mode: cluster, taskmanagers: 3}\n"))
    # TaskManagers before the JobManager, whose start waits for the job to run on their slots
    assert [c.name for c in all_components(cfg)] == ["kafka", "store", "flink-taskmanager-1", "flink-taskmanager-2",
                                                     "flink-taskmanager-3", "flink-jobmanager", "collector"]
    assert "flink.rpc_port: port 9092 is already used by kafka.port" in refused(
        tmp_path, "flink: {mode: cluster, rpc_port: 9092}\n")
    assert "flink.mode" in refused(tmp_path, "flink: {mode: kubernetes}\n")


def test_not_yaml_and_missing_file(tmp_path):
    with pytest.raises(UserError, match="not valid YAML"):
        config.load(write(tmp_path, "kafka: [unclosed\n"))
    with pytest.raises(UserError, match="does not exist"):
        config.load(tmp_path / "nope.yaml")


def test_external_store_uri_replaces_local_ferretdb(tmp_path):
    cfg = config.load(write(tmp_path, "store:\n  uri: mongodb://db.example:27017/\n"))
    assert cfg.store_uri == "mongodb://db.example:27017/"
    assert not cfg.store_uses_local_ferretdb


def test_store_uri_from_the_environment(tmp_path, monkeypatch):
    cfg = config.load(write(tmp_path, "store:\n  uri_env: JOB_STORE_URI\n"))
    assert not cfg.store_uses_local_ferretdb
    monkeypatch.delenv("JOB_STORE_URI", raising=False)
    with pytest.raises(UserError, match="JOB_STORE_URI .* is not set"):
        _ = cfg.store_uri
    monkeypatch.setenv("JOB_STORE_URI", "mongodb://job:secret@mongodb:27017/auditpipe")
    assert cfg.store_uri == "mongodb://job:secret@mongodb:27017/auditpipe"
    assert "secret" not in cfg.store_uri_for_display
    monkeypatch.setenv("JOB_STORE_URI", "http://nope")
    with pytest.raises(UserError, match="does not hold a mongodb"):
        _ = cfg.store_uri
    with pytest.raises(UserError, match="either store.uri or store.uri_env"):
        config.load(write(tmp_path, "store:\n  uri_env: X\n  uri: mongodb://a:1/\n"))


def test_collector_sources_add_the_demo_log_once(tmp_path):
    cfg = config.load(write(tmp_path, "sources:\n  - {path: /var/lib/mysql/audit.log, server: db-01}\n"))
    servers = [s["server"] for s in cfg.collector_sources()]
    assert servers == ["db-01", "demo-db"]
    assert cfg.collector_sources()[0]["format"] == "percona-json"


def test_durations():
    assert config.duration_seconds("500ms") == 0.5
    assert config.duration_seconds("10m") == 600
    with pytest.raises(UserError):
        config.duration_seconds("5 minutes")


def test_generated_reference_is_up_to_date():
    committed = (paths.REPO / "docs" / "configuration.md").read_text()
    assert committed == config.docs_markdown(), "run: ./auditpipe config docs --write"


def test_two_sources_with_one_server_name_are_refused(tmp_path):
    with pytest.raises(UserError, match=r"sources\[1\]\.server: 'db-01' is already the server of sources\[0\]"):
        config.load(write(tmp_path, "sources:\n  - {path: /var/log/a/audit.log, server: db-01}\n"
                                    "  - {path: /var/log/b/audit.log, server: db-01}\n"))


def test_one_file_shipped_twice_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"sources\[1\]\.path: /var/log/a/\./audit.log is already shipped by sources\[0\]"):
        config.load(write(tmp_path, "sources:\n  - {path: /var/log/a/audit.log, server: db-01}\n"
                                    "  - {path: /var/log/a/./audit.log, server: db-02}\n"))


def test_a_source_named_like_the_demo_server_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"demo\.server: 'demo-db' is already the server of sources\[0\]"):
        config.load(write(tmp_path, "sources:\n  - {path: /var/log/a/audit.log, server: demo-db}\n"))


def test_max_line_size_is_bounded_and_derives_every_limit(tmp_path):
    from auditpipe.stack import limits

    with pytest.raises(UserError, match="max_line_size: 9m is more than 8m"):
        config.load(write(tmp_path, "max_line_size: 9m\n"))
    lim = limits.from_config(config.load(write(tmp_path, "max_line_size: 2m\n")))
    assert lim.max_line_bytes == 2 * 1024 * 1024
    assert lim.raw_message_bytes > lim.max_line_bytes
    # a dead letter keeps the line whole in base64 (4/3) plus a 64 KiB reading copy and its fields
    assert lim.dead_letter_message_bytes >= lim.max_line_bytes * 4 // 3 + 64 * 1024
    assert lim.broker_message_bytes >= max(lim.raw_message_bytes, lim.dead_letter_message_bytes)
    longest = limits.from_config(config.load(write(tmp_path, "max_line_size: 8m\n")))
    assert longest.dead_letter_message_bytes < 15 * 1024 * 1024, "fits the job's dead-letter document bound"


@pytest.mark.parametrize("kafka,named", [
    ("{replication_factor: 3}", "kafka.replication_factor: 3 replicas need as many brokers"),
    ("{bootstrap_servers: 'k1:9092,k2:9092', min_insync_replicas: 2}", "kafka.min_insync_replicas: 2 is more than"),
    ("{security: {protocol: SASL_SSL, bootstrap: x}}", "kafka.security.bootstrap: unknown key"),
    ("{security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN}}", "kafka.security.username: required"),
    ("{security: {username: u}}", "kafka.security.username: only used with protocol SASL"),
    ("{bootstrap_servers: 'k:9093', security: {protocol: SSL, ca_file: /nonexistent.pem}}",
     "kafka.security.ca_file: /nonexistent.pem is not a file"),
    ("{security: {protocol: SSL}}", "kafka.security.protocol: the local broker does not serve SSL"),
    ("{security: {protocol: SASL_PLAINTEXT, sasl_mechanism: SCRAM-SHA-512, username: u, password_env: P}}",
     "the local broker's administrator"),
    ("{bootstrap_servers: 'no port'}", "kafka.bootstrap_servers"),
    ("{security: {principals: {job: {username: j, password_env: J}}}}",
     "kafka.security.principals: only used with protocol SASL"),
    ("{security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: u, password_env: P, "
     "principals: {job: {username: u, password_env: J}}}}", "kafka.security.principals: each part needs a user of its own"),
    ("{security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: u, password_env: P, "
     "principals: {flink: {username: f, password_env: F}}}}", "kafka.security.principals.flink: unknown key"),
])
def test_kafka_settings_that_do_not_fit_together_are_named(tmp_path, kafka, named):
    assert named in refused(tmp_path, f"kafka: {kafka}\n")


@pytest.mark.parametrize("text,named", [
    ("alerts: {baselines: {learning: 40d}}", "alerts.baselines.forget_after: 35d is not longer than alerts.baselines.learning"),
    ("alerts: {baselines: {off_hours: {reference: business-hours}}}\ncompliance: {business_hours: []}",
     "alerts.baselines.off_hours.reference: business-hours, but compliance.business_hours is empty"),
    ("alerts: {baselines: {volume: {factor: 0.5}}}", "alerts.baselines.volume.factor"),
    ("alerts: {baselines: {learning: 1w}}", "alerts.baselines.learning"),
])
def test_baseline_settings_that_cannot_work_are_named(tmp_path, text, named):
    assert named in refused(tmp_path, text + "\n")


def test_baseline_settings_reach_the_job_under_their_option_keys(tmp_path):
    cfg = config.load(write(tmp_path, "alerts: {baselines: {learning: 14d, volume: {factor: 4.5}}}\n"))
    options = job_settings.alert_properties(cfg)
    assert options["alerts.baselines.learning"] == "14d" and options["alerts.baselines.volume.factor"] == "4.5"
    assert options["alerts.baselines.off-hours.reference"] == "learned"


def test_kafka_security_reaches_every_client_and_the_password_stays_in_the_environment(tmp_path, monkeypatch):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = config.load(write(tmp_path, f"""kafka:
  bootstrap_servers: k1:9093,k2:9093
  replication_factor: 3
  min_insync_replicas: 2
  security: {{protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512, username: auditpipe, password_env: KPASS,
              ca_file: {ca}}}
"""))
    assert not cfg.kafka_is_local and cfg.kafka_bootstrap == "k1:9093,k2:9093"
    monkeypatch.delenv("KPASS", raising=False)
    with pytest.raises(UserError, match="KPASS .* is not set"):
        _ = cfg.kafka_client
    monkeypatch.setenv("KPASS", 's3"cr\\t')
    assert cfg.kafka_client == {"bootstrap.servers": "k1:9093,k2:9093", "security.protocol": "sasl_ssl",
                                "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "auditpipe",
                                "sasl.password": 's3"cr\\t', "ssl.ca.location": str(ca)}
    java = cfg.kafka_java_client
    assert java["sasl.jaas.config"] == ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                                        'username="auditpipe" password="s3\\"cr\\\\t";')
    assert java["ssl.truststore.type"] == "PEM" and java["ssl.truststore.location"] == str(ca)

    from auditpipe.stack.collector.rsyslog import render_config
    from auditpipe.stack.flink.job import FlinkJob

    rsyslog = render_config(cfg, tmp_path / "work")
    assert '"sasl.mechanisms=SCRAM-SHA-512"' in rsyslog and 'broker=["k1:9093", "k2:9093"]' in rsyslog
    assert '"sasl.password=s3\\"cr\\\\t"' in rsyslog, "escaped as an rsyslog string"
    job = FlinkJob(cfg).job_properties(None)
    assert "kafka.client.security.protocol=SASL_SSL\n" in job and "kafka.client.sasl.jaas.config=" in job
    assert "s3cr" not in cfg.file.read_text()


def test_each_part_connects_as_its_own_kafka_user_and_the_broker_knows_them_all(tmp_path, monkeypatch):
    cfg = config.load(write(tmp_path, """kafka:
  security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: admin, password_env: KADMIN,
             principals: {collector: {username: shipper, password_env: KSHIP}, job: {username: flink, password_env: KJOB}}}
"""))
    for name, value in (("KADMIN", "a"), ("KSHIP", "s"), ("KJOB", "j")):
        monkeypatch.setenv(name, value)
    assert (cfg.kafka_client["sasl.username"], cfg.kafka_client["sasl.password"]) == ("admin", "a")
    collector = cfg.kafka_client_for("collector")
    assert (collector["sasl.username"], collector["sasl.password"]) == ("shipper", "s")
    assert 'username="flink" password="j"' in cfg.kafka_java_client["sasl.jaas.config"]
    from auditpipe.stack.collector.rsyslog import render_config
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka.broker import KafkaBroker

    rsyslog = render_config(cfg, tmp_path / "work")
    assert '"sasl.username=shipper"' in rsyslog and '"sasl.username=admin"' not in rsyslog
    broker = KafkaBroker(cfg, kafka_grants())._properties()
    assert "super.users=User:admin\n" in broker and "allow.everyone.if.no.acl.found=false" in broker
    assert "StandardAuthorizer" in broker and "CONTROLLER:SASL_PLAINTEXT" in broker, "the controller's listener too"
    for user, password in (("admin", "a"), ("shipper", "s"), ("flink", "j")):
        assert f'user_{user}="{password}"' in broker, user
    monkeypatch.delenv("KSHIP")
    with pytest.raises(UserError, match="kafka.security.principals.collector.password_env: .*KSHIP"):
        cfg.kafka_client_for("collector")


def test_a_part_may_log_in_with_scram_which_the_local_broker_then_offers(tmp_path, monkeypatch):
    cfg = config.load(write(tmp_path, """kafka:
  security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: admin, password_env: KADMIN,
             principals: {collector: {username: shipper, password_env: KSHIP},
                          job: {username: flink, password_env: KJOB, sasl_mechanism: SCRAM-SHA-512}}}
"""))
    for name, value in (("KADMIN", "a"), ("KSHIP", "s"), ("KJOB", "j")):
        monkeypatch.setenv(name, value)
    assert cfg.kafka_client_for("job")["sasl.mechanisms"] == "SCRAM-SHA-512"
    assert cfg.kafka_client_for("collector")["sasl.mechanisms"] == cfg.kafka_client["sasl.mechanisms"] == "PLAIN"
    java = cfg.kafka_java_client
    assert java["sasl.mechanism"] == "SCRAM-SHA-512"
    assert "ScramLoginModule required username=\"flink\"" in java["sasl.jaas.config"]
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka.broker import KafkaBroker

    broker = KafkaBroker(cfg, kafka_grants())._properties()
    assert "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512\n" in broker
    assert ("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config="
            "org.apache.kafka.common.security.scram.ScramLoginModule required;\n") in broker
    assert "listener.name.controller.sasl.enabled.mechanisms=PLAIN\n" in broker
    assert 'user_shipper="s"' in broker and "user_flink" not in broker, "a SCRAM user has no PLAIN password"
    with pytest.raises(UserError, match="the local broker's administrator, as whom the broker and its controller log in"):
        config.load(write(tmp_path, "kafka: {security: {protocol: SASL_PLAINTEXT, sasl_mechanism: SCRAM-SHA-512, "
                                    "username: u, password_env: P}}\n"))


def test_the_kafka_acls_are_what_topics_yaml_says(tmp_path):
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka import kafka_acls, topics

    cfg = config.load(write(tmp_path, """kafka:
  security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: admin, password_env: KADMIN,
             principals: {collector: {username: shipper, password_env: KSHIP}, job: {username: flink, password_env: KJOB}}}
"""))
    acls = kafka_acls.wanted(cfg, kafka_grants())
    raw, alerts, dead = (topics.topic_name(r) for r in ("raw", "alerts", "deadletter"))
    shipper = {(t, n, op) for p, t, n, op in acls if p == "User:shipper"}
    assert shipper == {("TOPIC", raw, "WRITE"), ("TOPIC", raw, "READ"), ("TOPIC", raw, "DESCRIBE")}
    flink = {(t, n, op) for p, t, n, op in acls if p == "User:flink"}
    assert ("TOPIC", raw, "WRITE") not in flink and {("TOPIC", raw, "READ"), ("TOPIC", alerts, "WRITE"),
                                                     ("TOPIC", dead, "WRITE")} <= flink
    assert {p for p, *_ in acls} == {"User:shipper", "User:flink"}, "the administrator needs none: super user"
    assert kafka_acls.wanted(config.load(write(tmp_path, "")), kafka_grants()) == []


def test_the_cef_forwarder_reads_the_alerts_topic_in_its_group_and_nothing_else(tmp_path):
    from auditpipe.stack.alerts import forwarder
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka import kafka_acls, topics

    cfg = config.load(write(tmp_path, """kafka:
  security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: admin, password_env: KADMIN,
             principals: {forwarder: {username: siem, password_env: KSIEM}}}
"""))
    siem = {(t, n, op) for p, t, n, op in kafka_acls.wanted(cfg, kafka_grants()) if p == "User:siem"}
    alerts = topics.topic_name("alerts")
    assert siem == {("TOPIC", alerts, "READ"), ("TOPIC", alerts, "DESCRIBE"), ("GROUP", forwarder.GROUP, "READ")}


def test_a_siems_user_of_a_stream_topic_reads_that_topic_alone(tmp_path):
    """kafka.security.principals.siem_<role>: read its stream topic in groups of its prefix; no write, no other
    topic, no transaction (docs/stream.md)."""
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka import kafka_acls, topics

    cfg = config.load(write(tmp_path, """
kafka: {security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: admin, password_env: K,
             principals: {siem_ocsf: {username: splunk, password_env: KS}, siem_ecs: {username: elastic, password_env: KE}}}}
stream: {formats: [ocsf, ecs]}
"""))
    acls = kafka_acls.wanted(cfg, kafka_grants())
    for user, role in (("splunk", "ocsf"), ("elastic", "ecs")):
        mine = {(t, n, op) for p, t, n, op in acls if p == f"User:{user}"}
        topic = topics.topic_name(role)
        assert mine == {("TOPIC", topic, "READ"), ("TOPIC", topic, "DESCRIBE"),
                        ("GROUP", f"{kafka_acls.SIEM_GROUP_PREFIX}{role}", "READ")}, mine


@pytest.mark.parametrize("cef,named", [
    ("{target: 'udp://siem:514'}", "alerts.cef.target"),
    ("{target: 'tcp://siem'}", "alerts.cef.target"),
    ("{target: 'tcp://siem:0'}", "alerts.cef.target: tcp://siem:0 has no port from 1 to 65535"),
    ("{target: 'tcp://127.0.0.1:514', ca_file: ca.pem}", "alerts.cef.ca_file: only used with a tls:// target"),
    ("{target: 'tcp://siem:514'}", "alerts.cef.target: tcp://siem:514 is another host: alerts leave this one only over tls://"),
    ("{target: 'tcp://10.0.0.7:514'}", "only over tls://"),
    ("{target: 'tls://siem:6514', ca_file: nowhere.pem}", "alerts.cef.ca_file:"),
    ("{target: 'tls://siem:6514', certificate_file: auditpipe.yaml}", "alerts.cef.certificate_file and key_file"),
    ("{target: 'tcp://127.0.0.1:514', framing: rfc6587}", "alerts.cef.framing"),
    ("{target: 'tcp://127.0.0.1:514', hostname: 'two words'}", "alerts.cef.hostname"),
    ("{url: 'tcp://siem:514'}", "alerts.cef"),
])
def test_cef_settings_that_cannot_work_are_named(tmp_path, cef, named):
    assert named in refused(tmp_path, f"alerts: {{cef: {cef}}}\n")


def test_a_cef_target_and_its_defaults(tmp_path):
    from auditpipe.stack.alerts import forwarder

    assert forwarder.target(config.load(write(tmp_path, ""))) is None
    t = forwarder.target(config.load(write(tmp_path, "alerts: {cef: {target: 'tcp://[::1]:5514', hostname: fwd}}\n")))
    assert (t.scheme, t.host, t.port, t.framing, t.facility, t.hostname, t.timeout) == (
        "tcp", "::1", 5514, "rfc5424", 13, "fwd", 10.0)


def test_a_sources_time_zone_is_checked_and_travels_in_its_key(tmp_path):
    with pytest.raises(UserError, match=r"sources\[0\].timezone: 'Mars/Olympus' is not an IANA time zone"):
        config.load(write(tmp_path, "sources:\n  - {path: /l/a.log, server: a, format: mariadb-audit, timezone: Mars/Olympus}\n"))
    cfg = config.load(write(tmp_path, "sources:\n"
                                      "  - {path: /l/a.log, server: a, format: mariadb-audit, timezone: Europe/Berlin}\n"
                                      "  - {path: /l/b.log, server: b}\n"))
    import json

    from auditpipe.stack.collector.rsyslog import _key_of
    keys = [json.loads(_key_of(s)) for s in cfg.collector_sources()]
    assert keys[0]["timezone"] == "Europe/Berlin" and keys[0]["format"] == "mariadb-audit"
    assert "timezone" not in keys[1], "UTC sources keep the key they always had"
