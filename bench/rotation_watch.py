"""The supervisor's rotation watch (stack/collector/catchup.py ``RotationWatch``), which looks at every source's
rotated files each second while the collector runs: its CPU a look, beside the target. Prints
figures, asserts nothing.

Run: .venv/bin/python bench/rotation_watch.py [--sources N] [--rotated K] [--descriptors D] [--looks L]

N Percona XML sources (default 20), each with K rotated files (default 5) that end in the closing
</AUDIT>, which is never a record: such a file is looked at again at every look, the costliest case
that stays. A process holding D open files (default 500: rsyslog's in the end-to-end suite's stack of
80 sources) stands in for rsyslog, whose open files each look lists. Nothing ships (no Kafka).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "cli"))

from auditpipe.cli.arguments import at_least_one  # noqa: E402 - the path above first

# the whole stack idle stays under 5% of a core (bench/README.md "Goals"): the watch's share at most 2%
TARGET_MS_A_LOOK = 20.0



def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=at_least_one, default=20)
    ap.add_argument("--rotated", type=at_least_one, default=5)
    ap.add_argument("--descriptors", type=at_least_one, default=500)
    ap.add_argument("--looks", type=at_least_one, default=50)
    a = ap.parse_args()
    from auditpipe.stack.collector.catchup import RotationWatch
    from auditpipe.stack.supervisor import ROTATION_WATCH_EVERY

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # rsyslog's stand-in first: files written after it started are ones it never opened
        holder = subprocess.Popen([sys.executable, "-c", "import sys, time; fs = [open(sys.executable, 'rb') "
                                   f"for _ in range({a.descriptors})]; print(flush=True); time.sleep(3600)"],
                                  stdout=subprocess.PIPE)
        try:
            holder.stdout.readline()  # its files are open
            sources = []
            for i in range(a.sources):
                folder = root / "logs" / f"db-{i:02d}"
                folder.mkdir(parents=True)
                (folder / "audit.log").write_text('<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n')
                for k in range(1, a.rotated + 1):
                    (folder / f"audit.log.{k:02d}").write_text(
                        '<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n</AUDIT>\n')
                sources.append({"path": str(folder / "audit.log"), "server": f"db-{i:02d}", "format": "percona-xml"})
            (root / "work").mkdir()
            resume = root / "resume-points.json"
            resume.write_text(json.dumps({"resumed": {}, "catching_up": False, "shipped": {}}))
            watch = RotationWatch("127.0.0.1:1", "audit.raw", str, root / "work", root / "shipped.json", resume,
                                  1 << 20, 1 << 21)
            watch.check(sources, holder.pid)  # the first look judges every file
            started = time.process_time()
            for _ in range(a.looks):
                watch.check(sources, holder.pid)
            ms = (time.process_time() - started) / a.looks * 1000
        finally:
            holder.kill()
    share = ms / 1000 / ROTATION_WATCH_EVERY * 100
    print(f"rotation watch: {a.sources} XML sources, {a.rotated} rotated files each, {a.descriptors} open files of "
          f"the collector's, {a.looks} looks")
    print(f"  CPU a look   {ms:8.1f} ms   target <= {TARGET_MS_A_LOOK:.0f} ms "
          f"({'met' if ms <= TARGET_MS_A_LOOK else 'NOT met'})")
    print(f"  share of a core at a look every {ROTATION_WATCH_EVERY:.0f} s: {share:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
