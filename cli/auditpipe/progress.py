"""Progress output on stderr: steps with a live elapsed-time line, and progress bars.

On a terminal the line redraws in place; elsewhere (a log file, a pipe) a start and an end line are
printed, so logs stay readable.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from auditpipe.errors import ComponentError

QUIET = False


def _tty() -> bool:
    return sys.stderr.isatty()


def info(message: str) -> None:
    if not QUIET:
        print(message, file=sys.stderr, flush=True)


@contextmanager
def step(title: str) -> Iterator[None]:
    """A titled unit of work with elapsed time; prints 'done' or 'failed'."""
    start = time.monotonic()
    stop = threading.Event()

    def spin() -> None:
        frames = "|/-\\"
        i = 0
        while not stop.wait(0.25):
            sys.stderr.write(f"\r  {frames[i % 4]} {title} ({time.monotonic() - start:.0f}s)")
            sys.stderr.flush()
            i += 1

    spinner = None
    if _tty() and not QUIET:
        spinner = threading.Thread(target=spin, daemon=True)
        spinner.start()
    else:
        info(f"  - {title} ...")
    try:
        yield
    except BaseException:
        stop.set()
        if spinner:
            spinner.join()
            sys.stderr.write("\r\033[K")
        info(f"  x {title}: failed after {time.monotonic() - start:.1f}s")
        raise
    stop.set()
    if spinner:
        spinner.join()
        sys.stderr.write("\r\033[K")
    info(f"  + {title} ({time.monotonic() - start:.1f}s)")


def run_logged(argv: Sequence[str], log_file: Path, what: str, cwd: Path | None = None,
               env: dict | None = None, timeout: float | None = None) -> None:
    """Runs a command with its output to ``log_file``; on failure raises with the log's tail."""
    import os

    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as log:
        log.write(f"\n=== {time.strftime('%H:%M:%S')} {' '.join(argv)}\n".encode())
        log.flush()
        try:
            result = subprocess.run(list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=cwd, env={**os.environ, **(env or {})}, timeout=timeout)
        except FileNotFoundError:
            raise ComponentError(f"{what}: '{argv[0]}' is not installed or not on PATH") from None
        except subprocess.TimeoutExpired:
            raise ComponentError(f"{what}: timed out after {timeout:.0f}s; see {log_file}") from None
    if result.returncode != 0:
        tail = "\n".join(log_file.read_text(errors="replace").splitlines()[-25:])
        raise ComponentError(f"{what} failed (exit {result.returncode}). Last lines of {log_file}:\n{tail}")


class Bar:
    """A progress bar: ``Bar(total, 'records')``, then ``update(done)`` and ``close()``."""

    def __init__(self, total: int, unit: str, title: str = ""):
        self.total = max(total, 1)
        self.unit = unit
        self.title = title
        self.start = time.monotonic()
        self.last_print = 0.0
        self.done = 0

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if QUIET:
            return
        if _tty():
            if now - self.last_print < 0.1 and done < self.total:
                return
            width = 30
            filled = int(width * min(done, self.total) / self.total)
            rate = done / max(now - self.start, 1e-6)
            sys.stderr.write(f"\r  {self.title} [{'#' * filled}{'.' * (width - filled)}] "
                             f"{done}/{self.total} {self.unit} ({rate:,.0f}/s)")
            sys.stderr.flush()
        elif now - self.last_print >= 5:
            info(f"  {self.title}: {done}/{self.total} {self.unit}")
        else:
            return
        self.last_print = now

    def close(self) -> None:
        if _tty() and not QUIET:
            sys.stderr.write("\n")
        info(f"  {self.title}: {self.done}/{self.total} {self.unit} in {time.monotonic() - self.start:.1f}s")
