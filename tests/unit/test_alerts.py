"""The CLI's side of the alerts: the rule names it offers are the job's, the config's thresholds
reach the job as its options, and the list prints what a reviewer needs."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from auditpipe import cli, compliance, config, paths
from auditpipe.alerts import format_alerts

ALERTS_JAVA = paths.PIPELINES / "flink-job" / "src" / "main" / "java" / "io" / "auditpipe" / "flink" / "alerts"


def test_the_cli_offers_exactly_the_rules_the_job_has():
    names = set()
    for f in ALERTS_JAVA.glob("*.java"):
        if f.name == "Alert.java":  # severities, not rules
            continue
        names |= set(re.findall(r'public static final String \w+ = "([a-z_]+)";', f.read_text()))
    assert set(cli.ALERT_RULES) == names


def test_the_alerts_section_becomes_job_options(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("alerts:\n  brute_force: {failures: 7, window: 2m}\n  webhook: {url: 'http://127.0.0.1:9/x'}\n")
    props = compliance.alert_job_properties(config.load(f))
    assert props["alerts.brute-force.failures"] == "7"
    assert props["alerts.brute-force.window"] == "2m"
    assert props["alerts.password-spray.accounts"] == "5"
    assert props["alerts.webhook.url"] == "http://127.0.0.1:9/x"
    assert props["alerts.webhook.retries"] == "3"


def test_bad_alert_and_compliance_settings_name_the_key(tmp_path):
    import pytest

    from auditpipe.errors import UserError

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


def test_compliance_settings_become_job_properties(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("compliance:\n  data_classes:\n    pci_cardholder: {tables: [shop.cards], allowed_principals: [app]}\n"
                 "  change_windows:\n    - {days: [sat, sun], from: '02:00', to: '06:00'}\n")
    props = compliance.job_properties(config.load(f))
    assert props["compliance.data-class.pci_cardholder.tables"] == "shop.cards"
    assert props["compliance.data-class.pci_cardholder.allowed-principals"] == "app"
    assert "compliance.data-class.hipaa_ephi.allowed-principals" not in props, "absent: not enforced"
    assert props["compliance.change-windows"] == "sat,sun 02:00-06:00 UTC"
    assert props["compliance.masking.pan"] == "true"


def test_the_alert_list_shows_the_whole_summary():
    t = datetime(2026, 11, 22, 10, 0, 15, tzinfo=timezone.utc)
    summary = "40 failed logins for account 'admin' on demo-db within 0.8 s (threshold 5 in 60 s) " + "x" * 80
    text = format_alerts([{"first_event_time": t, "severity": "high", "rule": "brute_force", "server": "demo-db",
                           "summary": summary}])
    assert "2026-11-22 10:00:15  high      brute_force  demo-db  " + summary in text
    assert format_alerts([]) == "(no alerts)"
