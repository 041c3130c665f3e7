"""Integrity alerts reach the webhook as the job's alerts do (stack/verification.py, WebhookSink.java):
the JSON body, X-Auditpipe-Alert-Id, X-Auditpipe-Signature with a key, retries with backoff; a
receiver that never takes one costs a logged line, never the pass. A real HTTP server on loopback
(tests/webhook_receiver.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from datetime import datetime, timezone

import pytest
from auditpipe import config, paths
from auditpipe.evidence.chain import Finding
from auditpipe.stack import verification, webhook
from webhook_receiver import Receiver


@pytest.fixture
def receiver():
    r = Receiver([500])
    yield r
    r.close()


def cfg_with(tmp_path, webhook: str):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(f"state_dir: {tmp_path / 'state'}\nalerts:\n  webhook: {webhook}\n")
    return config.load(f)


def an_alert() -> dict:
    now = datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)
    return verification.alert_of("store", Finding("DELETED", "db-01", 7, None, "link 7 is missing"), now)


def test_an_integrity_alert_is_posted_signed_and_retried(tmp_path, monkeypatch, receiver):
    monkeypatch.setenv("HOOK_KEY", "s3cret")
    monkeypatch.setattr(webhook.time, "sleep", lambda s: None)  # the backoff, not the POST
    cfg = cfg_with(tmp_path, f"{{url: '{receiver.url}', secret_env: HOOK_KEY, retries: 2}}")
    alert = an_alert()
    verification._notify(cfg, [alert])
    assert len(receiver.requests) == 2, "a 500, then retried"
    headers, body = receiver.requests[-1]
    assert headers["X-Auditpipe-Alert-Id"] == alert["_id"]
    assert headers[webhook.SIGNATURE_HEADER] == "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    sent = json.loads(body)
    assert sent["_id"] == alert["_id"] and sent["rule"] == "integrity" and sent["severity"] == "critical"


def test_a_receiver_that_never_takes_it_costs_a_logged_line(tmp_path, monkeypatch, receiver, capsys):
    receiver.statuses[:] = [503] * 10
    monkeypatch.setattr(webhook.time, "sleep", lambda s: None)
    cfg = cfg_with(tmp_path, f"{{url: '{receiver.url}', retries: 1}}")
    verification._notify(cfg, [an_alert()])
    assert len(receiver.requests) == 2
    assert webhook.SIGNATURE_HEADER not in receiver.requests[0][0]  # no key, no signature
    assert "the webhook did not take integrity alert" in capsys.readouterr().err


def test_the_header_is_the_jobs():
    java = (paths.PIPELINES / "flink-job/src/main/java/io/auditpipe/flink/sink/WebhookSink.java").read_text()
    assert re.search(r'SIGNATURE_HEADER = "([^"]+)"', java).group(1) == webhook.SIGNATURE_HEADER


def test_a_webhook_url_from_a_missing_variable_is_named_not_raised(tmp_path, capsys):
    cfg = cfg_with(tmp_path, "{url_env: AUDITPIPE_NO_SUCH_HOOK}")
    verification._notify(cfg, [an_alert()])  # the alerts are stored and on the topic already
    assert "AUDITPIPE_NO_SUCH_HOOK, which is not set" in capsys.readouterr().err
