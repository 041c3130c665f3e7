"""The local store: FerretDB v1.24 (SQLite backend) as a MongoDB-compatible server, built from the
Go module proxy and run by the supervisor. The collections it needs: auditpipe.store.collections."""

from __future__ import annotations

import shutil

from auditpipe import paths, prereqs, progress
from auditpipe.config import redact_uri
from auditpipe.errors import ComponentError
from auditpipe.process import refuse_taken_port, wait_until
from auditpipe.stack.components.base import Component, StatusRow
from auditpipe.store.client import document_count, mongo_client
from auditpipe.store.collections import ensure_collections
from auditpipe.store.ferretdb import STORE_PART, ferretdb_data_dir

FERRETDB_VERSION = "v1.24.0"
# FerretDB writes an insert command in transactions of at most this many documents (its default
# 100, v1.24's internal/handler/msg_insert.go), each taking SQLite's one write lock and ending in a
# commit (an fsync of the WAL): a batch of 1,000 events was ten of each, and a second writer that
# finds the lock taken sleeps in SQLite's busy handler (1, 2, 5, 10 ms, ...) at each of them. In one
# transaction a batch, two writers stored a third more documents per second, one writer the same
# (docs/store.md "insert batches"). The cost: when a transaction fails (a duplicate _id, as a replay
# after a restart brings), FerretDB inserts its documents again one by one, now up to 1,000.
FERRETDB_INSERT_STATEMENT_ROWS = 1000
# Go's collector ran on 12% of FerretDB's CPU while it inserted events (a CPU profile), and more with
# two writers at once. Collecting when the heap has grown by 4 times what is live (not once) takes
# less of the CPU the store shares with the job on a small machine (docs/store.md "insert
# batches"); the soft limit keeps the heap from growing past it on a large insert.
FERRETDB_GO_RUNTIME = {"GOGC": "400", "GOMEMLIMIT": "512MiB"}


class LocalStore(Component):
    name = STORE_PART

    @property
    def binary(self):
        return self.cfg.tools_dir / "bin" / f"ferretdb-{FERRETDB_VERSION}"

    def is_managed(self) -> bool:
        return self.cfg.store_uses_local_ferretdb

    def install(self) -> None:
        if not self.is_managed() or self.binary.exists():
            return
        go = prereqs.require_go()
        build = self.cfg.tools_dir / "build" / "ferretdb"
        if build.exists():
            shutil.rmtree(build)
        build.mkdir(parents=True)
        for f in ("go.mod", "go.sum", "tools.go"):
            shutil.copy(paths.DEPLOY_LOCAL / "ferretdb" / f, build / f)
        log = self.cfg.tools_dir / "install.log"
        env = {"GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        with progress.step(f"download FerretDB {FERRETDB_VERSION} from the Go module proxy"):
            progress.run_logged([go, "mod", "vendor"], log, "vendoring FerretDB", cwd=build, env=env)
        version_file = build / "vendor" / "github.com" / "FerretDB" / "FerretDB" / "build" / "version" / "version.txt"
        version_file.write_text(FERRETDB_VERSION + "\n")
        with progress.step(f"build FerretDB {FERRETDB_VERSION}"):
            progress.run_logged([go, "build", "-mod=vendor", "-trimpath", "-o", str(self.binary),
                                 "github.com/FerretDB/FerretDB/cmd/ferretdb"], log, "building FerretDB",
                                cwd=build, env={"CGO_ENABLED": "0"})
        shutil.rmtree(build, ignore_errors=True)

    def start(self) -> None:
        if self.is_managed() and not self.proc.running():
            s = self.cfg.store
            refuse_taken_port(s["host"], s["port"], "store.port", self.cfg.file)
            data = ferretdb_data_dir(self.cfg)
            data.mkdir(parents=True, exist_ok=True)
            # its own capped cleanup off: the supervisor trims (auditpipe.store.trimming)
            self.proc.start([str(self.binary), "--handler=sqlite", f"--sqlite-url=file:{data}/",
                             f"--listen-addr={s['host']}:{s['port']}", f"--state-dir={self.home}",
                             "--telemetry=disable", "--debug-addr=-", "--log-level=warn",
                             "--test-capped-cleanup-interval=0s",
                             f"--test-batch-size={FERRETDB_INSERT_STATEMENT_ROWS}"], env=FERRETDB_GO_RUNTIME)
            wait_until(self._ping, 60, "waiting for FerretDB to answer", self.proc)
        elif not self.is_managed():
            try:
                self._ping()
            except Exception as e:  # noqa: BLE001
                raise ComponentError(f"the store at {self.cfg.store_uri_for_display} does not answer: "
                                     f"{redact_uri(str(e))}") from None
        for note in ensure_collections(self.cfg):
            progress.info(f"  ! {note}")

    def _ping(self) -> bool:
        mongo_client(self.cfg, 2000).admin.command("ping")
        return True

    def healthy(self) -> bool:
        try:
            return self._ping()
        except Exception:  # noqa: BLE001
            return False

    def stop(self) -> bool:
        return self.proc.stop() if self.is_managed() else False

    def status(self) -> StatusRow:
        s = self.cfg.store
        endpoint = f"{s['host']}:{s['port']}" if self.is_managed() else self.cfg.store_uri_for_display
        pid = self.proc.pid() if self.is_managed() else None
        if self.is_managed() and pid is None:
            return StatusRow(self.name, None, endpoint, "stopped", "")
        try:
            db = mongo_client(self.cfg, 2000)[s["database"]]
            n = document_count(db[s["events_collection"]])
            d = document_count(db[s["dead_letter_collection"]])
            capped = db[s["events_collection"]].options().get("capped", False)
            return StatusRow(self.name, pid, endpoint, "ok",
                             f"{s['events_collection']}: {n} docs ({'capped' if capped else 'NOT CAPPED'}), "
                             f"{s['dead_letter_collection']}: {d}")
        except Exception as e:  # noqa: BLE001
            return StatusRow(self.name, pid, endpoint, "unhealthy", redact_uri(str(e))[:80])
