"""The supervisor of the local stack: whatever dies comes back by itself.

``auditpipe up`` starts the parts, then this supervisor as a process of its own (tracked by pid
file like the parts, so ``down`` stops it, first). Every ``CHECK_EVERY`` seconds it looks at each
part the CLI runs; a part whose process is gone (killed, crashed, out of memory) is started again
through the same ``Component.start`` that ``up`` uses, so a restarted Flink job restores from its
newest checkpoint and a restarted collector resumes from its saved positions.

Restarts back off: the first comes after ``FIRST_BACKOFF`` seconds, each quick failure doubles the
wait up to the part's ``longest_restart_wait`` (a minute; the collector's a few seconds, since logs
rotate on while it is down), and a part that then runs for ``STABLE_AFTER`` seconds starts from the
first step again. What happened is kept in ``<state_dir>/run/supervisor.json`` (restarts, last
restart, last error, next attempt) and shown by ``auditpipe status``; each restart is logged in
``<state_dir>/logs/supervisor.log``.

It also trims the local FerretDB's capped collections every ``store.capped_cleanup_interval``
(``trim_capped_collections``: FerretDB's own cleanup cannot hold a cap under load, docs/store.md),
and logs what it removed at most every ``TRIM_LOG_EVERY`` seconds; and every ``EVIDENCE_EXPIRY_EVERY``
seconds it deletes the evidence and rollups older than ``store.evidence_retention_days`` (FerretDB
has no TTL indexes: ``delete_expired_evidence``), logging what it deleted.

It verifies the store's chains by itself every ``chain.watch_interval``, in a thread
(``IntegrityWatch``, stack/verification.py), raising a critical ``integrity`` alert for each finding.

With ``alerts.cef`` set it forwards every alert to the SIEM's syslog receiver as CEF, in a thread
(``CefForward``, stack/alerts/forwarder.py).

Every ``ROTATION_WATCH_EVERY`` seconds, in another thread (``RotationWatch``), it ships what rsyslog
will never read of the sources' rotated files: a file renamed away before rsyslog opened it, lines
written to a rotated file after rsyslog closed it (stack/collector/catchup.py, ``unread_rotated``).

It keeps each part's log (``<state_dir>/logs/<part>.log``, and its own) under ``LOG_CAP_BYTES``:
every ``CAP_LOGS_EVERY`` seconds a log over it becomes ``<part>.log.1`` (replacing the one before)
and starts again empty (``cap_log``). Logs are diagnostics; the collector's record of gaps it could
not close (``collector-gaps.log``) is evidence and is never touched.

A part that is alive but stuck (a frozen store) is not restarted: its clients' retries and the
job's own restart strategy ride that out, and restarting it would lose nothing but gain nothing.
``up``, ``down`` and the supervisor take one lock around starting and stopping, so they never start
the same part twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from auditpipe import paths
from auditpipe.config import Config, duration_seconds
from auditpipe.process import ManagedProcess

CHECK_EVERY = 1.0
FIRST_BACKOFF = 1.0
STABLE_AFTER = 300.0
TRIM_LOG_EVERY = 600.0
LOG_CAP_BYTES = 20 * 1024 * 1024
CAP_LOGS_EVERY = 60.0
ROTATION_WATCH_EVERY = 1.0


@dataclass
class PartRecord:
    """What the supervisor knows of one part (persisted, shown by status)."""

    restarts: int = 0
    last_restart: str = ""
    last_error: str = ""
    backoff: float = FIRST_BACKOFF
    next_attempt: float = 0.0      # epoch seconds; 0 = as soon as it is seen down
    down_since: float = 0.0        # epoch seconds; 0 = up
    started_at: float = 0.0


@dataclass
class SupervisorState:
    parts: dict[str, PartRecord] = field(default_factory=dict)

    @staticmethod
    def file(cfg: Config) -> Path:
        return cfg.state_dir / "run" / "supervisor.json"

    @classmethod
    def load(cls, cfg: Config) -> SupervisorState:
        try:
            raw = json.loads(cls.file(cfg).read_text())
            return cls({name: PartRecord(**rec) for name, rec in raw.get("parts", {}).items()})
        except (OSError, ValueError, TypeError):
            return cls()

    def save(self, cfg: Config) -> None:
        f = self.file(cfg)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps({"parts": {n: asdict(r) for n, r in self.parts.items()}}, indent=2))
        os.replace(tmp, f)


def process(cfg: Config) -> ManagedProcess:
    return ManagedProcess("supervisor", cfg.state_dir)


@contextmanager
def stack_lock(cfg: Config, wait: bool = True) -> Iterator[bool]:
    """The lock around starting and stopping parts. Yields False if ``wait`` is off and it is held."""
    f = cfg.state_dir / "run" / "stack.lock"
    f.parent.mkdir(parents=True, exist_ok=True)
    with open(f, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start(cfg: Config) -> int | None:
    """Starts the supervisor unless it runs; returns its pid."""
    proc = process(cfg)
    if proc.running():
        return proc.pid()
    return proc.start([sys.executable, "-m", "auditpipe", "--config", str(cfg.file), "supervise",
                       "--state-dir", str(cfg.state_dir)], env={"PYTHONPATH": paths.cli_pythonpath()})


def stop(cfg: Config) -> bool:
    return process(cfg).stop(timeout=30)


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", flush=True)


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def run(cfg: Config) -> int:
    """The supervisor's loop (the `supervise` command); returns when SIGTERM or SIGINT arrives."""
    from auditpipe.stack.components import all_components

    stopping = False

    def on_signal(signum, frame):  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    state = SupervisorState.load(cfg)
    # Quickest restarts first: the collector and the store take a second, Kafka and the job longer, and a
    # collector that is down while its log rotates can miss lines. Parts wait for each other by retrying.
    parts = [c for c in reversed(all_components(cfg)) if c.is_managed()]
    for c in parts:
        state.parts.setdefault(c.name, PartRecord())
    _log(f"supervising {', '.join(c.name for c in parts)} (pid {os.getpid()})")
    state.save(cfg)
    trimmer = CappedTrimming(cfg) if cfg.store_uses_local_ferretdb else None
    expiry = EvidenceExpiry(cfg) if cfg.store_uses_local_ferretdb else None
    log_capping = LogCapping(cfg, [c.proc.log_file for c in parts] + [process(cfg).log_file])
    IntegrityWatch(cfg).start()
    RotationWatch(cfg).start()
    CefForward(cfg).start()
    while not stopping:
        if trimmer is not None:
            trimmer.maybe_run()
        if expiry is not None:
            expiry.maybe_run()
        log_capping.maybe_run()
        changed = False
        now = time.time()
        for c in parts:
            if stopping:
                break
            rec = state.parts[c.name]
            if c.proc.running():
                if rec.down_since:
                    rec.down_since = 0.0
                    changed = True
                if rec.backoff != FIRST_BACKOFF and rec.started_at and now - rec.started_at > STABLE_AFTER:
                    rec.backoff = FIRST_BACKOFF
                    changed = True
                continue
            if not rec.down_since:
                rec.down_since = now
                rec.next_attempt = now + (rec.backoff if rec.started_at and now - rec.started_at < STABLE_AFTER
                                          else FIRST_BACKOFF)
                _log(f"{c.name}: not running; restarting in {rec.next_attempt - now:.0f}s")
                changed = True
            if now < rec.next_attempt:
                continue
            with stack_lock(cfg, wait=False) as locked:
                if not locked or c.proc.running():  # `up` or `down` is at work: look again next round
                    continue
                rec.restarts += 1
                rec.last_restart = _stamp(time.time())
                rec.started_at = time.time()
                state.save(cfg)  # status shows the restart while it is under way
                _log(f"{c.name}: restarting (restart {rec.restarts})")
                try:
                    c.restart()
                    rec.last_error = ""
                    _log(f"{c.name}: running again, pid {c.proc.pid()}")
                except Exception as e:  # noqa: BLE001 - any failure: record it, back off, try again
                    rec.last_error = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
                    _log(f"{c.name}: restart failed: {e}\n{traceback.format_exc(limit=3)}")
            rec.backoff = min(rec.backoff * 2, c.longest_restart_wait)
            rec.down_since = 0.0 if c.proc.running() else time.time()
            rec.next_attempt = time.time() + rec.backoff
            changed = True
        if changed:
            state.save(cfg)
        deadline = time.monotonic() + CHECK_EVERY
        while not stopping and time.monotonic() < deadline:
            time.sleep(0.1)
    _log("stopping (asked to)")
    return 0


class _Periodic:
    """Work the supervisor does every ``every`` seconds (the first time after ``first``); a failure
    (the store's file locked, or not there yet) is logged once per kind and tried again next time,
    never the supervisor's end."""

    what = "periodic work"

    def __init__(self, cfg: Config, every: float, first: float):
        self.cfg, self.every = cfg, every
        self.next_run = time.monotonic() + first
        self.last_error = ""

    def work(self) -> None:
        raise NotImplementedError

    def maybe_run(self) -> None:
        now = time.monotonic()
        if now < self.next_run:
            return
        self.next_run = now + self.every
        try:
            self.work()
            self.last_error = ""
        except Exception as e:  # noqa: BLE001 - logged once per kind, tried again at the next interval
            if str(e) != self.last_error:
                _log(f"store: {self.what} failed, trying again every {self.every:.0f}s: {e}")
            self.last_error = str(e)


class CappedTrimming(_Periodic):
    """Runs ``trim_capped_collections`` every ``store.capped_cleanup_interval``, logging what it removed
    at most every ``TRIM_LOG_EVERY`` seconds."""

    what = "trimming capped collections"

    def __init__(self, cfg: Config):
        every = duration_seconds(cfg.store["capped_cleanup_interval"])
        super().__init__(cfg, every, every)
        self.removed: dict[str, int] = {}
        self.last_log = float("-inf")  # the first removal is logged at once

    def work(self) -> None:
        from auditpipe.store.trimming import trim_capped_collections

        for t in trim_capped_collections(self.cfg):
            if t.removed:
                self.removed[t.collection] = self.removed.get(t.collection, 0) + t.removed
        if self.removed and time.monotonic() - self.last_log >= TRIM_LOG_EVERY:
            _log("store: trimmed the oldest documents of capped collections: " + ", ".join(
                f"{n:,} from {c}" for c, n in sorted(self.removed.items())))
            self.removed.clear()
            self.last_log = time.monotonic()


class IntegrityWatch(threading.Thread):
    """Verifies the store's chains every ``chain.watch_interval`` (stack/verification.py), in a thread
    of its own: a pass reads every stored event, which must not hold up restarting a part that died.
    The first pass ten minutes after the start (or one interval, if shorter): not in the catch-up after a start."""

    def __init__(self, cfg: Config, first: float = 600.0):
        super().__init__(name="integrity-watch", daemon=True)
        self.cfg = cfg
        self.interval = duration_seconds(cfg.data["chain"]["watch_interval"])
        self.first = min(first, self.interval)

    def start(self) -> None:
        if self.interval > 0:
            super().start()

    def run(self) -> None:
        from auditpipe.stack import verification

        verification.watch(self.cfg, self.interval, self.first, _log)


class CefForward(threading.Thread):
    """Forwards the alerts topic to alerts.cef's receiver (stack/alerts/forwarder.py) when it is set, in a thread
    of its own; the forwarder retries a receiver that is down by itself, and anything else that ends it
    (Kafka not up yet) is logged once per kind and tried again ``RETRY_EVERY`` seconds later."""

    RETRY_EVERY = 30.0

    def __init__(self, cfg: Config):
        super().__init__(name="cef-forward", daemon=True)
        self.cfg = cfg

    def start(self) -> None:
        if self.cfg.data["alerts"].get("cef") is not None:
            super().start()

    def run(self) -> None:
        from auditpipe.stack.alerts import forwarder

        last_error = ""
        while True:
            try:
                forwarder.run(self.cfg, log=_log)
            except Exception as e:  # noqa: BLE001 - logged once per kind, tried again
                if str(e) != last_error:
                    _log(f"forward: stopped, starting again every {self.RETRY_EVERY:.0f}s: {e}")
                last_error = str(e)
            time.sleep(self.RETRY_EVERY)


class RotationWatch(threading.Thread):
    """Every ``ROTATION_WATCH_EVERY`` seconds, while rsyslog runs, ships what it will never read of the
    sources' rotated files (RsyslogCollector.rotation_watch, catchup.unread_rotated), in a thread of
    its own: shipping waits for Kafka, which must not hold up restarting Kafka. Each shipment is
    logged; a failure is logged once per kind and tried again."""

    def __init__(self, cfg: Config, every: float = ROTATION_WATCH_EVERY):
        super().__init__(name="rotation-watch", daemon=True)
        self.cfg, self.every = cfg, every

    def run(self) -> None:
        from auditpipe.stack.collector.rsyslog import RsyslogCollector, shipped_sources

        collector, watch, last_error = RsyslogCollector(self.cfg), None, ""
        while True:
            time.sleep(self.every)
            pid = collector.proc.pid()
            if pid is None:
                continue
            try:
                watch = watch or collector.rotation_watch()
                for report in watch.check(shipped_sources(self.cfg, quiet=True), pid):
                    _log(f"collector: shipped {report.shipped} lines rsyslog will not read: {report.source}")
                last_error = ""
            except Exception as e:  # noqa: BLE001 - logged once per kind, tried again at the next look
                if str(e) != last_error:
                    _log(f"collector: the rotation watch failed, trying again every {self.every:.0f}s: {e}")
                last_error = str(e)


def cap_log(log_file: Path, cap: int = LOG_CAP_BYTES) -> bool:
    """If ``log_file`` is over ``cap`` bytes, copies it to ``<name>.1`` (replacing the one before) and
    empties it; returns whether it did. The part keeps writing to its open file: ManagedProcess opens
    logs for appending, so its next line goes to the new end, at the start, leaving no hole. A line
    written between the copy and the emptying is lost (the window is one copy of ``cap`` bytes)."""
    try:
        if log_file.stat().st_size <= cap:
            return False
    except FileNotFoundError:
        return False
    previous = log_file.with_name(log_file.name + ".1")
    shutil.copyfile(log_file, previous)
    os.truncate(log_file, 0)
    return True


EVIDENCE_EXPIRY_EVERY = 3600.0


class EvidenceExpiry(_Periodic):
    """Deletes the expired evidence and rollups every ``EVIDENCE_EXPIRY_EVERY`` seconds, the first
    time a minute after the start."""

    what = "deleting expired evidence"

    def __init__(self, cfg: Config, every: float = EVIDENCE_EXPIRY_EVERY):
        super().__init__(cfg, every, 60)

    def work(self) -> None:
        from auditpipe.store.trimming import delete_expired_evidence

        deleted = delete_expired_evidence(self.cfg)
        if deleted:
            _log(f"store: deleted {deleted:,} documents of {self.cfg.store['evidence_collection']}, "
                 f"{self.cfg.store['rollups_collection']} and {self.cfg.store['sessions_collection']} older than "
                 f"store.evidence_retention_days "
                 f"({self.cfg.store['evidence_retention_days']})")


class LogCapping:
    """Runs ``cap_log`` over the parts' logs every ``CAP_LOGS_EVERY`` seconds, while neither ``up`` nor
    ``down`` is at work (a starting part's log is read for its start-up line). A failure is logged,
    never the supervisor's end."""

    def __init__(self, cfg: Config, log_files: list[Path], cap: int = LOG_CAP_BYTES, every: float = CAP_LOGS_EVERY):
        self.cfg = cfg
        self.log_files = log_files
        self.cap = cap
        self.every = every
        self.next_run = time.monotonic() + every

    def maybe_run(self) -> None:
        now = time.monotonic()
        if now < self.next_run:
            return
        with stack_lock(self.cfg, wait=False) as locked:
            if not locked:
                return  # looked at again in the supervisor's next round
            self.next_run = now + self.every
            for log_file in self.log_files:
                try:
                    if cap_log(log_file, self.cap):
                        _log(f"{log_file.name}: over {self.cap:,} bytes, moved to {log_file.name}.1")
                except OSError as e:
                    _log(f"{log_file.name}: could not cap it: {e}")


def describe(cfg: Config, name: str, running: bool) -> str:
    """What status says about a part's restarts, and what happens next when it is down."""
    rec = SupervisorState.load(cfg).parts.get(name)
    supervised = process(cfg).running()
    bits = []
    if rec and rec.restarts:
        bits.append(f"restarted {rec.restarts}x by the supervisor, last {rec.last_restart}")
    if not running:
        if supervised and rec:
            wait = max(0, rec.next_attempt - time.time()) if rec.down_since else FIRST_BACKOFF
            bits.append(f"down: the supervisor restarts it in {wait:.0f}s"
                        + (f" (last attempt failed: {rec.last_error})" if rec.last_error else ""))
        else:
            bits.append(f"down and not supervised: run {paths.COMMAND} up")
    return "; ".join(bits)
