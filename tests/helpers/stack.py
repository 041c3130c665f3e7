"""A real local stack for tests: its own ports, state and sources; the shared tools_dir.

Started through the CLI (`auditpipe up`), as a user would, and stopped at the end (`auditpipe down`).
Each test writes its own audit log (its own server name), so tests do not see each other's events.
tests/e2e and tests/faults each start one, on different ports, and stop it after the last test that uses it
(``StackOfTheSession``), not at the end of the session: an idle stack takes CPU from the tests after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from auditpipe import config, paths
from auditpipe.evidence.chain import CHAIN_FIELDS
from helpers.oracle import ENRICHED_CATEGORIES, ENRICHMENT_FIELDS, expected_document, expected_enterprise_document


def cli(cfg_file: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(cfg_file), *args],
                       capture_output=True, text=True, cwd=paths.REPO, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"auditpipe {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


# the classification of auditpipe.yaml, which the simulator's incidents are written for
COMPLIANCE = """\
compliance:
  data_classes:
    pci_cardholder: {tables: [shop.cards], allowed_principals: [svc_payments, app]}
    hipaa_ephi: {tables: [clinic.patients], allowed_principals: ["nurse_*", "dr_*"]}
    sox_financial: {tables: [finance.ledger]}
  principals: {administrators: [root, "dba_*"], service_accounts: [app, batch, "svc_*"]}
  change_windows: [{days: [sat, sun], from: "02:00", to: "06:00"}]
  business_hours: [{days: [mon, tue, wed, thu, fri], from: "08:00", to: "18:00", timezone: Europe/Berlin}]
"""


@contextmanager
def running_stack(root: Path, ports: dict, servers: list[str], database: str, kafka_extra: str = "",
                  capped_mb: int = 256, formats: dict[str, str] | None = None, store_extra: str = "",
                  flink_extra: str = "", integrity_watch: str = "0s", integrity_full: str = "1h", extra: str = "",
                  job_options: str = "", listen: list[dict] | None = None):
    """``servers`` each get a source logs/<server>/audit.log, in percona-json unless ``formats`` says otherwise.
    ``integrity_watch``: the supervisor's continuous verification interval; off unless a test is about it
    (tests that tamper with the store, or empty it, would otherwise raise integrity alerts in others);
    ``integrity_full``: how often one of its passes reads the whole store.
    ``extra``: more top-level sections of the config, as YAML; ``job_options``: more flink.job_options,
    as YAML flow entries after a comma. ``listen``: more sources, each a mapping (listen, server...)."""
    logs = root / "logs"
    formats = formats or {}
    sources = "\n".join([f"  - {{path: {logs / s / 'audit.log'}, server: {s}, format: {formats.get(s, 'percona-json')}}}"
                          for s in servers] + [f"  - {json.dumps(src)}" for src in listen or []])
    cfg_file = root / "auditpipe.yaml"
    cfg_file.write_text(f"""\
state_dir: {root / 'state'}
tools_dir: {paths.REPO / '.auditpipe' / 'tools'}
kafka: {{port: {ports['kafka']}, controller_port: {ports['controller']}{kafka_extra}}}
store: {{port: {ports['store']}, events_capped_size_mb: {capped_mb}, database: {database}{store_extra}}}
flink: {{rest_port: {ports['flink']}, checkpoint_interval: 2s,
        job_options: {{stats.early-fire-interval: 1s, chain.head-interval: 2s{job_options}}}{flink_extra}}}
chain: {{watch_interval: {integrity_watch}, full_verify_interval: {integrity_full}}}
sources:
{sources}
{extra}
{COMPLIANCE}""")
    cfg = config.load(cfg_file)
    try:
        cli(cfg_file, "up")  # inside: a part that failed to start must not outlive the test run
        yield Stack(cfg_file, cfg, logs)
    finally:
        cli(cfg_file, "down", check=False)
        for name in ("flink", "flink-jobmanager", "collector", "kafka", "store", "supervisor"):
            log = cfg.state_dir / "logs" / f"{name}.log"
            if log.exists():
                sys.stderr.write(f"\n--- last lines of {log} ---\n"
                                 + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))



def writing_to(log: Path, **kw):
    """A thread writing the log ``log`` (``simulate(**kw)``, at most its ``duration``) until the
    ``threading.Event`` it is given is set; its manifest in the dict's "m" once it is done."""
    import threading

    from auditpipe.tools.simulate import simulate

    result, stop = {}, threading.Event()
    writer = threading.Thread(target=lambda: result.setdefault("m", simulate(log, stop=stop, **kw)))
    writer.start()
    return writer, stop, result

class StackOfTheSession:
    """A session-scoped stack that stops after the last collected test using ``fixture`` (directly or
    through another fixture) rather than when the session ends: its Kafka, Flink and store take a share
    of the two cores while idle, which the later folders' tests (their own stacks, the unit tests) need.
    ``start`` inside the session fixture; tests/conftest.py calls ``after_test`` after every test."""

    _all: list[StackOfTheSession] = []
    _NO_USER = object()

    def __init__(self, fixture: str):
        self.fixture = fixture
        self._closing = ExitStack()
        self._last_user = None
        StackOfTheSession._all.append(self)

    def start(self, *args, **kw) -> Stack:
        """``running_stack(*args, **kw)``, kept open until ``stop``."""
        return self._closing.enter_context(running_stack(*args, **kw))

    def stop(self) -> None:
        self._closing.close()  # a second call does nothing

    @classmethod
    def after_test(cls, item) -> None:
        """Stops each stack whose last collected user ``item`` was."""
        for s in cls._all:
            if s._last_user is None:
                s._last_user = next((i for i in reversed(item.session.items) if s.fixture in i.fixturenames),
                                    cls._NO_USER)
            if item is s._last_user:
                s.stop()


class Stack:
    def __init__(self, cfg_file: Path, cfg, logs: Path):
        self.cfg_file = cfg_file
        self.cfg = cfg
        self.logs = logs

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return cli(self.cfg_file, *args, check=check)

    def db(self):
        from pymongo import MongoClient

        return MongoClient(self.cfg.store_uri, socketTimeoutMS=120000)[self.cfg.store["database"]]

    def collection(self, name: str):
        """The store's collection that config store.<name>_collection names."""
        return self.db()[self.cfg.store[f"{name}_collection"]]

    def wait_for_heads_at(self, server: str, seq: int, *, store: bool = True, archive: bool = False,
                          signed: bool = False) -> None:
        """Waits until the newest chain head of ``server`` (of the signed ones, with ``signed``) names link ``seq``
        in the store's chain heads and/or the archive's manifest."""
        from auditpipe.archive import reader

        def check():
            tops = []
            if store:
                query = {"server": server} | ({"signature": {"$exists": True}} if signed else {})
                tops.append(max([h["seq"] for h in self.collection("chain_heads").find(query)], default=0))
            if archive:
                tops.append(max([h["seq"] for h in reader.chain_heads(self.cfg.archive_path, server)
                                 if not signed or "signature" in h], default=0))
            return all(top == seq for top in tops), tops

        where = " and ".join(w for w, on in (("the store", store), ("the archive's manifest", archive)) if on)
        self.wait_for(f"{'signed ' if signed else ''}chain heads of {server} at link {seq} in {where}", check,
                      timeout=60)

    def log_path(self, server: str) -> Path:
        return self.logs / server / "audit.log"

    def events(self, server: str):
        return self.db()[self.cfg.store["events_collection"]].find({"server": server}, {"record_id": 1})

    def wait_for(self, what: str, check, timeout: float = 180, every: float = 2):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            ok, last = check()
            if ok:
                return last
            time.sleep(every)
        raise AssertionError(f"timed out waiting for {what}; last value: {last}")

    def estimate(self) -> int:
        """All events, cheaply ($collStats count; filtered counts make FerretDB read everything).
        Per test exact while one test writes at a time, which is how these tests run."""
        from auditpipe.store.client import document_count

        return document_count(self.db()[self.cfg.store["events_collection"]])

    def count(self, server: str) -> int:
        """Events of one server. A full scan on FerretDB (it pushes down only an ``_id`` equality,
        docs/store.md): poll ``stored_documents`` rather than this."""
        return self.db()[self.cfg.store["events_collection"]].count_documents({"server": server})

    def stored_documents(self, server: str, n: int, timeout: float = 300) -> list[dict]:
        """Waits until the store holds at least ``n`` events of ``server`` and returns them all (one find).

        Every filtered read makes FerretDB read the whole collection (seconds each), so the waiting
        polls the $collStats count (0.2 s) and reads the server's documents only when that count has
        stopped moving and says there can be ``n`` of them, or every 20 s while it stands still (it was
        seen lagging behind on FerretDB: docs/store.md). Not components/store.wait_for_documents: that
        waits for the collection's count, which here also holds other servers' events, so it can say
        "reached" long before this server's are all in and the wait would read on every poll."""
        collection = self.db()[self.cfg.store["events_collection"]]
        deadline = time.monotonic() + timeout
        last_count, moved_at, scanned_at, docs = None, time.monotonic(), 0.0, []
        while time.monotonic() < deadline:
            total, now = self.estimate(), time.monotonic()
            if total != last_count:
                last_count, moved_at = total, now
            standing = now - moved_at >= 2
            if standing and (total >= n or now - scanned_at >= 20):
                docs, scanned_at = list(collection.find({"server": server})), time.monotonic()
                if len(docs) >= n:
                    return docs
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {n} events of {server}; last read: {len(docs)}; "
                             + self.where_it_stands())

    def empty_events(self) -> None:
        """Drops the events collection and creates it again, capped, with its indexes (``auditpipe up``'s
        code): a module's queries then read only its own events.

        Only once no event has arrived for 3 s: an insert between the drop and the creation would
        create the collection uncapped (a test that failed early can leave the job writing). If events
        keep arriving for a minute, they stay; if an insert slips in anyway, it is dropped again."""
        from auditpipe.errors import UserError
        from auditpipe.store.collections import ensure_collections

        name = self.cfg.store["events_collection"]
        last, still_since, deadline = None, time.monotonic(), time.monotonic() + 60
        while True:
            n = self.estimate()
            if n != last:
                last, still_since = n, time.monotonic()
            elif time.monotonic() - still_since >= 3:
                break
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)
        db = self.db()
        for _ in range(5):
            db.drop_collection(name)
            try:
                ensure_collections(self.cfg)
            except UserError:  # created uncapped by an insert in between
                continue
            if db[name].options().get("capped"):
                return
        raise AssertionError(f"{name} could not be created capped again: something keeps writing into it")

    def empty_derived(self) -> None:
        """Empties what the job derives from events and keeps beside them (one-minute and hourly counts,
        daily rollups, evidence, alerts, dead letters): FerretDB reads a whole collection for every
        query (docs/store.md), and over a session these grow with every module's events, until a saved
        query over them outlasts its time limit on a slow machine. Chain heads stay (verify reads them)."""
        db = self.db()
        for role in ("stats_collection", "stats_hourly_collection", "rollups_collection", "evidence_collection",
                     "alerts_collection", "dead_letter_collection"):
            db[self.cfg.store[role]].delete_many({})

    def stored_ids(self, server: str) -> list[str]:
        return [d["record_id"] for d in self.events(server)]

    def stats_total(self, server: str) -> int:
        rows = self.db()[self.cfg.store["stats_collection"]].aggregate(
            [{"$match": {"server": server}}, {"$group": {"_id": None, "n": {"$sum": "$count"}}}])
        rows = list(rows)
        return rows[0]["n"] if rows else 0

    def dead_letters(self, server: str) -> list[dict]:
        return list(self.db()[self.cfg.store["dead_letter_collection"]].find({"server": server}))

    def dead_letters_on_topic(self) -> list[dict]:
        """Every dead letter on audit.deadletter so far (its JSON values), read from the beginning."""
        return self.topic_messages("deadletter")

    def topic_messages(self, role: str) -> list[dict]:
        """Every message on the topic of ``role`` (schemas/topics.yaml) so far, its JSON value, from the beginning."""
        return [json.loads(msg.value()) for msg in self.topic_records(role)]

    def topic_records(self, role: str, since: dict[int, int] | None = None) -> list:
        """The messages (confluent_kafka's) on the topic of ``role`` after the offsets ``since`` (per
        partition; none: from the beginning) up to its end offsets now."""
        from confluent_kafka import Consumer, TopicPartition

        from auditpipe.stack.kafka.topics import QUIET_CLIENT, end_offsets, topic_name

        topic, since = topic_name(role), since or {}
        ends = end_offsets(self.cfg.kafka_client, topic)
        c = Consumer({**self.cfg.kafka_client, "group.id": f"tests-{role}-reader",
                      "enable.auto.commit": False, **QUIET_CLIENT})
        out = []
        try:
            c.assign([TopicPartition(topic, p, since.get(p, 0)) for p in ends])
            remaining = {p: end for p, end in ends.items() if end > since.get(p, 0)}
            while remaining:
                msg = c.poll(10)
                assert msg is not None, f"{topic} did not deliver up to its end offsets {ends}"
                if msg.error() or msg.offset() >= ends[msg.partition()]:
                    continue
                out.append(msg)
                if msg.offset() + 1 >= remaining.get(msg.partition(), 0):
                    remaining.pop(msg.partition(), None)
        finally:
            c.close()
        return out

    def job_metric_sum(self, name: str) -> int | None:
        """The sum over all subtasks of a job metric whose name ends with ``name``; None if no vertex has it."""
        from auditpipe.stack.flink import flink_rest

        def get(path: str):
            return flink_rest.call(self.cfg, path)

        try:
            jobs = [j["jid"] for j in get("/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
            if not jobs:
                return None
            total, found = 0, False
            for vertex in get(f"/jobs/{jobs[0]}")["vertices"]:
                base_path = f"/jobs/{jobs[0]}/vertices/{vertex['id']}/subtasks/metrics"
                ids = [m["id"] for m in get(base_path) if m["id"].endswith("." + name)]
                for metric in ids:
                    for row in get(f"{base_path}?get={metric}&agg=sum"):
                        total += int(float(row["sum"]))
                        found = True
            return total if found else None
        except OSError:
            return None

    def assert_stored_and_counted_exactly_once(self, server: str, m, timeout: float = 300,
                                               collector: str = "rsyslog", fmt: str | None = None) -> None:
        """The store holds exactly the records the generator wrote (manifest ``m``), by id, and their
        one-minute counts sum to them: nothing lost, nothing stored or counted twice."""
        docs = self.stored_documents(server, m.records, timeout)
        ids = [d["record_id"] for d in docs]
        generated = self.generated_ids(server, m, collector, fmt)
        unexpected = sorted(set(ids) - generated)[:5]
        assert len(ids) == m.records, f"exactly N documents: {len(ids)} for {m.records}; not generated: {unexpected}"
        assert set(ids) == generated, "the generated ones"
        total = self.wait_for("stats that add up to N", lambda: ((t := self.stats_total(server)) >= m.records, t))
        assert total == m.records, f"each event counted once: {total} for {m.records}"
        self.assert_stored_as_written(server, Path(m.log_path), collector, fmt, docs)
        self.assert_evidence_and_counts_follow(server, docs)

    def generated_ids(self, server: str, m, collector: str = "rsyslog", fmt: str | None = None) -> set[str]:
        """The record ids of what the simulator wrote (manifest ``m``) to ``server``'s log: MySQL
        Enterprise's are built from its class/event model, the others are the records' own."""
        if (fmt or self._format(server)) != "mysql-enterprise-json":
            return m.record_ids()
        from auditpipe.tools.simulate import expected_path

        return {expected_enterprise_document(server, Path(m.log_path), collector, line)["record_id"]
                for line in expected_path(Path(m.log_path)).read_bytes().splitlines()}

    def run_panel(self, target: dict, since, until, servers: list[str]) -> list[dict]:
        """A dashboard panel's rows: its query text with the macros expanded as the data source expands
        them, run on the collection of its role (the panel names the default collection; this stack may
        name its collections otherwise)."""
        from datetime import timezone

        from bson import json_util

        from auditpipe.evidence import dashboards, query

        text = dashboards.expand_macros(target["queryText"], int(since.timestamp() * 1000),
                                        int(until.timestamp() * 1000), servers)
        pipeline = json_util.loads(text, json_options=json_util.JSONOptions(tz_aware=True, tzinfo=timezone.utc))
        role = {name: role for role, name in dashboards.default_collections().items()}[target["collection"]]
        return query.run_pipeline(self.cfg, role, pipeline)

    def assert_evidence_and_counts_follow(self, server: str, docs: list[dict], timeout: float = 120) -> None:
        """What the job derives from ``server``'s stored events ``docs`` (all of them, each counted in its
        minute) is exact: the evidence collection holds each evidence event once, the same document,
        and no other; each hour's count and each daily rollup's count is its events' number. Computed
        here from the documents, independently of the job's windows."""
        from collections import Counter

        from auditpipe import contract

        db, s = self.db(), self.cfg.store
        ids = {d["_id"] for d in docs}
        wanted = {d["_id"]: d for d in db[s["events_collection"]].find(
            {"server": server, "$or": list(contract.evidence_kinds().values())}) if d["_id"] in ids}
        evidence = db[s["evidence_collection"]]
        kept = self.wait_for(f"{len(wanted)} evidence events of {server}", lambda: (
            len(r := {d["_id"]: d for d in evidence.find({"server": server})}) >= len(wanted), r), timeout=timeout)
        assert kept == wanted, f"evidence: {len(kept)} kept for {len(wanted)} ({sorted(set(kept) ^ set(wanted))[:5]})"

        def summed(collection: str, key, count: str) -> Counter:
            out: Counter = Counter()
            for d in db[s[collection]].find({"server": server}):
                out[key(d)] += d[count]
            return out

        hours = Counter(d["event_time"].replace(minute=0, second=0, microsecond=0) for d in docs)
        self.wait_for(f"the hours of {server}'s {len(docs)} events", lambda: (
            (got := summed("stats_hourly_collection", lambda h: h["window_start"], "count")) == hours, got), timeout=timeout)

        def rollup_key(d: dict, day) -> tuple:
            return (day, d.get("user"), d.get("principal_class"), d.get("category"), d.get("action"),
                    tuple(d.get("controls") or ()))

        days = Counter(rollup_key(d, d["event_time"].replace(hour=0, minute=0, second=0, microsecond=0)) for d in docs
                       if d.get("controls") or d.get("principal_class") == "administrator")
        self.wait_for(f"the daily rollups of {server}'s events", lambda: (
            (got := summed("rollups_collection", lambda r: rollup_key(r, r["day"]), "events")) == days, got),
            timeout=timeout)

    def assert_stored_as_written(self, server: str, log: Path | None = None, collector: str = "rsyslog",
                                 fmt: str | None = None, docs: list[dict] | None = None) -> int:
        """Every stored document of ``server`` holds, field by field, what its line in the audit log
        says (``log`` and its rotated files still on disk are read; default: the server's log in this
        stack; ``docs``: the server's documents if already read); returns how many lines were compared.

        The expectation is written here from the Percona JSON lines, independently of the job's
        parser: a field lost, renamed, mistyped or taken from another record fails the test."""
        from auditpipe.tools.simulate import expected_path

        log = log or self.log_path(server)
        written = {}
        side = expected_path(log)
        if side.exists():
            # an XML or CSV log from the simulator: its records as the plugin's JSON (every record, also
            # those rotated away); the stored line_sha256 is of the framed record, checked for its form only
            fmt = fmt or self._format(server)
            for line in side.read_bytes().splitlines():
                if fmt == "mysql-enterprise-json":
                    expected = expected_enterprise_document(server, log, collector, line)
                else:
                    expected = expected_document(server, log, collector, line)
                expected.update(format=fmt, line_sha256=None, original=None)
                written[expected["record_id"]] = expected
        else:
            for f in sorted(log.parent.glob(log.name + "*")):
                for line in f.read_bytes().splitlines():
                    expected = expected_document(server, log, collector, line)
                    if expected is not None:
                        written[expected["record_id"]] = expected
        if docs is None:
            docs = list(self.db()[self.cfg.store["events_collection"]].find({"server": server}))
        stored = {d["record_id"]: d for d in docs}
        assert written, f"no readable records in the log files of {server}"
        missing = sorted(set(written) - set(stored))[:5]
        assert not missing, f"lines on disk with no stored document: {missing}"
        for record_id, want in written.items():
            # what enrichment adds is the job library's own judgement, tested there (EnricherTest) and
            # in test_compliance.py; here: present on every event, and the rest exactly as written
            assert stored[record_id].get("category") in ENRICHED_CATEGORIES, stored[record_id]
            got = {k: v for k, v in stored[record_id].items()
                   if k != "ingest" and k not in CHAIN_FIELDS and k not in ENRICHMENT_FIELDS}
            if want["line_sha256"] is None:  # a framed record: its original and digest belong together
                import hashlib

                assert got["line_sha256"] == hashlib.sha256(got["original"].encode()).hexdigest(), got
                got["line_sha256"] = got["original"] = None
                want["original"] = None
            assert got == want, f"stored document differs from its line:\n stored  {got}\n written {want}"
        self.assert_chain_intact(server, list(stored.values()))
        return len(written)

    def assert_chain_intact(self, server: str, docs: list[dict] | None = None) -> None:
        """Every stored event of ``server`` is a link of its chain, 1..n, each following the one before."""
        from auditpipe.evidence.chain import verify_links

        docs = docs if docs is not None else list(self.db()[self.cfg.store["events_collection"]].find({"server": server}))
        report = verify_links(server, docs, {})
        assert not report.findings, [f.line("store") for f in report.findings[:5]]
        assert report.first_seq == 1 and report.last_seq == len(docs), (report.first_seq, report.last_seq, len(docs))

    def archived(self, server: str) -> list[dict]:
        from auditpipe.archive import reader

        return reader.chain_rows(self.cfg.archive_path, server)

    def assert_archived_exactly(self, server: str, timeout: float = 120) -> list[dict]:
        """The archive holds exactly the stored events of ``server`` (no loss, no copy), with the same links."""
        stored = {d["_id"]: d.get("chain_digest") for d in
                  self.db()[self.cfg.store["events_collection"]].find({"server": server}, {"chain_digest": 1})}
        rows = self.wait_for(f"{len(stored)} archived events of {server}",
                             lambda: (len(r := self.archived(server)) >= len(stored), r), timeout=timeout)
        ids = [r["_id"] for r in rows]
        assert len(ids) == len(set(ids)), "no event archived twice"
        assert {r["_id"]: r["chain_digest"] for r in rows} == stored, "the archive holds the stored events, same links"
        return rows

    def _format(self, server: str) -> str:
        return next((s["format"] for s in self.cfg.collector_sources() if s["server"] == server), "percona-json")

    def committed_raw_offsets(self) -> int:
        """Sum over audit.raw's partitions of the offsets the job committed: it commits on each completed
        checkpoint, so this says how much of the topic a checkpoint covers."""
        from confluent_kafka import Consumer, TopicPartition

        from auditpipe.stack.flink.job_settings import job_group_id
        from auditpipe.stack.kafka.topics import QUIET_CLIENT, end_offsets, topic_name

        topic = topic_name("raw")
        partitions = end_offsets(self.cfg.kafka_client, topic)
        c = Consumer({**self.cfg.kafka_client, "group.id": job_group_id(),
                      "enable.auto.commit": False, **QUIET_CLIENT})
        try:
            committed = c.committed([TopicPartition(topic, p) for p in partitions], timeout=5)
            return sum(max(tp.offset, 0) for tp in committed)
        finally:
            c.close()

    def writing(self, server: str, **kw):
        """``writing_to`` this stack's log of ``server``."""
        return writing_to(self.log_path(server), **kw)

    def wait_shipped_on(self, what: str, since: int, more: int, timeout: float = 120) -> int:
        """Waits until ``more`` lines past ``since`` (a count of audit.raw's messages) are shipped."""
        return self.wait_for(what, lambda: ((n := self.raw_messages()) > since + more, n), timeout=timeout, every=0.3)

    def wait_for_a_checkpoint_of_this_run(self, shipped_before: int, records: int = 3000) -> None:
        """Waits until ``records`` lines past ``shipped_before`` are on audit.raw and a completed
        checkpoint covers them (the job commits its offsets on each one): a restore then has state of
        this run to get right. Both signals come from Kafka, so a store that lags behind does not
        delay a kill past the run."""
        self.wait_for("this run on audit.raw", lambda: ((n := self.raw_messages() - shipped_before) > records, n),
                      timeout=120, every=0.3)
        self.wait_for("a checkpoint covering part of this run",
                      lambda: ((c := self.committed_raw_offsets()) > shipped_before + records, c), timeout=120, every=0.3)

    def raw_messages(self) -> int:
        """Messages on audit.raw so far, all partitions (the sum of their end offsets)."""
        return sum(self.raw_offsets().values())

    def raw_offsets(self) -> dict[int, int]:
        """audit.raw's end offset per partition: where ``raw_messages_of`` counts from."""
        from auditpipe.stack.kafka.topics import end_offsets, topic_name

        return end_offsets(self.cfg.kafka_client, topic_name("raw"))

    def raw_messages_of(self, server: str, since: dict[int, int]) -> int:
        """Messages on audit.raw with ``server``'s key after the offsets ``since`` (``raw_offsets``): what
        the collector shipped of that server's log, whatever other sources shipped meanwhile."""
        return sum(json.loads(msg.key() or b"{}").get("server") == server for msg in self.topic_records("raw", since))

    def where_it_stands(self) -> str:
        """Which stage a stalled run stopped at, for a failure's message: what audit.raw holds, what the
        job's checkpoints committed of it, the dead letters and each part's health (each read may fail
        itself: then its error says so)."""
        said = []
        for what, read in (("on audit.raw", self.raw_messages), ("committed by the job", self.committed_raw_offsets),
                           ("dead letters", lambda: self.db()[self.cfg.store["dead_letter_collection"]]
                            .estimated_document_count()),
                           ("parts", lambda: {r["component"]: r.get("health") for r in self.status()})):
            try:
                said.append(f"{what}: {read()}")
            except Exception as e:  # noqa: BLE001 - a diagnosis, never the failure itself
                said.append(f"{what}: unreadable ({e})")
        return "; ".join(said) + self.collectors_say()

    def collectors_say(self, n: int = 12) -> str:
        """The collector's last words of its catch-ups and rotation watch (the supervisor's and the
        collector's logs) and the gaps it recorded: where a line went missing between a file and audit.raw."""
        logs = self.cfg.state_dir / "logs"
        said = []
        for name, keep in (("supervisor.log", lambda line: "collector" in line), ("collector.log", lambda line: True),
                           ("collector-gaps.log", lambda line: True)):
            try:
                lines = [line for line in (logs / name).read_text(errors="replace").splitlines() if keep(line)]
            except OSError:
                continue
            if lines:
                said.append(f"\n{name} (last {min(n, len(lines))} of {len(lines)}):\n  " + "\n  ".join(lines[-n:]))
        return "".join(said)

    def pid(self, part: str) -> int | None:
        from auditpipe.process import ManagedProcess

        return ManagedProcess(part, self.cfg.state_dir).pid()

    def kill(self, part: str, sig: int = 9) -> int:
        import os

        pid = self.pid(part)
        assert pid, f"{part} is not running"
        os.kill(pid, sig)
        return pid

    def wait_back(self, part: str, old_pid: int, timeout: float = 180) -> int:
        """Waits until ``part`` runs again under a new pid (restarted by the supervisor, not by a test)."""
        return self.wait_for(f"{part} to come back by itself",
                             lambda: ((p := self.pid(part)) not in (None, old_pid), p), timeout=timeout, every=0.5)

    def status(self) -> list[dict]:
        return json.loads(self.cli("status", "--json", check=False).stdout)
