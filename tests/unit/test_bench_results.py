"""The benches' runs as data (bench/results.py): bench/README.md's tables are made from bench/results/,
never by hand, and the goals read a run's figures as ratios within it."""

from __future__ import annotations

import json

import pytest
import results


def test_the_readmes_tables_are_those_the_results_give():
    readme = results.README.read_text(encoding="utf-8")
    assert results.render(readme) == readme, "make them anew: ./auditpipe bench --tables"


def test_every_result_file_is_a_run_of_a_known_kind():
    for f in sorted(results.RESULTS.glob("*.json")):
        run = json.loads(f.read_text(encoding="utf-8"))
        assert run["kind"] in ("pipeline", "review", "long") and f.name.startswith(run["kind"] + "-"), f.name
        assert run.get("machine") and run.get("started"), f.name


def figures(**overrides) -> dict:
    f = {"started": "2026-12-02T03:04:05Z", "commit": "abc1234", "machine": "2 cores",
         "run": {"quick": False, "end_to_end_only": False, "stream_formats": ["auditpipe", "ocsf"]},
         "end_to_end": {"events_per_s": 9000, "percent_of_store_bulk": 45,
                        "cpu_us_per_event": {"store": 80.0, "flink": 70.0, "kafka": 6.0, "collector": 8.0}},
         "store_bulk_stored_documents": {"cpu_us_per_doc": 70.0},
         "job_alone": {"events_per_s_per_core": 40_000},
         "parse_alone_records_per_s_one_core": {results.READER: {"parse": 800_000, "with_enrichment": 400_000}},
         "latency": {"events_per_s": 6300, "p99_s": 1.5}, "alert_latency": {"p99_s": 0.8},
         "memory_at_latency_rate_mib": {"total": 2500}, "idle": {"cpu_percent_of_a_core": {"flink": 50.0, "kafka": 10.0}},
         "cost_table": {"job_alone_events_per_s": 80_000, "cores": 2, "job_cpu_us_per_event": 25.0,
                        "features": {"sessions": {"events_per_s_without": 100_000, "cpu_us_per_event": 5.0,
                                                  "share_of_job": 0.2}}}}
    f.update(overrides)
    return f


def test_the_goals_are_ratios_within_the_run():
    values = {g.name: (v, g.met(v)) for g, v in results.goal_rows(figures())}
    by = {name.split(",")[0]: v for name, v in values.items()}
    assert by["all components' CPU per event end to end"] == (pytest.approx(164 / 70), False)
    assert by["end to end"] == (45, False)
    assert by["the job alone per core"] == (pytest.approx(10.0), False)
    assert by["latency p99 at 70% of the run's own end-to-end rate"] == (1.5, True)
    assert by["alert latency p99"] == (0.8, True)
    assert by["resident memory of the whole stack (peak per component"] == (2500, False)
    assert by["idle"] == (60.0, False)
    # a goal not met says what the run's own figures make it of, and where to push next
    lines = results.goals_lines(figures())
    cpu = next(i for i, line in enumerate(lines) if line.lstrip().startswith("all components' CPU"))
    assert lines[cpu + 1] == ("    why, from this run: CPU per event: store 80 us, flink 70 us, collector 8 us, kafka 6 us; "
                              "the store's bulk insert 70 us a document")
    assert lines[cpu + 2].startswith("    next lever: ")
    idle = next(i for i, line in enumerate(lines) if line.lstrip().startswith("idle"))
    assert lines[idle + 1] == "    why, from this run: idle CPU, of a core: flink 50.0%, kafka 10.0%"
    alert = next(i for i, line in enumerate(lines) if line.lstrip().startswith("alert latency"))
    assert not lines[alert + 1].startswith("    ")  # met: nothing more
    missing = figures()
    del missing["latency"]
    assert "latency p99 at 70% of the run's own end-to-end rate: - (target < 2 s): not measured" in \
        "\n".join(results.goals_lines(missing))
    # a latency run at a rate given on the command line (--latency-rate) is not at 70%: not judged
    given = figures()
    given["run"] = {**given["run"], "latency_rate_given": 1400}
    assert "latency p99 at 70% of the run's own end-to-end rate: - (target < 2 s): not measured" in \
        "\n".join(results.goals_lines(given))


def test_tables_are_made_from_the_runs_newest_first(tmp_path):
    older = figures(started="2026-12-01T01:00:00Z", commit="old1111")
    newer = figures(started="2026-12-02T01:00:00Z", commit="new2222")
    for f in (older, newer):
        results.save("pipeline", f, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipeline-20261201T0100-old1111.json",
                                                          "pipeline-20261202T0100-new2222.json"]
    runs = results.runs_table(results.load("pipeline", tmp_path))
    assert runs.index("new2222") < runs.index("old1111")
    assert "new2222" in results.goals_table(results.load("pipeline", tmp_path))
    assert "| sessions | 5.0 us | 20% | 100,000 events/s |" in results.cost_table(results.load("pipeline", tmp_path))
    assert "within a few us" in results.cost_table(results.load("pipeline", tmp_path))
    twice = figures(started="2026-12-03T01:00:00Z", commit="two3333")
    twice["cost_table"]["job_cpu_us_per_event_runs"] = [24.0, 26.5]
    results.save("pipeline", twice, tmp_path)
    assert "took 24.0 and 26.5 us in a run before those and one after them (the figure above is their mean), " \
           "so a cost within 2.5 us of zero is the machine's noise" in results.cost_table(results.load("pipeline", tmp_path))
    beside = figures(started="2026-12-04T01:00:00Z", commit="bes4444")
    beside["cost_table"]["job_cpu_us_per_event_runs"] = [24.0, 27.0, 25.0]
    beside["cost_table"]["features"]["sessions"].update(cpu_us_per_event_without=20.5, cpu_us_per_event_beside=25.5)
    results.save("pipeline", beside, tmp_path)
    table = results.cost_table(results.load("pipeline", tmp_path))
    assert "run between two runs of the job as shipped and set against their mean; the job as shipped took " \
           "24.0-27.0 us over its 3 runs" in table and "within 3.0 us of zero" in table
    assert "| sessions | 5.0 us | 20% | 100,000 events/s, 20.5 us/event | 25.5 us/event |" in table
    readme = "a\n" + "\n".join(f"{results._marker(n)}\nold\n{results._marker(n, end=True)}" for n in results.SECTIONS)
    made = results.render(readme, tmp_path)
    assert "old\n" not in made and "new2222" in made and results.render(made, tmp_path) == made
    with pytest.raises(ValueError, match="no generated section"):
        results.render("no markers", tmp_path)


def test_a_slow_burst_is_set_beside_the_events_written_with_it():
    t0 = 100.0
    written = {"victim1": 105.0, "victim2": 110.0, "victim3": 120.0}
    seen = {"victim1": 105.4, "victim2": 111.3, "victim3": 121.2}  # victim3's events were stored at once
    by_written = [(4.9, 0.3), (5.2, 0.4), (9.5, 1.2), (10.4, 1.25), (12.0, 3.0), (20.1, 0.2)]
    slow = results.slow_bursts(written, seen, t0, by_written)
    assert slow == [{"at_s": 10.0, "latency_s": 1.3, "events_latency_s": 1.25},
                    {"at_s": 20.0, "latency_s": 1.2, "events_latency_s": 0.2}]
    f = figures(alert_latency={"bursts": 3, "p50_s": 1.2, "p99_s": 1.3, "slow": slow})
    lines = results.goals_lines(f)
    alert = next(i for i, line in enumerate(lines) if line.lstrip().startswith("alert latency"))
    assert lines[alert + 1] == ("    why, from this run: 2 of 3 bursts took 1 s or more (1.30 s at 10 s, 1.20 s at 20 s); "
                                "the events written within a second of them took up to 1.25 s to be stored, as slow "
                                "as the alert for 1 of the 2")
    # a run from before the bursts were accounted for says what it has
    old = figures(alert_latency={"bursts": 60, "p50_s": 0.3, "p99_s": 1.17},
                  end_to_end_job_top_frames=[{"frame": "Json$Writer.string", "share": 0.08}])
    assert "the job's top frames end to end: Json$Writer.string 8%" in "\n".join(results.goals_lines(old))
