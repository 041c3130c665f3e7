"""Configuration: validation names the bad key, defaults come from the schema, docs are generated."""

import pytest

from auditpipe import config, paths
from auditpipe.errors import UserError


def write(tmp_path, text):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(text)
    return f


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
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, "kafka:\n  prot: 9092\n"))
    assert "kafka.prot: unknown key" in str(e.value)
    assert "port" in str(e.value)  # the allowed keys are listed


def test_bad_value_is_named(tmp_path):
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, "flink:\n  checkpoint_interval: soon\n"))
    assert "flink.checkpoint_interval" in str(e.value)


def test_bad_source_entry_is_named(tmp_path):
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, "sources:\n  - path: relative/audit.log\n    server: db-01\n"))
    assert "sources.0.path" in str(e.value)
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, "sources:\n  - path: /a/audit.log\n"))
    assert "'server' is a required property" in str(e.value)


def test_port_clash_is_refused(tmp_path):
    with pytest.raises(UserError) as e:
        config.load(write(tmp_path, "kafka:\n  port: 8081\n"))
    assert "port 8081 is already used by" in str(e.value)


def test_not_yaml_and_missing_file(tmp_path):
    with pytest.raises(UserError, match="not valid YAML"):
        config.load(write(tmp_path, "kafka: [unclosed\n"))
    with pytest.raises(UserError, match="does not exist"):
        config.load(tmp_path / "nope.yaml")


def test_external_store_uri_replaces_local_ferretdb(tmp_path):
    cfg = config.load(write(tmp_path, "store:\n  uri: mongodb://db.example:27017/\n"))
    assert cfg.store_uri == "mongodb://db.example:27017/"
    assert not cfg.store_uses_local_ferretdb


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
    from auditpipe import limits

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
