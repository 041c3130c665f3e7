"""Integrity alerts reach the webhook as the job's alerts do (stack/verification.py, WebhookSink.java):
the JSON body, X-Auditpipe-Alert-Id, X-Auditpipe-Signature with a key, retries with backoff; a
receiver that never takes one costs a logged line, never the pass. A real HTTP server on loopback
(tests/helpers/webhook_receiver.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from datetime import datetime, timezone

import pytest
from helpers.webhook_receiver import Receiver

from auditpipe import config, paths
from auditpipe.evidence.chain import Finding
from auditpipe.stack import verification
from auditpipe.stack.alerts import webhook


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
    signed = headers[webhook.SIGNATURE_HEADER]
    at = int(signed.split(",")[0].removeprefix("t="))
    assert signed == f"t={at},sha256=" + hmac.new(b"s3cret", f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    assert webhook.check_signature("s3cret", signed, body, time.time()) is None
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


def test_a_receiver_refuses_a_replayed_changed_or_unsigned_post():
    """The timestamp is signed with the body: a POST replayed later than the tolerance is refused, and
    so is one whose time or body was changed on the way."""
    body = b'{"_id": "a-1"}'
    signed = webhook.signature("s3cret", body, 1_800_000_000)
    assert webhook.check_signature("s3cret", signed, body, 1_800_000_100) is None
    assert "a replay" in webhook.check_signature("s3cret", signed, body, 1_800_000_000 + 301)
    moved = signed.replace("t=1800000000", "t=1800000300")  # the time moved up to pass the check
    assert "does not match" in webhook.check_signature("s3cret", moved, body, 1_800_000_300)
    assert "does not match" in webhook.check_signature("s3cret", signed, b'{"_id": "a-2"}', 1_800_000_000)
    assert "does not match" in webhook.check_signature("other", signed, body, 1_800_000_000)
    assert "no signature" in webhook.check_signature("s3cret", None, body, 1_800_000_000)
    # the form the job's WebhookSinkTest asserts for the same key, time and body
    assert signed == "t=1800000000,sha256=70cb4a1b2151df8df801b6307ab39c906663419be0416334d3b21e74cb79a491"
