"""The long run's account of its slow seconds (bench/long_run.py ``why_late``): each second over the
latency target is put down to a backlog, a verification pass or a spike, with the lever it points to."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import long_run

T0 = 1_000_000.0


def sampler(latency: dict[float, float], passes=()):
    """Both servers' latency every second (the second server 0.1 s behind the first) and the passes."""
    return SimpleNamespace(
        latency=[(T0 + t, s, x + d) for t, x in latency.items() for s, d in (("a", 0.0), ("b", 0.1))],
        passes=[{"started": datetime.fromtimestamp(T0 + a, timezone.utc).isoformat(), "seconds": n} for a, n in passes])


def test_slow_seconds_are_put_down_to_the_passes_and_spikes(capsys):
    latency = {float(t): 0.5 for t in range(0, 600)}
    latency.update({float(t): 4.0 for t in range(300, 310)})  # in the pass
    latency.update({float(t): 3.0 for t in (400, 401, 402, 500)})  # two spikes outside it
    latency.update({float(t): 50.0 for t in range(0, 60)})  # the first minute is not judged
    out = long_run.why_late(sampler(latency, passes=[(280, 60)]), T0, 600, 1000, 600_000, 5,
                            {"store": 300.0, "flink": 400.0})
    said = capsys.readouterr().out
    assert out["over"] == 14 and out["over_in_passes"] == 10 and out["spikes_outside_passes"] == 2
    assert out["seconds"] == 540 and out["p99_in_passes_s"] == 4.1
    assert "14 of 540 seconds" in said and "WATCH_SHARE" in said
    assert "2 spikes (the longest 3 s at minute 6.7, the worst 3.1 s)" in said
    assert "the rate is above" not in said


def test_a_rate_above_what_the_stack_stores_is_said_with_its_largest_cost(capsys):
    latency = {float(t): t / 10 for t in range(0, 600)}  # a backlog that grows
    out = long_run.why_late(sampler(latency), T0, 600, 10_000, 600 * 4_000, 900, {"store": 300.0, "flink": 400.0})
    said = capsys.readouterr().out
    assert out["stored_per_s_while_writing"] == 4000 and out["drain_s"] == 900
    assert "it stored 4,000 events/s while 10,000 were written" in said and "flink 400 us" in said
    assert "in 900 s after the writers ended (4,000 events/s, the simulator stopped)" in said
    assert "spikes" not in said  # a backlog, not spikes


def test_no_slow_second_says_so(capsys):
    out = long_run.why_late(sampler({float(t): 0.4 for t in range(600)}), T0, 600, 1000, 600_000, 5, {"store": 1.0})
    assert out["over"] == 0 and "0 of 540 seconds" in capsys.readouterr().out
