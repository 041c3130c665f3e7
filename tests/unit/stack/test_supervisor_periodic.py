"""The supervisor's periodic store work (capped trimming, evidence expiry): it runs at its interval,
and a failure is logged once per kind and tried again, never the supervisor's end."""

from __future__ import annotations

from auditpipe.config import Config
from auditpipe.stack import supervisor


class Flaky(supervisor._Periodic):
    what = "flaky work"

    def __init__(self, cfg, outcomes):
        super().__init__(cfg, every=3600, first=0)
        self.outcomes, self.runs = list(outcomes), 0

    def work(self):
        self.runs += 1
        outcome = self.outcomes.pop(0)
        if outcome:
            raise RuntimeError(outcome)


def test_runs_at_its_interval_and_logs_a_failure_once_per_kind(tmp_path, capsys):
    job = Flaky(Config(data={}, file=tmp_path / "auditpipe.yaml"), ["locked", "locked", None, "locked", "gone"])
    for _ in range(5):
        job.next_run = 0  # due
        job.maybe_run()
        job.maybe_run()  # not due again before its interval
    assert job.runs == 5
    logged = [line.split(" ", 2)[2] for line in capsys.readouterr().out.splitlines()]
    assert logged == ["store: flaky work failed, trying again every 3600s: locked",
                      "store: flaky work failed, trying again every 3600s: locked",
                      "store: flaky work failed, trying again every 3600s: gone"]
