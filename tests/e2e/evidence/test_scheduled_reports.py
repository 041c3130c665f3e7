"""Daily reports (`auditpipe report pci --schedule`, docs/reports.md "Every day") against the real store: a
start writes the missing reports of the last week's ended days, each whole and once, and announces
each to the webhook (a real HTTP server here, tests/helpers/webhook_receiver.py) with its file and the
digest the file carries; a second start writes and announces nothing again."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
import yaml
from helpers.webhook_receiver import Receiver

from auditpipe import paths
from auditpipe.evidence import schedule

pytestmark = pytest.mark.e2e


def scheduled_until_idle(stack, cfg_file, out_dir, log) -> str:
    """Runs `report pci --schedule` (its log, stderr, into ``log``) until it says nothing is due: it has
    written and announced what was; stops it and returns what it said."""
    with log.open("w") as err:
        p = subprocess.Popen([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), "report", "pci",
                              "--schedule", "--out-dir", str(out_dir), "--at", "00:00"], cwd=paths.REPO,
                             stdout=subprocess.DEVNULL, stderr=err, text=True)
        try:
            stack.wait_for("the scheduler to have nothing due", lambda: (
                "nothing due" in (text := log.read_text()), text[-500:]), timeout=600, every=1)
        finally:
            p.terminate()
            p.wait(timeout=60)
    return log.read_text()


def test_each_ended_day_is_written_once_and_announced(stack, tmp_path, monkeypatch):
    hook = Receiver(path="/reports")
    monkeypatch.setenv("AUDITPIPE_TEST_REPORT_KEY", "k")
    data = yaml.safe_load(stack.cfg_file.read_text())
    data.setdefault("alerts", {})["webhook"] = {"url": hook.url, "secret_env": "AUDITPIPE_TEST_REPORT_KEY"}
    cfg_file = stack.cfg_file.parent / "scheduled-reports.yaml"
    cfg_file.write_text(yaml.safe_dump(data))
    out = tmp_path / "reports"
    today = datetime.now(timezone.utc).date()
    days = [today - timedelta(days=n) for n in range(schedule.CATCH_UP_DAYS, 0, -1)]

    said = scheduled_until_idle(stack, cfg_file, out, tmp_path / "first.log")
    posts = [(headers, json.loads(body)) for headers, body in hook.requests]
    assert [body["id"] for _, body in posts] == [f"report/pci/{d:%Y-%m-%d}" for d in days], said
    assert sorted(f.name for f in out.iterdir()) == [f"pci-{d:%Y-%m-%d}.html" for d in days], "whole files only"
    for headers, body in posts:
        f = out / f"pci-{body['from'][:10]}.html"
        assert body["file"] == str(f.resolve()) and headers["X-Auditpipe-Report-Id"] == body["id"]
        evidence = re.search(r'<script type="application/json" id="evidence">(.*?)</script>', f.read_text(), re.S)
        assert evidence, "the report carries its evidence"
        assert hashlib.sha256(evidence.group(1).encode("ascii")).hexdigest() == body["evidence_sha256"]
        assert datetime.fromisoformat(body["to"]) - datetime.fromisoformat(body["from"]) == timedelta(days=1)
        assert set(body["exceptions"]) and all(isinstance(n, int) for n in body["exceptions"].values())
        assert headers["X-Auditpipe-Signature"].startswith("t=") and ",sha256=" in headers["X-Auditpipe-Signature"]
    written = {f.name: f.stat().st_mtime_ns for f in out.iterdir()}

    assert "report: wrote" not in scheduled_until_idle(stack, cfg_file, out, tmp_path / "second.log")
    assert len(hook.requests) == len(days), "nothing announced again"
    assert {f.name: f.stat().st_mtime_ns for f in out.iterdir()} == written, "nothing written again"
    hook.close()
