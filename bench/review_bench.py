"""auditpipe review-scale benchmark: a quarter of a fleet's audit history, then every evidence report
and every dashboard panel's query over the whole quarter. Prints figures beside targets; exits 1 when
a count differs from the generator's. Run: ./auditpipe bench --review [--quick] [--json FILE]

On a stack of its own (ports 3xxxx, state in a temporary folder):
  1. the quarter: each server's audit log written by the simulator (sessions, the statement mix,
     failed logins and bursts of them, the incidents) with timestamps spread over the last DAYS days,
     rotated every 64 MiB, then brought in with one `auditpipe import` (the servers one after
     another in one JVM): events/s over its wall time, the JVM's start included (target: 50,000),
     and the archive holding every event;
  2. every report regime (pci, hipaa, sox) over the DAYS days: seconds each (target: 30), and its
     coverage (events per server) and failed logins per user equal to the generator's;
  3. every panel of the dashboards over the DAYS days (a panel with a range of its own, its own),
     its query as Grafana's data source sends it, against the store: seconds each (target: 2), and
     the failed logins and the events per server it counts equal to the generator's where the
     panel counts them.
Targets (2 cores): import at 50,000 events/s, each report within 30 s, each panel query within 2 s,
every count equal.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))
sys.path.insert(0, str(REPO / "bench"))

import results  # noqa: E402
from pipeline_bench import cli, git_commit, machine, stack_config  # noqa: E402

from auditpipe import config  # noqa: E402
from auditpipe.archive import reader  # noqa: E402
from auditpipe.evidence import dashboards, report  # noqa: E402
from auditpipe.tools.simulate import simulate  # noqa: E402

PORTS = {"kafka": 30292, "controller": 30293, "store": 30317, "flink": 30281}
IMPORT_TARGET, REPORT_TARGET_S, PANEL_TARGET_S = 50_000, 30.0, 2.0
PANEL_GIVE_UP_S = 120.0  # a panel's query still running then is reported as slower, and the next one runs
ROTATE_BYTES = 64 * 1024 * 1024


def quarter_start(now: datetime, days: int) -> datetime:
    """Where the written quarter begins (the hour ``days`` days ago), and the reports' and panels' range."""
    return (now - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)


def write_quarter(logs: dict[str, Path], per_server: int, days: int, now: datetime) -> dict:
    """Each server's log, all at once (threads), timestamps over the last ``days`` days; the manifests."""
    start = quarter_start(now, days)
    span = (now - start).total_seconds() - 3600
    manifests, errors = {}, []

    def one(i: int, server: str, log: Path) -> None:
        try:
            manifests[server] = simulate(log, rate=per_server / span, duration=span, speedup=span / 120,
                                         seed=1000 + i, rotate_on_size=ROTATE_BYTES, rotations=10_000,
                                         failed_login_burst=12, incidents=True, start_time=start)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"{server}: {e}")

    threads = [threading.Thread(target=one, args=(i, s, p)) for i, (s, p) in enumerate(logs.items())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit("the simulator failed: " + "; ".join(errors))
    return manifests


def import_quarter(cfg_file: Path, logs: dict[str, Path]) -> float:
    """Every server's files through one `auditpipe import` (the servers one after another in one JVM);
    the seconds it took."""
    args = []
    for server, log in logs.items():
        files = sorted(log.parent.glob(log.name + "*"))
        print(f"  importing {server}: {len(files)} files", flush=True)
        args += ["--server", server, *map(str, files)]
    started = time.monotonic()
    cli(cfg_file, "import", *args)
    return time.monotonic() - started


def panel_rows(cfg, target: dict, since: datetime, until: datetime, servers: list[str]) -> list[dict] | None:
    """The panel's rows as Grafana's data source asks the store for them; None when the store has not
    answered within PANEL_GIVE_UP_S."""
    from bson import json_util
    from pymongo import MongoClient
    from pymongo.errors import NetworkTimeout

    text = dashboards.expand_macros(target["queryText"], int(since.timestamp() * 1000), int(until.timestamp() * 1000),
                                    servers)
    pipeline = json_util.loads(text, json_options=json_util.JSONOptions(tz_aware=True, tzinfo=timezone.utc))
    # no retry: pymongo would send the request again after the first timeout
    db = MongoClient(cfg.store_uri, socketTimeoutMS=int(PANEL_GIVE_UP_S * 1000), retryReads=False)[cfg.store["database"]]
    try:
        return list(db[target["collection"]].aggregate(pipeline))
    except NetworkTimeout:
        return None


def main() -> None:
    quick = "--quick" in sys.argv
    json_out = Path(sys.argv[sys.argv.index("--json") + 1]) if "--json" in sys.argv else None
    servers_n, total, days = (5, 400_000, 90) if quick else (5, 4_000_000, 90)
    per_server = total // servers_n
    root = Path(tempfile.mkdtemp(prefix="auditpipe-review-bench-"))
    logs = {f"review-db-{i + 1:02d}": root / f"review-db-{i + 1:02d}" / "audit.log" for i in range(servers_n)}
    # the repository's configuration (its compliance settings: the simulator's tables, accounts and rules)
    cfg_file = stack_config(root, PORTS, [], flink={"checkpoint_interval": "5s"}, store={"database": "review"})
    cfg = config.load(cfg_file)
    figures: dict = {"run": {"quick": quick, "servers": servers_n, "events": total, "days": days},
                     "machine": machine(), "commit": git_commit(),
                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"machine: {machine()}; auditpipe {git_commit()}")
    print(f"the quarter: {servers_n} servers, {total:,} events over {days} days")
    cli(cfg_file, "up")
    failures: list[str] = []
    try:
        now = datetime.now(timezone.utc)
        written_at = time.monotonic()
        manifests = write_quarter(logs, per_server, days, now)
        records = sum(m.records for m in manifests.values())
        print(f"  written: {records:,} records in {time.monotonic() - written_at:.0f} s", flush=True)
        seconds = import_quarter(cfg_file, logs)
        rate = records / seconds
        archived = reader.span(cfg.archive_path).events or 0
        if archived != records:
            failures.append(f"the archive holds {archived:,} events of the {records:,} written")
        figures["import"] = {"events_per_s": round(rate), "seconds": round(seconds, 1)}
        print(f"import:                   {rate:10,.0f} events/s  (target {IMPORT_TARGET:,}; {records:,} events in "
              f"{seconds:.0f} s, the JVM's start included)")

        since, until = quarter_start(now, days), now + timedelta(minutes=5)
        failed_by_user: Counter = Counter()
        for m in manifests.values():
            failed_by_user.update(m.failed_logins_by_user)
        figures["reports"] = {}
        for regime in report.REGIMES:
            started = time.monotonic()
            built = report.build(cfg, regime, since, until)
            written = report.write(built, root / f"{regime}.html")
            seconds = time.monotonic() - started
            coverage = {c.server: c.events for c in built.coverage}
            by_user: Counter = Counter()
            for row in next(s for s in built.sections if s.key == "failed-logins").rows:
                by_user[row["_id"].get("user")] += row["attempts"]
            exact = coverage == {s: m.records for s, m in manifests.items()} and dict(by_user) == dict(failed_by_user)
            if not exact:
                failures.append(f"report {regime}: coverage {coverage} or failed logins per user differ")
            figures["reports"][regime] = {"seconds": round(seconds, 1), "exact": exact, "bytes": written.stat().st_size}
            differ = "" if exact else "  COUNTS DIFFER"
            print(f"report {regime:<6}           {seconds:8.1f} s   (target {REPORT_TARGET_S:.0f} s){differ}")

        figures["panels"] = {}
        names = list(logs)
        panels = [(f"{path.stem}: {title}", target, dashboards.panel_range(d, title, since, until))
                  for path in sorted(dashboards.OUT_DIR.glob("*.json")) for d in [json.loads(path.read_text())]
                  for title, target in dashboards.panel_targets(d)]
        # the one-minute stats' panel last (imports write none: it shows the live job's last hours)
        stats = cfg.store["stats_collection"]
        for key, target, (panel_since, panel_until) in sorted(panels, key=lambda p: p[1]["collection"] == stats):
            started = time.monotonic()
            rows = panel_rows(cfg, target, panel_since, panel_until, names)
            seconds = time.monotonic() - started
            if rows is None:
                figures["panels"][key] = {"seconds": None, "gave_up_after": PANEL_GIVE_UP_S,
                                          "collection": target["collection"]}
                print(f"panel >{PANEL_GIVE_UP_S:.0f} s (target {PANEL_TARGET_S:.0f} s)  {key} "
                      f"[{target['collection']}]: no answer yet, not waited for", flush=True)
                continue
            figures["panels"][key] = {"seconds": round(seconds, 2), "rows": len(rows), "collection": target["collection"]}
            note = ""
            if target["auditpipeQuery"] == "hours-by-server":
                hourly: Counter = Counter()
                for r in rows:
                    hourly[r["server"]] += r["count"]
                if dict(hourly) != {s: m.records for s, m in manifests.items()}:
                    failures.append(f"panel {key}: events per server differ")
                    note = "  COUNTS DIFFER"
            if target["auditpipeQuery"] == "failed-logins":
                counted = Counter()
                for r in rows:
                    counted[r["_id"].get("user")] += r["attempts"]
                if dict(counted) != dict(failed_by_user):
                    failures.append(f"panel {key}: failed logins per user differ")
                    note = "  COUNTS DIFFER"
            print(f"panel {seconds:6.2f} s (target {PANEL_TARGET_S:.0f} s)  {key} [{target['collection']}]{note}",
                  flush=True)
    finally:
        cli(cfg_file, "down")
    figures["failures"] = failures
    figures["counts_exact"] = not failures
    if json_out:
        json_out.write_text(json.dumps(figures, indent=2))
    print(f"figures kept in {results.save('review', figures)}")
    print("counts: " + ("every count equals the generator's" if not failures else "; ".join(failures)))
    print(f"state kept in {root} (remove it when done)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
