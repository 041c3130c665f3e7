"""The benches' runs as data: each run writes one JSON file into bench/results/ (the machine, the
commit, the configuration, the figures, the job's profile summary), and bench/README.md's tables are
generated from those files (``./auditpipe bench --tables``), never written by hand; a unit test
fails when they are stale (tests/unit/test_bench_results.py).

The goals (GOALS) are ratios within one run of the shipped configuration, since these machines differ
by up to 3x from day to day: what a run measures is compared with what the same run measured of the
store alone, the reader alone, and its own end-to-end rate.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
README = REPO / "bench" / "README.md"

#: the reader alone whose rate the job alone is compared with: the records the job-alone run reads
READER = "percona-json (json)"


def result_path(kind: str, figures: dict, root: Path = RESULTS) -> Path:
    """Where a run of ``kind`` (pipeline, review, long) is kept: <kind>-<UTC start>-<commit>.json."""
    started = figures.get("started") or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    stamp = re.sub(r"[^0-9T]", "", started)[:13]  # 20261202T0130
    commit = re.sub(r"[^0-9A-Za-z_.-]", "_", str(figures.get("commit") or figures.get("versions", {})
                                                 .get("auditpipe_commit") or "unknown"))
    return root / f"{kind}-{stamp}-{commit}.json"


def save(kind: str, figures: dict, root: Path = RESULTS) -> Path:
    """Writes the run's figures (sorted keys, two-space indents: a diff shows what changed)."""
    root.mkdir(parents=True, exist_ok=True)
    path = result_path(kind, figures, root)
    path.write_text(json.dumps({"kind": kind, **figures}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load(kind: str, root: Path = RESULTS) -> list[dict]:
    """The runs of ``kind``, oldest first, each with its file's name as ``file``."""
    runs = []
    for f in sorted(root.glob(f"{kind}-*.json")):
        run = json.loads(f.read_text(encoding="utf-8"))
        run["file"] = f.name
        runs.append(run)
    return sorted(runs, key=lambda r: (r.get("started") or "", r["file"]))


def _get(figures: dict, *path: str) -> Any:
    value: Any = figures
    for p in path:
        if not isinstance(value, dict) or p not in value:
            return None
        value = value[p]
    return value


@dataclass(frozen=True)
class Goal:
    name: str
    target: str  # as it reads in the table
    value: Callable[[dict], float | None]  # from a pipeline run's figures; None: not measured
    met: Callable[[float], bool]
    shown: Callable[[float], str]  # the value as it reads
    why: Callable[[dict], str]  # what the run's own figures say the value is made of
    lever: str  # where to push next when the goal is not met, and the section that has the analysis


def _parts(values: dict | None, unit: str, n: int = 5) -> str:
    """The largest parts of a breakdown ({component: figure}), largest first."""
    parts = sorted(((k, v) for k, v in (values or {}).items() if k != "total" and isinstance(v, (int, float))),
                   key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:,.1f}{unit}" if unit == "%" else f"{k} {v:,.0f}{unit}" for k, v in parts[:n])


def _frames(figures: dict, key: str, n: int = 3) -> str:
    return ", ".join(f"{f['frame']} {100 * f['share']:.0f}%" for f in (_get(figures, key) or [])[:n])


def _why_cpu(f: dict) -> str:
    bulk = _get(f, "store_bulk_stored_documents", "cpu_us_per_doc")
    return (f"CPU per event: {_parts(_get(f, 'end_to_end', 'cpu_us_per_event'), ' us')}; the store's bulk insert "
            f"{bulk or 0:,.0f} us a document")


def _why_share(f: dict) -> str:
    cpu = _get(f, "end_to_end", "cpu_us_per_event") or {}
    total = sum(v for v in cpu.values() if isinstance(v, (int, float)))
    cores = _get(f, "cost_table", "cores") or 2
    ceiling = f", so all of them carry at most {cores * 1e6 / total:,.0f} events/s on {cores} cores" if total else ""
    return f"every component shares the cores: {total:,.0f} us of CPU per event end to end{ceiling}"


def _cpu_vs_bulk(f: dict) -> float | None:
    cpu, bulk = _get(f, "end_to_end", "cpu_us_per_event"), _get(f, "store_bulk_stored_documents", "cpu_us_per_doc")
    return sum(cpu.values()) / bulk if cpu and bulk else None


def _job_vs_reader(f: dict) -> float | None:
    job, reader = _get(f, "job_alone", "events_per_s_per_core"), _get(f, "parse_alone_records_per_s_one_core", READER,
                                                                      "with_enrichment")
    return job / reader if job and reader else None


ALERT_SLOW_S = 1.0  # the alert latency target: a burst this slow or slower is accounted for


def slow_bursts(written: dict, seen: dict, t0: float, by_written: list[tuple[float, float]],
                slow: float = ALERT_SLOW_S) -> list[dict]:
    """Each brute-force burst whose alert took ``slow`` seconds or more: when it was written (seconds
    into the latency run), its alert's latency, and the slowest latency of the events written within a
    second of it (``by_written``: (second written, latency) of the run's events, on the same busy
    partition). Events as slow as the alert mean the pipeline itself was late at that moment (a
    checkpoint, a trim, a backlog), not the rules' path."""
    out = []
    for user, at in sorted(written.items(), key=lambda kv: kv[1]):
        if user not in seen or seen[user] - at < slow:
            continue
        second = at - t0
        near = [lat for w, lat in by_written if abs(w - second) <= 1.0]
        out.append({"at_s": round(second, 1), "latency_s": round(seen[user] - at, 2),
                    "events_latency_s": round(max(near), 2) if near else None})
    return out


def _why_alerts(f: dict) -> str:
    slow, bursts = _get(f, "alert_latency", "slow"), _get(f, "alert_latency", "bursts")
    if slow is None:  # a run from before the bursts were accounted for
        return f"the job's top frames end to end: {_frames(f, 'end_to_end_job_top_frames')}"
    if not slow:
        return "no burst took 1 s or more"
    each = ", ".join(f"{s['latency_s']:.2f} s at {s['at_s']:.0f} s" for s in slow[:5])
    events = [s["events_latency_s"] for s in slow if s["events_latency_s"] is not None]
    alongside = sum(1 for s in slow if s["events_latency_s"] is not None
                    and s["events_latency_s"] >= 0.8 * s["latency_s"])
    return (f"{len(slow)} of {bursts} bursts took 1 s or more ({each}{', ...' if len(slow) > 5 else ''}); the events "
            f"written within a second of them took up to {max(events, default=0):.2f} s to be stored, as slow as "
            f"the alert for {alongside} of the {len(slow)}")


def _idle_share(f: dict) -> float | None:
    idle = _get(f, "idle", "cpu_percent_of_a_core")
    return sum(idle.values()) if idle else None


GOALS = [
    Goal("all components' CPU per event end to end, against the store's own bulk-insert CPU per document of the "
         "same documents", "<= 1.3x", _cpu_vs_bulk, lambda v: v <= 1.3, lambda v: f"{v:.2f}x", _why_cpu,
         "the largest part: the store's document (docs/store.md) or the job's profile below (the cost table; "
         "bench/README.md \"Why end to end stays below 80% of the 2-writer rate on 2 cores\")"),
    Goal("end to end, against the store's 2-writer bulk rate", ">= 80%",
         lambda f: _get(f, "end_to_end", "percent_of_store_bulk"), lambda v: v >= 80, lambda v: f"{v:.0f}%",
         _why_share, "CPU per event end to end, as the goal above"),
    Goal(f"the job alone per core, against the reader alone on one core ({READER}: parse, enrich, mask)", ">= 40%",
         lambda f: None if _job_vs_reader(f) is None else 100 * _job_vs_reader(f), lambda v: v >= 40,
         lambda v: f"{v:.0f}%", lambda f: f"the job alone's top frames: {_frames(f, 'job_alone_top_frames')}",
         "the top frames, and reading each record once (bench/README.md \"Why the job alone stays below "
         "150,000 events/s per core\")"),
    Goal("latency p99 at 70% of the run's own end-to-end rate", "< 2 s",
         lambda f: None if _get(f, "run", "latency_rate_given") else _get(f, "latency", "p99_s"),
         lambda v: v < 2, lambda v: f"{v:.2f} s",
         lambda f: f"the job's top frames end to end: {_frames(f, 'end_to_end_job_top_frames')}",
         "what the slow seconds fell on: ./auditpipe bench --long --json FILE at that rate says (bench/README.md "
         "\"The long run\")"),
    Goal("alert latency p99", "< 1 s", lambda f: _get(f, "alert_latency", "p99_s"), lambda v: v < 1,
         lambda v: f"{v:.2f} s", _why_alerts,
         "a slow burst whose events were as slow: the pipeline's latency at that moment (the goal above; "
         "./auditpipe bench --long says what slow seconds fall on); else the rules' own path: their read of the "
         "topic and the alerts' writer (bench/README.md \"Why the job alone stays below 150,000 events/s per "
         "core\")"),
    Goal("resident memory of the whole stack (peak per component, summed)", "<= 2,048 MiB",
         lambda f: _get(f, "memory_at_latency_rate_mib", "total"), lambda v: v <= 2048, lambda v: f"{v:,.0f} MiB",
         lambda f: f"resident memory: {_parts(_get(f, 'memory_at_latency_rate_mib'), ' MiB')}",
         "the largest part's heap and buffers (bench/README.md \"The heaps and the network buffers' waits\")"),
    Goal("idle, sources configured and nothing written: the whole stack", "< 5% of a core", _idle_share,
         lambda v: v < 5, lambda v: f"{v:.1f}%",
         lambda f: f"idle CPU, of a core: {_parts(_get(f, 'idle', 'cpu_percent_of_a_core'), '%')}",
         "the largest part's threads that run while nothing happens (bench/README.md, figure 10, \"Idle\")"),
]


def goal_rows(figures: dict) -> list[tuple[Goal, float | None]]:
    return [(g, g.value(figures)) for g in GOALS]


def goals_lines(figures: dict) -> list[str]:
    """The goals beside this run's figures, as the bench prints them."""
    out = []
    for g, v in goal_rows(figures):
        verdict = "not measured" if v is None else ("met" if g.met(v) else "NOT MET")
        out.append(f"  {g.name}: {'-' if v is None else g.shown(v)} (target {g.target}): {verdict}")
        if v is not None and not g.met(v):
            out.append(f"    why, from this run: {g.why(figures)}")
            out.append(f"    next lever: {g.lever}")
    return out


# --- bench/README.md's generated tables ------------------------------------------------------------

def _commit(run: dict) -> str:
    return str(run.get("commit") or _get(run, "versions", "auditpipe_commit") or "?")


def _day(run: dict) -> str:
    return str(run.get("started") or "?")[:16].replace("T", " ")


def _n(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}{unit}" if isinstance(value, (int, float)) else str(value)


def goals_table(runs: list[dict]) -> str:
    full = [r for r in runs if not _get(r, "run", "quick") and not _get(r, "run", "end_to_end_only")]
    if not full:
        return "_No full run of the pipeline bench in bench/results/ yet._\n"
    run = full[-1]
    lines = [f"The newest full run: {_day(run)} UTC, {_commit(run)}, {run.get('machine', '?')}; "
             f"stream formats {', '.join(_get(run, 'run', 'stream_formats') or []) or 'off'} "
             f"(`{run['file']}`).", "", "| goal | this run | target | |", "|---|---|---|---|"]
    for g, v in goal_rows(run):
        verdict = "not measured" if v is None else ("**met**" if g.met(v) else "**not met**")
        lines.append(f"| {g.name} | {'-' if v is None else g.shown(v)} | {g.target} | {verdict} |")
    return "\n".join(lines) + "\n"


def cost_table(runs: list[dict]) -> str:
    with_costs = [r for r in runs if _get(r, "cost_table", "features")]
    if not with_costs:
        return "_No run with a cost table in bench/results/ yet._\n"
    run = with_costs[-1]
    c = run["cost_table"]
    runs_cpu = c.get("job_cpu_us_per_event_runs") or []
    beside = all("cpu_us_per_event_beside" in f for f in c["features"].values())
    if beside and len(runs_cpu) > 2:
        how = (f"Each feature: the job without it, the rest as shipped, run between two runs of the job as shipped "
               f"and set against their mean; the job as shipped took {min(runs_cpu):.1f}-{max(runs_cpu):.1f} us over "
               f"its {len(runs_cpu)} runs (the figure above is their mean), so a cost within "
               f"{max(runs_cpu) - min(runs_cpu):.1f} us of zero is the machine's noise.")
    elif len(runs_cpu) == 2:
        how = (f"Each feature: the job without it, the rest as shipped, one run each; the job as shipped took "
               f"{runs_cpu[0]:.1f} and {runs_cpu[1]:.1f} us in a run before those and one after them (the figure "
               f"above is their mean), so a cost within {abs(runs_cpu[0] - runs_cpu[1]):.1f} us of zero is the "
               "machine's noise.")
    else:
        how = ("Each feature: the job without it, the rest as shipped, one run each; a difference within a few us is the "
               "machine's noise.")
    lines = [f"The job alone with every shipped feature: {c['job_cpu_us_per_event']:.1f} us of CPU per event "
             f"({c['job_alone_events_per_s']:,} events/s on {c['cores']} cores), {_day(run)} UTC, {_commit(run)} "
             f"(`{run['file']}`). " + how, "",
             "| feature | CPU per event | share of the job's CPU | the job without it |"
             + (" the job as shipped beside it |" if beside else ""), "|---|---|---|---|" + ("---|" if beside else "")]
    for name, f in c["features"].items():
        without = f"{f['events_per_s_without']:,} events/s" + (
            f", {f['cpu_us_per_event_without']:.1f} us/event" if "cpu_us_per_event_without" in f else "")
        lines.append(f"| {name} | {f['cpu_us_per_event']:.1f} us | {100 * f['share_of_job']:.0f}% | {without} |"
                     + (f" {f['cpu_us_per_event_beside']:.1f} us/event |" if beside else ""))
    return "\n".join(lines) + "\n"


def runs_table(runs: list[dict]) -> str:
    if not runs:
        return "_No run of the pipeline bench in bench/results/ yet._\n"
    rows = []
    for r in reversed(runs):
        kind = "quick" if _get(r, "run", "quick") else "end to end only" if _get(r, "run", "end_to_end_only") else "full"
        cpu = _get(r, "end_to_end", "cpu_us_per_event")
        bulk_cpu = _get(r, "store_bulk_stored_documents", "cpu_us_per_doc")
        reader = _job_vs_reader(r)
        rows.append([
            _day(r), _commit(r), kind,
            f"{_n(_get(r, 'end_to_end', 'events_per_s'))} ({_n(_get(r, 'end_to_end', 'percent_of_store_bulk'), '%')})",
            f"{_n(sum(cpu.values()) if cpu else None)} / {_n(bulk_cpu)} us",
            f"{_n(_get(r, 'job_alone', 'events_per_s_per_core'))}"
            + ("" if reader is None else f" ({100 * reader:.0f}%)"),
            f"{_get(r, 'latency', 'p99_s') if _get(r, 'latency', 'p99_s') is not None else '-'} s "
            f"({_n(_get(r, 'latency', 'events_per_s'))})",
            f"{_get(r, 'alert_latency', 'p99_s') if _get(r, 'alert_latency', 'p99_s') is not None else '-'} s",
            _n(_get(r, 'memory_at_latency_rate_mib', 'total'), ' MiB')])
    return _table(["started (UTC)", "commit", "run", "end to end, events/s (% of the 2-writer bulk rate)",
                   "CPU per event: all / the store's bulk", "job alone per core (% of the reader)",
                   "latency p99 (at events/s)", "alert p99", "memory"], rows)


def review_table(runs: list[dict]) -> str:
    if not runs:
        return "_No run of the review bench in bench/results/ yet._\n"
    rows = []
    for r in reversed(runs):
        reports = r.get("reports") or {}
        panels = r.get("panels") or {}
        slowest = max((x.get("seconds", 0) for x in reports.values()), default=None)
        largest = max((x.get("bytes", 0) for x in reports.values()), default=None) or None
        panel = max((x.get("seconds", 0) for x in panels.values()), default=None) if isinstance(panels, dict) else None
        rows.append([_day(r), _commit(r), _n(_get(r, 'run', 'events')), _n(_get(r, 'import', 'events_per_s')),
                     '-' if slowest is None else f'{slowest:.1f} s',
                     '-' if largest is None else f'{largest / 1024:,.0f} KiB',
                     '-' if panel is None else f'{panel:.2f} s', _long_counts(r)])
    return _table(["started (UTC)", "commit", "events", "import, events/s", "slowest report", "largest report",
                   "slowest panel", "counts"], rows)


def long_table(runs: list[dict]) -> str:
    if not runs:
        return "_No long run in bench/results/ yet._\n"
    rows = []
    for r in reversed(runs):
        # the first minute is the fresh job's JIT warm-up, shown on its own by the run
        p99 = [s.get("p99_s") for s in r.get("slices") or [] if (s.get("from_min") or 0) >= 1]
        shown = " / ".join("-" if v is None else f"{v:.2f}" for v in p99) + " s" if p99 else "-"
        cpu = r.get("cpu_us_per_event") or {}
        rows.append([_day(r), _commit(r), _n(_get(r, 'run', 'rate')), _n(_get(r, 'run', 'minutes')), shown,
                     _n(round(sum(cpu.values()))) + ' us' if cpu else '-', _long_counts(r)])
    return _table(["started (UTC)", "commit", "rate, events/s", "minutes",
                   "latency p99 of each 5 minutes after the first", "CPU per event, all components", "counts"], rows)


def _table(columns: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: the header, then a line a row."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _long_counts(run: dict) -> str:
    """Whether every record was counted and archived once, and the integrity alerts a run's passes raised."""
    counts = run.get("counts") or {}
    if counts:
        exact = all(c.get("written") == c.get("stats") == c.get("archived") for c in counts.values())
    else:
        exact = run.get("counts_exact")
    shown = "-" if exact is None else "exact" if exact else "DIFFER"
    alerts = len(run.get("integrity_alerts") or [])
    return shown + (f"; {alerts} integrity alert{'s' if alerts != 1 else ''}" if alerts else "")


#: the generated sections of bench/README.md: name -> what makes it from bench/results/
SECTIONS: dict[str, Callable[[Path], str]] = {
    "goals": lambda root: goals_table(load("pipeline", root)),
    "cost-table": lambda root: cost_table(load("pipeline", root)),
    "pipeline-runs": lambda root: runs_table(load("pipeline", root)),
    "review-runs": lambda root: review_table(load("review", root)),
    "long-runs": lambda root: long_table(load("long", root)),
}


def _marker(name: str, end: bool = False) -> str:
    return f"<!-- generated from bench/results/ by ./auditpipe bench --tables: {name}{' end' if end else ''} -->"


def render(readme: str, root: Path = RESULTS) -> str:
    """``readme`` with each generated section made anew from the results in ``root``."""
    for name, make in SECTIONS.items():
        begin, end = _marker(name), _marker(name, end=True)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        if not pattern.search(readme):
            raise ValueError(f"bench/README.md has no generated section {name!r} ({begin} ... {end})")
        section = f"{begin}\n{make(root)}{end}"
        readme = pattern.sub(lambda _m, section=section: section, readme)
    return readme


def write_tables(readme: Path = README, root: Path = RESULTS) -> bool:
    """Makes bench/README.md's generated sections anew; whether anything changed."""
    before = readme.read_text(encoding="utf-8")
    after = render(before, root)
    if after != before:
        readme.write_text(after, encoding="utf-8")
    return after != before
