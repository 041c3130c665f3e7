"""The demo's runs one after another: a run waits until the alert windows of the run before have passed."""

from datetime import datetime, timedelta, timezone

from auditpipe import config, demo
from auditpipe.tools.simulate import Manifest, manifest_path


def test_a_run_soon_after_another_waits_for_the_longest_alert_window(tmp_path, monkeypatch):
    path = tmp_path / "auditpipe.yaml"
    path.write_text(f"state_dir: {tmp_path / 'state'}\n")
    cfg = config.load(path)
    assert demo.longest_window(cfg) == 600  # alerts.unauthorized_access.window's default
    waited = []
    monkeypatch.setattr(demo.time, "sleep", waited.append)

    demo.wait_for_earlier_run(cfg, 180)  # no run before
    assert waited == []

    cfg.demo_log.parent.mkdir(parents=True)
    last = datetime.now(timezone.utc) - timedelta(seconds=100)
    Manifest(log_path=str(cfg.demo_log), log_start="x", last_event_time=last.strftime("%Y-%m-%dT%H:%M:%S UTC")).write(
        manifest_path(cfg.demo_log))
    demo.wait_for_earlier_run(cfg, 180)
    (seconds,) = waited
    assert 600 + 180 - 100 - 5 < seconds <= 600 + 180 - 100 + 1  # its first record 10 min after the last one

    waited.clear()
    Manifest(log_path=str(cfg.demo_log), log_start="x",
             last_event_time=(last - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S UTC")).write(manifest_path(cfg.demo_log))
    demo.wait_for_earlier_run(cfg, 180)
    assert waited == []
