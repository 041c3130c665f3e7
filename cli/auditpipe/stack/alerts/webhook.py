"""POSTs to the configured webhook (alerts.webhook, docs/alerts.md "Webhook") from the CLI's side, as the
job's WebhookSink does: the JSON body, with a key the header ``X-Auditpipe-Signature: t=<unix seconds>,
sha256=<hex HMAC-SHA256 of "<t>." and the body>`` (``signature``; signed again for each attempt), retried
with backoff (1 s, doubling). A notification, not the record: a POST
that fails after its retries is logged, never raised. Used for the continuous verification's
integrity alerts (stack/verification.py) and the scheduled daily reports (evidence/schedule.py)."""

from __future__ import annotations

import time

from auditpipe.config import Config

#: the header with the time and the HMAC-SHA256 of both, as the job's WebhookSink.SIGNATURE_HEADER
SIGNATURE_HEADER = "X-Auditpipe-Signature"
#: how far from its clock a receiver should take a signature's time: older ones are replays
TOLERANCE_S = 300


def signature(secret: str, body: bytes, at: int) -> str:
    """The header's value for ``body`` sent at ``at`` (unix seconds): ``t=<at>,sha256=<hex HMAC-SHA256
    under the secret of "<at>." and the body>`` (WebhookSink.signature)."""
    import hashlib
    import hmac

    return f"t={at},sha256=" + hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()


def check_signature(secret: str, header: str | None, body: bytes, now: float,
                    tolerance_s: int = TOLERANCE_S) -> str | None:
    """What a receiver checks (docs/alerts.md "Webhook"): None when ``header`` signs ``body`` under the
    secret at a time within ``tolerance_s`` of ``now``, else why not."""
    import hmac

    parts = dict(p.split("=", 1) for p in (header or "").split(",") if "=" in p)
    if not parts.get("t", "").isdigit() or "sha256" not in parts:
        return "no signature of the form t=<unix seconds>,sha256=<hex>"
    at = int(parts["t"])
    if not hmac.compare_digest(signature(secret, body, at), header or ""):
        return "the signature does not match the body and time"
    if abs(now - at) > tolerance_s:
        return f"signed {now - at:.0f} s from now, beyond {tolerance_s} s: a replay"
    return None


def configured(cfg: Config, log) -> bool:
    """Whether a webhook is configured and usable (a missing variable it names is logged)."""
    from auditpipe.errors import UserError
    from auditpipe.stack.flink import job_settings

    try:
        return job_settings.webhook(cfg) is not None
    except UserError as e:
        log(f"nothing sent to the webhook: {e}")
        return False


def post(cfg: Config, body: bytes, headers: dict[str, str], what: str, log) -> bool:
    """POSTs ``body`` (JSON) with ``headers`` to the webhook; returns whether it took it (2xx). Nothing
    without a webhook; ``what`` names the body in the log line of a failure."""
    import urllib.request

    from auditpipe.config import duration_seconds
    from auditpipe.stack.flink import job_settings

    if not configured(cfg, log):
        return False
    hook = job_settings.webhook(cfg)
    headers = {"Content-Type": "application/json", **headers}
    delay, error = 1.0, ""
    for attempt in range(hook.retries + 1):
        if hook.secret is not None:
            headers[SIGNATURE_HEADER] = signature(hook.secret, body, int(time.time()))
        try:
            req = urllib.request.Request(hook.url, data=body, headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=duration_seconds(hook.timeout)) as r:
                if 200 <= r.status < 300:
                    return True
                error = f"status {r.status}"
        except OSError as e:  # HTTPError (a status other than 2xx), URLError, timeouts
            error = str(e)
        if attempt < hook.retries:
            time.sleep(delay)
            delay *= 2
    log(f"the webhook did not take {what}: {error}")
    return False
