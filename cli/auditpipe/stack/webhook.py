"""POSTs to the configured webhook (alerts.webhook, docs/alerts.md "Webhook") from the CLI's side, as the
job's WebhookSink does: the JSON body, with a key the header ``X-Auditpipe-Signature: sha256=<hex
HMAC-SHA256 of the body>``, retried with backoff (1 s, doubling). A notification, not the record: a POST
that fails after its retries is logged, never raised. Used for the continuous verification's
integrity alerts (stack/verification.py) and the scheduled daily reports (stack/schedule.py)."""

from __future__ import annotations

import time

from auditpipe.config import Config

#: the header with the body's HMAC-SHA256, as the job's WebhookSink.SIGNATURE_HEADER
SIGNATURE_HEADER = "X-Auditpipe-Signature"


def configured(cfg: Config, log) -> bool:
    """Whether a webhook is configured and usable (a missing variable it names is logged)."""
    from auditpipe.errors import UserError
    from auditpipe.stack import job_settings

    try:
        return job_settings.webhook(cfg) is not None
    except UserError as e:
        log(f"nothing sent to the webhook: {e}")
        return False


def post(cfg: Config, body: bytes, headers: dict[str, str], what: str, log) -> bool:
    """POSTs ``body`` (JSON) with ``headers`` to the webhook; returns whether it took it (2xx). Nothing
    without a webhook; ``what`` names the body in the log line of a failure."""
    import hashlib
    import hmac
    import urllib.request

    from auditpipe.config import duration_seconds
    from auditpipe.stack import job_settings

    if not configured(cfg, log):
        return False
    hook = job_settings.webhook(cfg)
    headers = {"Content-Type": "application/json", **headers}
    if hook.secret is not None:
        headers[SIGNATURE_HEADER] = "sha256=" + hmac.new(hook.secret.encode(), body, hashlib.sha256).hexdigest()
    delay, error = 1.0, ""
    for attempt in range(hook.retries + 1):
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
