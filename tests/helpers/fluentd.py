"""A real Fluentd collector for tests (collectors/fluentd/run), like tests/helpers/stack.py for the stack.

Fluentd is in no package registry the project's machines reach. Where the clone has
`../shared/fluentd/install` beside it, that installs a real Fluentd 1.16.11 with fluent-plugin-kafka 0.19.7;
the tests install it from there once (into tools_dir) and run for real. They skip, with that
reason, only where neither it nor a `fluentd` on PATH exists (a user's clone).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from auditpipe import paths
from auditpipe.stack import limits

SHARED_INSTALL = paths.REPO.parent / "shared" / "fluentd" / "install"


def fluentd_command(tools_dir: Path) -> str:
    """The fluentd to run: on PATH, or installed into tools_dir from the shared installer (else skip)."""
    on_path = shutil.which("fluentd")
    if on_path:
        return on_path
    dest = tools_dir / "fluentd-1.16.11"
    binary = dest / "bin" / "fluentd"
    if not binary.exists():
        if not SHARED_INSTALL.exists():
            pytest.skip(f"no fluentd on PATH and no {SHARED_INSTALL} (Fluentd is in no registry the project's "
                        "machines reach; the installer is beside the clone where the tests run for real)")
        r = subprocess.run([str(SHARED_INSTALL), str(dest)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"installing Fluentd failed:\n{r.stdout}\n{r.stderr}"
    return str(binary)


class Fluentd:
    """One Fluentd collector process for one audit log, started through collectors/fluentd/run."""

    def __init__(self, command: str, stack, server: str | None, root: Path, fmt: str = "percona-json",
                 env: dict | None = None, listen: str | None = None):
        """``env``: collectors/fluentd/run's settings instead of the stack's kafka.security as the collector's user;
        ``listen``: receive syslog there instead of tailing ``log`` (``server`` None: each sender's host)."""
        self.fmt = fmt
        self.log = root / "logs" / "audit.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.output = root / "fluentd.out"
        self.env = {**os.environ, "FLUENTD": command, "AUDITPIPE_KAFKA_BROKERS": stack.cfg.kafka_bootstrap,
                    "AUDITPIPE_SERVER": server, "AUDITPIPE_AUDIT_LOG": str(self.log), "AUDITPIPE_FORMAT": fmt,
                    "AUDITPIPE_STATE_DIR": str(root / "state"),
                    "AUDITPIPE_MAX_LINE_BYTES": str(limits.from_config(stack.cfg).max_line_bytes),
                    **(security_environment(stack.cfg) if env is None else env)}
        if listen:
            self.env["AUDITPIPE_LISTEN"] = listen
            del self.env["AUDITPIPE_AUDIT_LOG"]
        if server is None:
            del self.env["AUDITPIPE_SERVER"]
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.output, "ab") as out:
            self.proc = subprocess.Popen([str(paths.COLLECTORS / "fluentd" / "run")], env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        mark = self.output.read_text(errors="replace").count("is now running")
        while self.output.read_text(errors="replace").count("is now running") == mark:
            assert self.proc.poll() is None, f"fluentd exited:\n{self.tail()}"
            assert time.monotonic() < deadline, f"fluentd did not start:\n{self.tail()}"
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)  # supervisor and worker alike
            self.proc.wait(timeout=60)

    def tail(self, n: int = 30) -> str:
        return "\n".join(self.output.read_text(errors="replace").splitlines()[-n:])

    def where_missing(self, record_ids: set[str]) -> str:
        """For a run that lost records: which log files held them, what the position file says of
        each (its inode's position against the file's size), Fluentd's warnings and any chunk it set
        aside; so a failed run explains itself (the files are gone once the test ends)."""
        out, state = [], Path(self.env["AUDITPIPE_STATE_DIR"])
        positions: dict[int, list[str]] = {}
        pos_file = state / "audit.log.pos"
        if pos_file.exists():
            for line in pos_file.read_text(errors="replace").splitlines():
                parts = line.split("\t")
                if len(parts) == 3:
                    positions.setdefault(int(parts[2], 16), []).append(f"{int(parts[1], 16):#x}")
        for f in sorted(self.log.parent.iterdir()):
            held = sum(1 for line in f.read_bytes().splitlines()
                       if (i := line.find(b'"record":"')) >= 0
                       and line[i + 10:line.find(b'"', i + 10)].decode(errors="replace") in record_ids)
            if held:
                st = f.stat()
                out.append(f"{f.name}: {held} of the missing records; inode {st.st_ino}, {st.st_size} bytes, "
                           f"position file: {positions.get(st.st_ino, 'no entry')}")
        # chunks Fluentd gave up on: the secondary's folder, and its backup of broken chunks found on resume
        set_aside = [str(p.relative_to(state)) for p in state.rglob("*")
                     if p.is_file() and ("failed-chunks" in p.parts or "backup" in p.parts)]
        # without a root_dir Fluentd backs broken chunks up under /tmp/fluent/backup (DEFAULT_BACKUP_DIR)
        started = self.output.stat().st_ctime
        default_backup = Path("/tmp/fluent/backup")
        if default_backup.exists():
            set_aside += [str(p) for p in default_backup.rglob("*") if p.is_file() and p.stat().st_mtime >= started]
        if set_aside:
            out.append(f"chunks set aside: {sorted(set_aside)}")
        # chunks still staged (buffer.b*) with records in them: by now each should have been flushed
        staged = [f"{p.relative_to(state)} ({p.stat().st_size} bytes, written "
                  f"{time.strftime('%H:%M:%S', time.gmtime(p.stat().st_mtime))})"
                  for p in state.rglob("buffer.b*.log") if p.stat().st_size]
        if staged:
            out.append(f"chunks staged, not flushed: {sorted(staged)}")
        out += [line for line in self.output.read_text(errors="replace").splitlines()
                if ("[warn]" in line or "[error]" in line) and not line.startswith(" ")  # not backtraces
                and "<secondary> with 'retry_forever'" not in line][-40:]
        return "\n".join(out)

    def problems(self) -> list[str]:
        """Log lines that would mean a record was dropped or stuck (each was seen before the fixes).

        One error is not: in_tail's "closed stream" from update_pos while Fluentd shuts down after a
        SIGTERM (its position file is closed while a rotation is still being handled; seen, with the
        run's records all stored exactly once). A position not saved then is a re-read after
        the restart, which the store absorbs by id. It is left out only between the shutdown and the
        next start. Nor is a chunk found empty when Fluentd resumes its file buffer ("found broken chunk
        file during resume ... chunk is empty"): a kill -9 between creating a chunk's file and writing
        to it leaves a file of no bytes (Fluentd's buffer/file_chunk.rb raises that only for a size of
        zero), which holds no record to lose; it is moved to the backup directory. Nor a chunk whose metadata
        file could not be removed ("failed to purge buffer chunk ... ENOENT ... .meta"): a chunk resumed
        after a kill -9 without its .meta file (killed between creating the two) is written out, and
        only then purged (buffer.rb purge_chunk runs after a successful write); the chunk file goes
        first, then the missing .meta raises: nothing is left to send again, nothing was lost."""
        signs = ("[error]", "BufferChunkOverflowError", "MessageSizeTooLarge", "is longer than",
                 "dropped")
        out, stopping, in_race = [], False, False
        for line in self.output.read_text(errors="replace").splitlines():
            if "shutting down" in line or "graceful stop" in line.lower():
                stopping = True
            elif "is now running" in line:
                stopping = in_race = False
            if "[error]" in line:
                if "found broken chunk file during resume" in line and 'chunk is empty"' in line:
                    continue
                if "failed to purge buffer chunk" in line and "Errno::ENOENT" in line and line.endswith(".meta>"):
                    in_race = True  # its backtrace follows
                    continue
                if stopping and "closed stream" in line:
                    in_race = True
                    continue
                # its backtrace, which other plugins' shutdown lines may come between
                if in_race and "[error]: #0 /" in line:
                    continue
                in_race = False
            if any(sig in line for sig in signs):
                out.append(line)
        return out



def faults_while_writing(stack, fluentd: Fluentd, progress, step: int, down: float = 4, **simulate):
    """Fluentd's log written (``simulate(**simulate)``) while Fluentd gets a SIGTERM, then a kill -9, each
    once ``progress()`` (what Fluentd delivered so far) has grown by ``step``; Fluentd is down ``down``
    seconds each time, a rotation or more at the tests' rates: the fault itself. The writing stops once
    Fluentd delivers again after the second fault, so however slowly the store takes what Fluentd sends,
    the faults come while the log is written and rotated. Returns the log's manifest."""
    from helpers.stack import writing_to

    writer, stop, result = writing_to(fluentd.log, **simulate)
    try:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            before = progress()
            stack.wait_for("fluentd delivering", lambda before=before: ((n := progress()) > before + step, n),
                           timeout=120, every=0.5)
            assert writer.is_alive(), "the fault must come while the log is written and rotated"
            fluentd.stop(sig)
            time.sleep(down)
            fluentd.start()
        before = progress()
        stack.wait_for("fluentd delivering after the faults", lambda: ((n := progress()) > before + step, n),
                       timeout=120, every=0.5)
    finally:
        stop.set()
        writer.join()
    assert result["m"].rotations >= 3, "rotations before, between and after the faults"
    return result["m"]


def security_environment(cfg) -> dict:
    """The stack's kafka.security as collectors/fluentd/run reads it, as the collector's user."""
    sec, out = cfg.kafka["security"], {}
    out["AUDITPIPE_KAFKA_SECURITY_PROTOCOL"] = sec["protocol"]
    for key in ("ca_file", "certificate_file", "key_file"):
        if key in sec:
            out[f"AUDITPIPE_KAFKA_{key.upper()}"] = sec[key]
    if cfg.kafka_mechanism("collector") is not None:
        out["AUDITPIPE_KAFKA_SASL_MECHANISM"] = cfg.kafka_mechanism("collector")
    if cfg.kafka_principal("collector") is not None:
        out["AUDITPIPE_KAFKA_USERNAME"] = cfg.kafka_principal("collector")[0]
        out["AUDITPIPE_KAFKA_PASSWORD"] = cfg.kafka_password("collector")
    return out
