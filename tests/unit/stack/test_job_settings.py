"""The job's settings as the CLI writes them: one table (cli/auditpipe/stack/flink/job_settings.py), every key
checked against the job's own contract (schemas/job-contract.json), no key written anywhere else."""

from __future__ import annotations

import ast

import pytest

from auditpipe import config, contract, paths
from auditpipe.errors import UserError
from auditpipe.stack.flink import job_settings
from auditpipe.stack.flink.job import FlinkJob

EVERYTHING = """
archive: {enabled: true}
alerts:
  brute_force: {failures: 7, window: 2m}
  webhook: {url: 'http://127.0.0.1:9/x'}
  cef: {target: 'tcp://127.0.0.1:9'}
compliance:
  data_classes:
    pci_cardholder: {tables: [shop.cards], allowed_principals: [app]}
  principals: {administrators: [root], service_accounts: [etl_*]}
  masking: {patterns: {ssn: '[0-9]{3}-[0-9]{2}-[0-9]{4}'}}
  change_windows:
    - {days: [sat, sun], from: '02:00', to: '06:00'}
  business_hours:
    - {days: [mon], from: '08:00', to: '18:00', timezone: Europe/Berlin}
flink:
  job_options: {sink.batch-size: 2000}
"""


def load(tmp_path, text: str):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    return config.load(f)


def test_every_key_the_cli_writes_is_one_the_job_reads(tmp_path):
    cfg = load(tmp_path, EVERYTHING)
    for target in (job_settings.Target("mongodb://u:p@h/", "file:///c", "file:///a", local=True),
                   job_settings.Target("mongodb://u:p@h/", "file:///c", "file:///a", local=False)):
        entries = job_settings.job_properties(cfg, target)
        unknown = [k for k in entries if not contract.is_job_key(k)]
        assert unknown == []
        assert entries["alerts.webhook.url"] == "http://127.0.0.1:9/x"
        assert not [k for k in entries if k.startswith("alerts.cef")], "CEF is the CLI's forwarder's, not the job's"
        assert entries["compliance.masking.pattern.ssn"]
        assert entries["sink.batch-size"] == "2000"
    assert not contract.is_job_key("alerts.brute-force.failure"), "a misspelt option is caught"
    assert not contract.is_job_key("compliance.data-class.pci_cardholder.table")


def test_every_option_the_table_writes_is_the_jobs():
    for key, _ in job_settings.OPTIONS:
        assert key in contract.option_keys(), key
    for key, _ in job_settings.FLINK:
        assert key.startswith("flink."), key


def test_no_option_key_is_written_anywhere_else_in_the_cli():
    """Each of the job's option keys and compliance keys appears as a string in one module only."""
    keys = set(contract.option_keys()) | {k["key"] for k in contract.contract()["compliance_keys"]}
    elsewhere = []
    for f in (paths.REPO / "cli" / "auditpipe").rglob("*.py"):
        if f.name == "job_settings.py":
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys:
                elsewhere.append(f"{f.relative_to(paths.REPO)}:{node.lineno}: {node.value}")
    assert elsewhere == []


def test_the_alerts_section_becomes_job_options(tmp_path):
    props = job_settings.alert_properties(load(tmp_path, EVERYTHING))
    assert props["alerts.brute-force.failures"] == "7"
    assert props["alerts.brute-force.window"] == "2m"
    assert props["alerts.password-spray.accounts"] == "5"
    assert props["alerts.webhook.url"] == "http://127.0.0.1:9/x"
    assert props["alerts.webhook.retries"] == "3"
    assert "alerts.webhook.url" not in job_settings.alert_properties(load(tmp_path, "")), "no webhook configured"


def test_the_webhook_is_https_unless_local_and_its_url_and_key_can_come_from_the_environment(tmp_path, monkeypatch):
    from auditpipe.errors import UserError

    with pytest.raises(UserError, match="alerts.webhook.url"):  # the schema names the key
        load(tmp_path, "alerts: {webhook: {url: 'http://hooks.example/x'}}")
    assert job_settings.alert_properties(load(tmp_path, "alerts: {webhook: {url: 'https://hooks.example/x'}}"))[
        "alerts.webhook.url"] == "https://hooks.example/x"
    from_env = "alerts: {webhook: {url_env: HOOK_URL, secret_env: HOOK_KEY}}"
    monkeypatch.setenv("HOOK_URL", "https://hooks.example/T0KEN")
    monkeypatch.setenv("HOOK_KEY", "k3y")
    props = job_settings.alert_properties(load(tmp_path, from_env))
    assert props["alerts.webhook.url"] == "https://hooks.example/T0KEN" and props["alerts.webhook.secret"] == "k3y"
    monkeypatch.setenv("HOOK_URL", "http://hooks.example/T0KEN")
    with pytest.raises(UserError, match="the URL in HOOK_URL is not allowed: An https:// URL"):
        job_settings.alert_properties(load(tmp_path, from_env))
    monkeypatch.delenv("HOOK_KEY")
    monkeypatch.setenv("HOOK_URL", "https://hooks.example/T0KEN")
    with pytest.raises(UserError, match="secret_env names HOOK_KEY, which is not set"):
        job_settings.alert_properties(load(tmp_path, from_env))
    with pytest.raises(UserError):  # one of the two
        load(tmp_path, "alerts: {webhook: {url: 'https://a.example/', url_env: HOOK_URL}}")


def test_compliance_settings_become_job_properties(tmp_path):
    props = job_settings.compliance_properties(load(tmp_path, EVERYTHING))
    assert props["compliance.data-class.pci_cardholder.tables"] == "shop.cards"
    assert props["compliance.data-class.pci_cardholder.allowed-principals"] == "app"
    assert "compliance.data-class.hipaa_ephi.allowed-principals" not in props, "absent: not enforced"
    assert props["compliance.change-windows"] == "sat,sun 02:00-06:00 UTC"
    assert props["compliance.business-hours"] == "mon 08:00-18:00 Europe/Berlin"
    assert props["compliance.masking.pan"] == "true" and props["compliance.masking.credentials"] == "true"


def test_the_group_whose_lag_status_reads_is_the_jobs_default():
    assert job_settings.job_group_id() == "auditpipe-flink"


def test_bad_alert_and_compliance_settings_name_the_key(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("alerts:\n  brute_force: {failures: 0}\ncompliance:\n  change_windows:\n"
                 "    - {days: [sat], from: '02:00', to: '04:00', timezone: Mars/Olympus}\n")
    with pytest.raises(UserError) as e:
        config.load(f)
    assert "alerts.brute_force.failures" in str(e.value)
    f.write_text("compliance:\n  change_windows:\n    - {days: [sat], from: '02:00', to: '04:00', timezone: Mars/Olympus}\n")
    with pytest.raises(UserError) as e:
        config.load(f)
    assert "compliance.change_windows[0].timezone" in str(e.value)


def test_the_local_job_gets_its_rest_endpoint_and_a_cluster_does_not(tmp_path):
    cfg = load(tmp_path, "")
    local = FlinkJob(cfg).job_properties(None)
    assert "flink.rest.port=" in local and "flink.rest.address=127.0.0.1" in local
    cluster = job_settings.properties_text(job_settings.job_properties(
        cfg, job_settings.Target("mongodb://job@h/", "file:///c", "file:///a", local=False)))
    assert "flink.rest." not in cluster and "store.uri=mongodb\\://job@h/" not in cluster
    assert "store.uri=mongodb://job@h/" in cluster


def test_the_job_runs_on_rocksdb_unless_its_checkpoints_were_written_by_another_backend(tmp_path, capsys):
    """A checkpoint restores only on the state backend that wrote it: a stack whose checkpoints the heap
    backend wrote (unmarked: every job before RocksDB) goes on on it, saying so; the marker says which."""
    cfg = load(tmp_path, "state_dir: " + str(tmp_path / "state"))
    checkpoints = tmp_path / "checkpoints"
    assert job_settings.state_backend(cfg) == "rocksdb"
    assert job_settings.choose_state_backend(cfg, checkpoints, restoring=False) == "rocksdb"
    assert (checkpoints / job_settings.STATE_BACKEND_MARKER).read_text().strip() == "rocksdb"
    assert job_settings.choose_state_backend(cfg, checkpoints, restoring=True) == "rocksdb"
    assert "restores only on its own" not in capsys.readouterr().err

    unmarked = tmp_path / "old-checkpoints"
    unmarked.mkdir()
    assert job_settings.choose_state_backend(cfg, unmarked, restoring=True) == "hashmap"
    assert "written by the hashmap state backend" in capsys.readouterr().err
    assert (unmarked / job_settings.STATE_BACKEND_MARKER).read_text().strip() == "hashmap"
    props = job_settings.job_properties(cfg, job_settings.Target("mongodb://x/", "file:///c", "file:///a", True),
                                        backend="hashmap")
    assert props["flink.state.backend.type"] == "hashmap"

    # configured on the heap, restoring RocksDB's checkpoints: RocksDB
    on_heap = load(tmp_path, "state_dir: " + str(tmp_path / "state")
                   + "\nflink: {job_options: {flink.state.backend.type: hashmap}}")
    assert job_settings.state_backend(on_heap) == "hashmap"
    assert job_settings.choose_state_backend(on_heap, checkpoints, restoring=True) == "rocksdb"
    assert job_settings.choose_state_backend(on_heap, tmp_path / "fresh", restoring=False) == "hashmap"


def test_a_canonical_savepoint_restores_on_the_configured_backend_and_is_newest_until_a_checkpoint(tmp_path, capsys):
    """The move to the configured backend (FlinkJob.move_state): the heap's checkpoints, then a savepoint
    in the canonical format, restored on RocksDB; once a checkpoint follows it, the checkpoint is restored."""
    import os

    from auditpipe.stack.flink.job import is_savepoint, latest_checkpoint

    cfg = load(tmp_path, "state_dir: " + str(tmp_path / "state"))
    checkpoints = tmp_path / "checkpoints"

    def snapshot(folder: str, at: float):
        (checkpoints / folder).mkdir(parents=True)
        (checkpoints / folder / "_metadata").write_bytes(b"x")
        os.utime(checkpoints / folder / "_metadata", (at, at))
        return checkpoints / folder

    heap = snapshot("job1/chk-4", 1000)
    assert latest_checkpoint(checkpoints) == heap and not is_savepoint(heap)
    assert job_settings.choose_state_backend(cfg, checkpoints, restoring=True, canonical=False) == "hashmap"
    assert "then moves to rocksdb" in capsys.readouterr().err
    savepoint = snapshot(f"{job_settings.SAVEPOINTS}/savepoint-0a1b2c-3d4e5f", 1010)
    assert latest_checkpoint(checkpoints) == savepoint and is_savepoint(savepoint)
    assert job_settings.choose_state_backend(cfg, checkpoints, restoring=True, canonical=True) == "rocksdb"
    assert (checkpoints / job_settings.STATE_BACKEND_MARKER).read_text().strip() == "rocksdb"
    after = snapshot("job2/chk-1", 1020)
    assert latest_checkpoint(checkpoints) == after and not is_savepoint(after)
    assert job_settings.choose_state_backend(cfg, checkpoints, restoring=True) == "rocksdb"
    assert capsys.readouterr().err == ""


def test_a_restore_leaves_unclaimed_state_to_the_jobs_own_check(tmp_path):
    """The properties name the snapshot to restore and leave ignore-unclaimed-state at Flink's false: the
    job itself lets only sinks' state stay behind (io.auditpipe.flink.state.RestoreCheck)."""
    props = job_settings.job_properties(load(tmp_path, ""), job_settings.Target(
        store_uri="mongodb://x/", checkpoint_dir="file:///c", archive_path="file:///a", local=True),
        restore_from=tmp_path / "chk-3")
    assert props["flink.execution.state-recovery.path"] == (tmp_path / "chk-3").as_uri()
    assert "flink.execution.state-recovery.ignore-unclaimed-state" not in props


def test_the_jobs_refusal_is_read_from_its_last_run_only(tmp_path):
    """FlinkJob.refusal: the line the job prints when it does not start from a snapshot, of the newest
    start in its log; an earlier start's refusal is not this one's."""
    from auditpipe.stack.flink.job import REFUSAL

    job = FlinkJob(load(tmp_path, ""))
    job.proc.log_file.parent.mkdir(parents=True, exist_ok=True)
    job.proc.log_file.write_text("=== 2026-12-05 10:00:00 starting: java ...\n"
                                 f"{REFUSAL}the job's state in file:/c/chk-3 holds the state of an operator ...\n"
                                 "=== 2026-12-05 10:05:00 starting: java ...\nrunning\n")
    assert job.refusal() is None
    with job.proc.log_file.open("a") as log:
        log.write(f"{REFUSAL}the job's state in file:/c/chk-4 holds the state of an operator 'sessions' (x)\n")
    assert job.refusal() == "the job's state in file:/c/chk-4 holds the state of an operator 'sessions' (x)"

