"""`auditpipe bench`: measure throughput and latency (prints figures; see bench/README.md).

Starts a stack of its own on other ports, configured as the repository's auditpipe.yaml (what users
run), and measures the store's bulk-insert rate, the Flink job alone (at parallelism 1 and 2, with
the top frames of a profile, and without each of its features: the cost table), each format's
parser, end-to-end throughput with each component's CPU per event, memory and a profile of the job,
and latency and alert latency at 70% of the run's end-to-end rate. Prints figures beside their
targets and the goals beside the run's ratios; asserts nothing. Every run's figures go to
bench/results/; --tables makes bench/README.md's tables from them. About 32 minutes on 2 cores
(--quick: 13; 2026-12-02).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from auditpipe import paths
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented, positive
from auditpipe.errors import UserError


def run(app: Application) -> int:
    """Runs bench/pipeline_bench.py, or with --review bench/review_bench.py: figures beside targets."""
    paths.require_checkout("bench")
    a = app.args
    if a.tables:
        if a.long or a.review or a.quick or a.end_to_end_only or a.stream or a.json or a.recordings or a.latency_rate:
            raise UserError("--tables runs no bench: it makes bench/README.md's tables anew from bench/results/")
        sys.path.insert(0, str(paths.REPO / "bench"))
        import results

        changed = results.write_tables()
        app.out(f"bench/README.md's tables {'made anew' if changed else 'already current'} from "
                f"{len(list(results.RESULTS.glob('*.json')))} run(s) in bench/results/")
        return 0
    if a.stream and "none" in a.stream and len(a.stream) > 1:
        raise UserError("--stream none turns the event stream off: it takes no format beside it")
    if a.stream and (a.long or a.review):
        raise UserError("--stream turns the event stream on in the pipeline's bench, not in --long or --review")
    if a.long:
        if a.review or a.end_to_end_only or a.recordings or a.quick or a.latency_rate is not None:
            raise UserError("--long is a run of its own: --review, --end-to-end-only, --recordings, --quick and "
                            "--latency-rate belong to the other benches (a shorter long run: --minutes)")
        return subprocess.run([sys.executable, str(paths.REPO / "bench" / "long_run.py"),
                               *(["--minutes", str(a.minutes)] if a.minutes else []),
                               *(["--rate", str(a.rate)] if a.rate else []),
                               *(["--cluster"] if a.cluster else []),
                               *(["--json", str(Path(a.json).resolve())] if a.json else [])],
                              cwd=paths.REPO).returncode
    if a.minutes is not None or a.rate is not None or a.cluster:
        raise UserError("--minutes, --rate and --cluster are the long run's (--long)")
    if a.latency_rate is not None and a.latency_rate < 1:
        raise UserError(f"--latency-rate {a.latency_rate:g}: at least 1 event a second")
    if a.review:
        if a.end_to_end_only or a.recordings or a.latency_rate is not None:
            raise UserError("--review measures reports and panels over a quarter: --end-to-end-only, --recordings and "
                            "--latency-rate belong to the pipeline's bench")
        return subprocess.run([sys.executable, str(paths.REPO / "bench" / "review_bench.py"),
                               *(["--quick"] if a.quick else []),
                               *(["--json", str(Path(a.json).resolve())] if a.json else [])],
                              cwd=paths.REPO).returncode
    return subprocess.run([sys.executable, str(paths.REPO / "bench" / "pipeline_bench.py"),
                           *(["--quick"] if a.quick else []),
                           *(["--end-to-end-only"] if a.end_to_end_only else []),
                           *(["--stream", ",".join(a.stream)] if a.stream else []),
                           *(["--json", str(Path(a.json).resolve())] if a.json else []),
                           *(["--recordings", str(Path(a.recordings).resolve())] if a.recordings else []),
                           *(["--latency-rate", f"{a.latency_rate:g}"] if a.latency_rate else [])],
                          cwd=paths.REPO).returncode


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe bench --quick", "./auditpipe bench --json run.json --recordings /tmp/jfr",
                   "./auditpipe bench --review --json review.json",
                   "./auditpipe bench --long --minutes 30 --rate 3000 --json long.json",
                   "./auditpipe bench --tables"), run)
    s.add_argument("--quick", action="store_true", help="a shorter run (40,000 records end to end, not 200,000; "
                   "with --review 400,000 events, not 4 million)")
    s.add_argument("--review", action="store_true",
                   help="the review-scale bench instead: a quarter of 5 servers' history (4 million events) shipped "
                        "through the job, then every report and every panel's query over the quarter, with their "
                        "seconds beside the targets and their counts against the generator's (bench/README.md)")
    s.add_argument("--end-to-end-only", action="store_true",
                   help="only the store's bulk rate, the end-to-end run with its ceiling and the latency run "
                        "(about 15 minutes on a slow day): to compare a change of the job's store writes or of the store, "
                        "without the job alone and the parsers")
    from auditpipe.config import load_schema
    stream_formats = load_schema()["properties"]["stream"]["properties"]["formats"]["items"]["enum"]
    s.add_argument("--stream", action="append", choices=[*stream_formats, "none"], metavar="FORMAT",
                   help="the event stream in the bench's stack in this format instead of auditpipe.yaml's (repeat for "
                        f"several; stream.formats: {', '.join(stream_formats)}; none: off): what its Kafka "
                        "transactions cost end to end")
    s.add_argument("--long", action="store_true",
                   help="the long run instead: two servers writing in real time for --minutes at --rate events/s "
                        "together, with every checkpoint's size and duration, the job's heap and resident memory and "
                        "the latency of each 5 minutes, and the counts checked (bench/README.md)")
    s.add_argument("--minutes", type=positive, help="the long run's length (default 30)")
    s.add_argument("--rate", type=positive, help="the long run's events/s, both servers together (default 3000; 2 cores "
                   "carried 4000 with the whole stack on them: bench/README.md, The long run)")
    s.add_argument("--cluster", action="store_true", help="the long run with the job on the local Flink cluster "
                   "(a JobManager and two TaskManagers) instead of one MiniCluster process")
    s.add_argument("--latency-rate", type=positive, metavar="N",
                   help="the latency run at N events/s instead of 70%% of the run's own end-to-end rate: to set two "
                        "commits side by side on one day (the machine's speed varies); its latency is then not judged "
                        "against the goal")
    s.add_argument("--json", metavar="FILE", help="also write the figures, with the machine, the component versions, "
                   "the parallelism and the run lengths, to FILE as JSON (two runs on one machine can be compared)")
    s.add_argument("--tables", action="store_true", help="run no bench: make bench/README.md's tables anew from "
                   "the runs in bench/results/")
    s.add_argument("--recordings", metavar="DIR", help="keep the Java Flight Recorder recordings of the job (alone, "
                   "and end to end) in DIR, to read with the JDK's jfr tool or JDK Mission Control")
