"""A realistic Percona Server audit log, written the way the plugin writes it: audit_log_format=JSON
(the default), OLD or NEW XML, or CSV (``style``).

Sessions connect, run the statement mix sysbench's oltp_read_write produces (point and range
selects, updates, deletes, inserts, BEGIN/COMMIT), now and then fail (duplicate keys, deadlocks,
syntax errors), and quit; some logins fail (wrong password, 1045), and a burst of failed logins
from one host can be added. The first record is the plugin's "Audit" start record.

Rotation is the plugin's: when the file exceeds ``rotate_on_size`` bytes it is renamed along the
chain audit.log -> audit.log.01 -> audit.log.02 ... keeping ``rotations`` files, and a new
audit.log is opened (or, ``rotation="timestamp"``, renamed to audit.<time>.log as MySQL Enterprise
Audit and Percona's audit_log_filter do). Like a buffered writer, the plugin may still write a few lines to the file
it just renamed (``late_writes``): the collector must read those too.

Every run writes a manifest (``audit.manifest.json`` for ``audit.log``) with what it wrote, so the demo and the
tests can compare what was generated with what was stored. For the XML and CSV styles it also writes
each record as the plugin's JSON would have it (``audit.expected.jsonl``): the same facts, which the
tests turn into the documents the store must hold without the job's parsers.

The XML styles write what the plugin writes around records: the XML declaration and ``<AUDIT>`` when
a file is opened, ``</AUDIT>`` when it is closed at a rotation; values escaped as the plugin does
(``< > & "`` and newlines as character references). CSV quotes every text column, doubles quotes,
and writes a statement's newlines as they are (a record of several lines).
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from auditpipe import contract

USERS = ["app", "app", "app", "reporting", "batch", "dba_alice", "dba_bob", "svc_payments"]
HOSTS = [("app-1", "10.0.1.11"), ("app-2", "10.0.1.12"), ("batch-1", "10.0.2.21"), ("bastion", "10.0.9.5")]
SCHEMA = "sbtest"

# (command_class, weight, SQL maker, (error status, probability))
def _sql_point(r: random.Random) -> str:
    return f"SELECT c FROM sbtest{r.randint(1, 8)} WHERE id={r.randint(1, 100000)}"


def _sql_range(r: random.Random) -> str:
    a = r.randint(1, 99000)
    kind = r.choice(["SELECT c", "SELECT SUM(k)", "SELECT c", "SELECT DISTINCT c"])
    return f"{kind} FROM sbtest{r.randint(1, 8)} WHERE id BETWEEN {a} AND {a + 99} ORDER BY c"


def _sql_update(r: random.Random) -> str:
    if r.random() < 0.5:
        return f"UPDATE sbtest{r.randint(1, 8)} SET k=k+1 WHERE id={r.randint(1, 100000)}"
    return (f"UPDATE sbtest{r.randint(1, 8)} SET c='{r.randint(10**10, 10**11)}-\"quoted\"-it''s' "
            f"WHERE id={r.randint(1, 100000)}")


def _sql_delete(r: random.Random) -> str:
    return f"DELETE FROM sbtest{r.randint(1, 8)} WHERE id={r.randint(1, 100000)}"


def _sql_insert(r: random.Random) -> str:
    name = r.choice(["Zoë", "José", "Łukasz", "名前", "plain"])
    return (f"INSERT INTO sbtest{r.randint(1, 8)} (id, k, c, pad) VALUES ({r.randint(1, 100000)}, "
            f"{r.randint(1, 100000)}, '{name}', 'line1\nline2\ttab')")


STATEMENTS: list[tuple[str, int, Callable[[random.Random], str], tuple[int, float]]] = [
    ("select", 10, _sql_point, (0, 0.0)),
    ("select", 4, _sql_range, (1064, 0.002)),
    ("update", 2, _sql_update, (1213, 0.01)),
    ("delete", 1, _sql_delete, (0, 0.0)),
    ("insert", 1, _sql_insert, (1062, 0.03)),
]


@dataclass
class Manifest:
    log_path: str
    log_start: str
    records: int = 0
    malformed: int = 0
    rotations: int = 0
    late_writes: int = 0
    failed_logins: int = 0
    failed_logins_by_user: dict = field(default_factory=dict)
    events_by_name: dict = field(default_factory=dict)
    first_record: str = ""
    last_record: str = ""
    first_event_time: str = ""
    last_event_time: str = ""
    wall_seconds: float = 0.0
    # with incidents: the alerts they must raise ({rule, subject}), the card numbers and passwords written
    expected_alerts: list = field(default_factory=list)
    card_numbers: list = field(default_factory=list)
    secrets: list = field(default_factory=list)  # passwords in account statements (masked: credentials)
    # record numbers left out of the sequence (the deleted_record incident); records counts the others
    deleted_records: list = field(default_factory=list)
    deleted_ids: list = field(default_factory=list)  # the same records' ids
    # with restart_at: the sequences before the server's restart, each [its log start, its highest number];
    # log_start is the newest sequence's
    earlier_sequences: list = field(default_factory=list)
    # each connection id (the server's own records, connection 0, are none): [its records, how it stands at
    # the end: "logout", "failed_login" or "open"], the session the job builds of it (docs/sessions.md)
    connections: dict = field(default_factory=dict)

    def log_starts(self) -> list[str]:
        """Every sequence's startup time, oldest first."""
        return [start for start, _ in self.earlier_sequences] + [self.log_start]

    def record_ids(self) -> set[str]:
        """The ids of the records written (Percona's <n>_<log start>)."""
        numbered = self.records + len(self.deleted_records)
        last = numbered - sum(n for _, n in self.earlier_sequences)
        skipped = set(self.deleted_ids) or {f"{i}_{self.log_start}" for i in self.deleted_records}
        return {f"{i}_{start}" for start, n in self.earlier_sequences + [[self.log_start, last]]
                for i in range(1, n + 1)} - skipped

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))

    @staticmethod
    def read(path: Path) -> Manifest:
        return Manifest(**json.loads(path.read_text()))


def manifest_path(log_path: Path) -> Path:
    """audit.log -> audit.manifest.json: beside the log, but not matched by the collector's audit.log* pattern."""
    return log_path.with_name(log_path.stem + ".manifest.json")


MALFORMED_LINES = [
    b'{"audit_record":{"name":"Query","record":"truncated',                        # cut-off line
    b'{"audit_record":{"name":"Query","timestamp":"2026-01-01T00:00:00 UTC"}}',    # no record id
    b"this is not JSON at all",                                                    # garbage
    b'{"audit_record":{"name":"Query","record":"x","timestamp":"x","sqltext":"\xff\xfe"}}',  # invalid UTF-8
    b'{"audit_record":{"name":"Connect","record":"y","timestamp":"not a time"}}',  # bad timestamp
]


class AuditLogWriter:
    """Writes lines to audit.log and rotates it exactly like the Percona plugin.

    Late writes: the plugin's writer flushes what it still holds in its buffer after the rename,
    through its open handle, so those lines land in the renamed file (audit.log.01) before the new
    audit.log is opened. Here the next ``late_writes`` lines after a rotation point are held back
    and written that way.
    """

    def __init__(self, path: Path, rotate_on_size: int, rotations: int, late_writes: int,
                 header: bytes = b"", footer: bytes = b"", scheme: str = "chain", separator: bytes | None = None):
        self.path = path
        # a JSON array's comma (MySQL Enterprise JSON): written before every record but a file's
        # first, right after the previous one, which therefore ends its line only when the next
        # record (or the file's closing) comes
        self.separator = separator
        self.in_file = 0
        self.scheme = scheme  # ROTATION_SCHEMES
        self.header = header  # written when a file is opened (XML: declaration and <AUDIT>)
        self.footer = footer  # written when it is closed at a rotation (XML: </AUDIT>)
        self.rotate_on_size = rotate_on_size
        self.rotations = rotations
        self.late_writes = late_writes
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "ab", buffering=1024 * 1024)
        self.size = self.file.tell()
        if self.size == 0 and header:
            self.file.write(header)
            self.size = len(header)
        self.rotated = 0
        self.late_written = 0
        self.held: list[bytes] | None = None  # lines held back for the file being rotated

    def _rotated_name(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n:02d}")

    def _put(self, record: bytes) -> int:
        if self.separator is None:
            data = record + b"\n"
        else:
            data = (self.separator + b"\n" if self.in_file else b"") + record
        self.file.write(data)
        self.in_file += 1
        return len(data)

    def write(self, line: bytes) -> None:
        if self.held is not None:
            self.held.append(line)
            if len(self.held) >= self.late_writes:
                self.rotate()
            return
        self.size += self._put(line)
        if self.rotate_on_size and self.size >= self.rotate_on_size:
            if self.late_writes:
                self.held = []
            else:
                self.rotate()

    def _timestamped_name(self) -> Path:
        """audit.log -> audit.20261122T090000.log (the rotation's time, UTC); -2, -3 ... when taken."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        name = self.path.with_name(f"{self.path.stem}.{stamp}{self.path.suffix}")
        n = 1
        while name.exists():
            n += 1
            name = self.path.with_name(f"{self.path.stem}.{stamp}-{n}{self.path.suffix}")
        return name

    def rotate(self) -> None:
        """Rename (chain or timestamp), then the held-back lines into the renamed file, then a new audit.log."""
        self.file.flush()
        if self.scheme == "timestamp":
            kept = sorted(self.path.parent.glob(f"{self.path.stem}.*T*{self.path.suffix}"), key=os.path.getmtime)
            for old in kept[:max(0, len(kept) - self.rotations + 1)]:
                old.unlink()
            os.rename(self.path, self._timestamped_name())
        else:
            oldest = self._rotated_name(self.rotations)
            if oldest.exists():
                oldest.unlink()
            for n in range(self.rotations - 1, 0, -1):
                if self._rotated_name(n).exists():
                    os.rename(self._rotated_name(n), self._rotated_name(n + 1))
            os.rename(self.path, self._rotated_name(1))
        for line in self.held or []:
            self._put(line)  # the old handle: lands in audit.log.01
            self.late_written += 1
        self.held = None
        self.file.write(self.footer)
        self.file.close()
        self.file = open(self.path, "ab", buffering=1024 * 1024)
        self.file.write(self.header)
        self.size = len(self.header)
        self.in_file = 0
        self.rotated += 1

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        if self.held:
            self.rotate()
        self.file.close()


PERCONA_TIME = "%Y-%m-%dT%H:%M:%S UTC"  # the timestamp format of Percona's JSON audit records


def _ts(t: datetime) -> str:
    return t.strftime(PERCONA_TIME)


def percona_time(text: str) -> datetime:
    """A Percona record's timestamp (a manifest's first_event_time, last_event_time) as a UTC datetime."""
    return datetime.strptime(text, PERCONA_TIME).replace(tzinfo=timezone.utc)


def _line(record: dict) -> bytes:
    return json.dumps({"audit_record": record}, ensure_ascii=False, separators=(",", ":")).encode()


ROTATION_SCHEMES = ("chain", "timestamp")
"""chain: audit.log -> audit.log.01 -> .02 ... (Percona's plugin, MariaDB); timestamp: audit.log ->
audit.20261122T090000.log, -2, -3 ... for a second's second rotation (MySQL Enterprise Audit,
Percona's audit_log_filter)."""

STYLES = {"json": "percona-json", "xml-old": "percona-xml", "xml-new": "percona-xml", "csv": "percona-csv",
          "enterprise-json": "mysql-enterprise-json", "enterprise-jsonl": "mysql-enterprise-json"}
"""The writer's styles (audit_log_format JSON, OLD, NEW, CSV) and the format name a source gives each."""

_XML_HEADER = b'<?xml version="1.0" encoding="UTF-8"?>\n<AUDIT>\n'
_XML_FOOTER = b"</AUDIT>\n"
_XML_ESCAPES = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "\r": "&#13;", "\n": "&#10;", '"': "&quot;"}


def _xml(value) -> str:
    return "".join(_XML_ESCAPES.get(c, c) for c in str(value))


def _render(record: dict, style: str) -> bytes:
    """One record as the plugin writes it in ``style`` (no final newline)."""
    if style == "json":
        return _line(record)
    if style == "xml-old":
        return ("<AUDIT_RECORD\n" + "".join(f'  {k.upper()}="{_xml(v)}"\n' for k, v in record.items())
                + "/>").encode()
    if style == "xml-new":
        return ("<AUDIT_RECORD>\n" + "".join(f"  <{k.upper()}>{_xml(v)}</{k.upper()}>\n" for k, v in record.items())
                + "</AUDIT_RECORD>").encode()
    if style == "csv":
        name = record["name"]
        if name in ("Audit", "NoAudit"):
            columns = ["name", "record", "timestamp", "mysql_version", "startup_options", "os_version"]
        elif name in ("Connect", "Quit", "Change user"):
            columns = ["name", "record", "timestamp", "connection_id", "status", "user", "priv_user", "os_login",
                       "proxy_user", "host", "ip", "db"]
        else:
            columns = ["name", "record", "timestamp", "command_class", "connection_id", "status", "sqltext", "user",
                       "host", "os_user", "ip", "db"]
        assert set(record) <= set(columns), f"the CSV layout of {name} has no {set(record) - set(columns)}"
        return ",".join(str(record.get(c, 0)) if c == "status" else '"' + str(record.get(c, "")).replace('"', '""') + '"'
                        for c in columns).encode()
    if style == "enterprise-json":  # pretty-printed: one field per line, objects on one line
        fields = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in record.items())
        return ("  {\n" + fields + "\n  }").encode()
    if style == "enterprise-jsonl":
        return json.dumps(record, ensure_ascii=False).encode()
    raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")


def enterprise_record(record: dict, event_id: int) -> dict:
    """A Percona-style record as MySQL Enterprise Audit's JSON (class/event model) would have it."""
    ts = datetime.strptime(record["timestamp"], "%Y-%m-%dT%H:%M:%S UTC").strftime("%Y-%m-%d %H:%M:%S")
    out = {"timestamp": ts, "id": event_id}
    name = record["name"]
    if name in ("Audit", "NoAudit"):
        return {**out, "class": "audit", "event": "startup" if name == "Audit" else "shutdown", "connection_id": 0,
                "startup_data": {"server_id": 1, "os_version": record.get("os_version", ""),
                                 "mysql_version": record.get("mysql_version", ""),
                                 "args": record.get("startup_options", "").split()}}
    account = re.fullmatch(r"([^\[]*)\[([^\]]*)\] @ (\S*) \[([^\]]*)\]", record.get("user", ""))
    user = account.group(1) if account else record.get("user", "")
    priv = account.group(2) if account else record.get("priv_user", "")
    out.update({"connection_id": int(record["connection_id"]), "account": {"user": priv, "host": "%"},
                "login": {"user": user, "os": "", "ip": record.get("ip", ""), "proxy": ""}})
    if name in ("Connect", "Quit"):
        return {**out, "class": "connection", "event": "connect" if name == "Connect" else "disconnect",
                "connection_data": {"connection_type": "tcp/ip", "status": record["status"], "db": record["db"]}}
    return {**out, "class": "general", "event": "status",
            "general_data": {"command": "Query", "sql_command": record["command_class"], "query": record["sqltext"],
                             "status": record["status"]}}


def expected_path(log_path: Path) -> Path:
    """audit.log -> audit.expected.jsonl: the records of an XML or CSV run as the plugin's JSON."""
    return log_path.with_name(log_path.stem + ".expected.jsonl")


# The incidents `--incidents` injects (docs/alerts.md, "The demo's incidents"): where in the run (a
# fraction of its records), and the alert each must raise with the config's compliance section as in
# auditpipe.yaml (shop.cards: PCI, allowed svc_payments and app; clinic.patients: HIPAA, allowed
# nurse_* and dr_*). The brute force is the failed-login burst (--failed-login-burst, at one half).
SPRAY_ORIGIN = ("vpn-pool", "198.51.100.77")
SPRAY_ACCOUNTS = ["alice", "bob", "carol", "dave", "erin", "frank"]
CARD_NUMBERS = ["4111 1111 1111 1111", "5500-0000-0000-0004", "340000000000009"]
# the password the privilege escalation's GRANT sets (MySQL 5.7's GRANT ... IDENTIFIED BY)
GRANT_PASSWORD = "Rep0rt!ng-2026"
INCIDENTS = [
    (0.20, "deleted_record"),
    (0.30, "spray"),
    (0.40, "privilege_escalation"),
    (0.60, "card_numbers"),
    (0.70, "phi_by_service_account"),
    (0.80, "audit_stop"),
]
# Failed logins of the clean traffic are isolated: one account or origin fails at most once in this
# much simulated time, so no alert rule (thresholds of 2 or more within 10 minutes) fires on them.
CLEAN_FAILURE_SPACING = timedelta(minutes=10)

# The learned baselines' incidents (docs/alerts.md "Learned baselines"), written with ``learned=RUN``:
# each is judged against its principal's history, which baseline_history writes for `auditpipe import`
# to seed the job's baselines with. Their accounts carry the run's name, so that each run's are new
# to the job (a baseline the job holds is never seeded again).
LEARNED_INCIDENTS = [
    (0.15, "oncall_login"),
    (0.25, "remote_admin"),
    (0.45, "etl_burst"),
    (0.65, "record_lookup"),
]
REMOTE_ORIGIN = ("vpn-remote", "198.51.100.23")
ETL_HISTORY_PER_HOUR = 20  # svc_etl's records in each active hour of its history
ETL_BURST = 150  # its statements in the burst: the threshold is max(100, 3 x 20, 20 + 3 x 0) = 100


def learned_accounts(run: str) -> dict[str, str]:
    """The run's account of each learned incident."""
    return {"oncall_login": f"dba_oncall_{run}", "remote_admin": f"dba_remote_{run}", "etl_burst": f"svc_etl_{run}",
            "record_lookup": f"dr_{run}"}


class HistoryLog:
    """Percona JSON records of one sequence, numbered in time order when rendered: history for
    `auditpipe import`. Each record is its own connection (import builds no sessions)."""

    def __init__(self, startup: datetime):
        self.startup = startup.strftime("%Y-%m-%dT%H:%M:%S")
        self.records: list[tuple[datetime, dict]] = []

    @property
    def n(self) -> int:
        return len(self.records)

    def record(self, at: datetime, name: str, user: str, ip: str, sql: str | None = None,
               host: str | None = None) -> None:
        host = host or f"h-{ip}"
        if name == "Connect":
            r = {"user": user, "priv_user": user, "os_login": "", "proxy_user": "", "host": host, "ip": ip,
                 "db": SCHEMA}
        else:
            r = {"command_class": "select", "sqltext": sql, "user": f"{user}[{user}] @ {host} [{ip}]",
                 "host": host, "os_user": "", "ip": ip, "db": SCHEMA}
        self.records.append((at, {"name": name, **r}))

    def render(self) -> bytes:
        out = []
        for n, (at, r) in enumerate(sorted(self.records, key=lambda x: x[0]), start=1):  # sorted() is stable
            record = {"name": r["name"], "record": f"{n}_{self.startup}", "timestamp": _ts(at),
                      "connection_id": str(1000 + n), "status": 0, **{k: v for k, v in r.items() if k != "name"}}
            out.append(json.dumps({"audit_record": record}, separators=(",", ":")).encode() + b"\n")
        return b"".join(out)


def baseline_history(before: datetime, run: str) -> HistoryLog:
    """Eight days of history that end hours before ``before`` (the run's first record): what the
    clean traffic's accounts and the learned incidents' accounts of ``run`` did, so that the live
    run is judged against it (alerts.baselines' defaults: learning 7d, usual_hour_days 2,
    volume.min_hours 24).

    Every account but dba_oncall works every third hour of the day (the hours before and after
    count as usual: all 24 are) on two days a week apart: 16 active hours, too few for volume_spike
    to judge. The clean accounts log in from every origin the clean traffic uses, and svc_payments
    and batch read the tables they read in the incidents (first_access judges what is new; that
    batch may not read clinic.patients is unauthorized_data_access's to say). dba_oncall works
    eight and nine hours after the run's; svc_etl works 32 hours of ETL_HISTORY_PER_HOUR records."""
    hour = before.replace(minute=0, second=0, microsecond=0)
    # its own startup time, so its own record ids (an import leaves out the ids it holds already)
    log = HistoryLog(before.replace(microsecond=0) - timedelta(days=9))
    spread = [3 * k for k in range(8)]  # hours after the run's hour, on an earlier day; the latest is 3 h before it
    acc = learned_accounts(run)
    bastion = dict(HOSTS)["bastion"]
    for ago in (8, 1):
        for h in spread:
            at = hour - timedelta(days=ago, hours=-h)
            for user in dict.fromkeys(USERS):
                for i, (host, ip) in enumerate(HOSTS):
                    log.record(at + timedelta(minutes=i), "Connect", user, ip, host=host)
                table = {"svc_payments": "shop.cards", "batch": "clinic.patients"}.get(user, "sbtest.sbtest1")
                log.record(at + timedelta(minutes=5), "Query", user, bastion, f"SELECT * FROM {table} WHERE id = 1",
                           host="bastion")
            for user in (acc["remote_admin"], acc["record_lookup"]):
                log.record(at, "Connect", user, bastion, host="bastion")
                log.record(at + timedelta(minutes=1), "Query", user, bastion, "SELECT c FROM sbtest.sbtest1 WHERE id = 1",
                           host="bastion")
    for ago in range(8, 0, -1):
        for h in (8, 9):
            at = hour - timedelta(days=ago, hours=-h)
            log.record(at, "Connect", acc["oncall_login"], bastion, host="bastion")
            log.record(at + timedelta(minutes=1), "Query", acc["oncall_login"], bastion,
                       "SELECT c FROM sbtest.sbtest1 WHERE id = 1", host="bastion")
    batch_host, batch_ip = HOSTS[2]
    for ago in (8, 6, 4, 2):
        for h in spread:
            at = hour - timedelta(days=ago, hours=-h)
            for i in range(ETL_HISTORY_PER_HOUR):
                log.record(at + timedelta(seconds=10 * i), "Query", acc["etl_burst"], batch_ip,
                           f"SELECT c FROM sbtest.sbtest2 WHERE id = {i}", host=batch_host)
    return log


def _incident(name: str, emit: Callable[[dict, datetime], None], t: datetime, conn_seq: int, m: Manifest,
              run: str | None = None) -> int:
    """Writes one incident at simulated time ``t`` (a learned one's account named after ``run``); returns the
    last connection id used."""
    def session(user: str, host: str, ip: str, db: str, statements: list[tuple[str, str]]) -> None:
        nonlocal conn_seq
        conn_seq += 1
        cid = str(conn_seq)
        emit({"name": "Connect", "connection_id": cid, "status": 0, "user": user, "priv_user": user, "os_login": "",
              "proxy_user": "", "host": host, "ip": ip, "db": db}, t)
        base = {"connection_id": cid, "user": f"{user}[{user}] @ {host} [{ip}]", "host": host, "os_user": "", "ip": ip,
                "db": db}
        for i, (cls, sql) in enumerate(statements):
            emit({"name": "Query", "command_class": cls, "status": 0, "sqltext": sql, **base},
                 t + timedelta(milliseconds=10 * (i + 1)))
        emit({"name": "Quit", "connection_id": cid, "status": 0, "user": user, "priv_user": user, "os_login": "",
              "proxy_user": "", "host": host, "ip": ip, "db": db}, t + timedelta(milliseconds=10 * (len(statements) + 1)))

    if name == "spray":
        host, ip = SPRAY_ORIGIN
        for i, user in enumerate(SPRAY_ACCOUNTS):
            conn_seq += 1
            emit({"name": "Connect", "connection_id": str(conn_seq), "status": 1045, "user": user, "priv_user": "",
                  "os_login": "", "proxy_user": "", "host": host, "ip": ip, "db": ""}, t + timedelta(milliseconds=50 * i))
        m.expected_alerts.append({"rule": contract.rule("password_spray"), "subject": ip})
    elif name == "privilege_escalation":
        session("reporting", "bastion", "10.0.9.5", SCHEMA,
                [("grant", f"GRANT ALL PRIVILEGES ON *.* TO 'reporting'@'%' IDENTIFIED BY '{GRANT_PASSWORD}' "
                           "WITH GRANT OPTION")])
        m.expected_alerts.append({"rule": contract.rule("account_change"), "subject": "reporting@bastion"})
        m.secrets.append(GRANT_PASSWORD)
    elif name == "card_numbers":
        pan1, pan2, pan3 = CARD_NUMBERS
        session("svc_payments", "app-1", "10.0.1.11", "shop",
                [("insert", f"INSERT INTO cards (holder, pan, expiry) VALUES ('J. Doe', '{pan1}', '12/29')"),
                 ("update", f"UPDATE cards SET pan = '{pan2}' WHERE holder = 'J. Doe'"),
                 ("select", f"SELECT holder FROM cards WHERE pan = {pan3.replace(' ', '')}")])
        m.card_numbers.extend(CARD_NUMBERS)
    elif name == "phi_by_service_account":
        session("batch", "batch-1", "10.0.2.21", "clinic",
                [("select", "SELECT name, diagnosis FROM patients WHERE id = 42")])
        m.expected_alerts.append({"rule": contract.rule("unauthorized_data_access"), "subject": "batch@batch-1"})
    elif name == "audit_stop":
        session("dba_bob", "bastion", "10.0.9.5", SCHEMA, [("set_option", "SET GLOBAL audit_log_policy = 'NONE'")])
        m.expected_alerts.append({"rule": contract.rule("audit_stopped"), "subject": "dba_bob@bastion"})
    elif name == "oncall_login":  # an hour eight away from the ones it works in
        user = learned_accounts(run)[name]
        session(user, "bastion", "10.0.9.5", SCHEMA, [("select", "SELECT c FROM sbtest1 WHERE id = 1")])
        m.expected_alerts.append({"rule": contract.rule("off_hours"), "subject": user})
    elif name == "remote_admin":  # an administrator from an origin it never came from
        user = learned_accounts(run)[name]
        session(user, *REMOTE_ORIGIN, SCHEMA, [("select", "SELECT c FROM sbtest1 WHERE id = 1")])
        m.expected_alerts.append({"rule": contract.rule("new_origin"), "subject": user})
    elif name == "etl_burst":  # far more records in an hour than its own mean
        user = learned_accounts(run)[name]
        if (t + timedelta(seconds=5)).hour != t.hour:  # the burst within one clock hour
            t = (t + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
        session(user, "batch-1", "10.0.2.21", SCHEMA,
                [("select", f"SELECT c FROM sbtest2 WHERE id = {i}") for i in range(ETL_BURST)])
        m.expected_alerts.append({"rule": contract.rule("volume_spike"), "subject": user})
    elif name == "record_lookup":  # a doctor (allowed) reading patients for the first time
        user = learned_accounts(run)[name]
        session(user, "bastion", "10.0.9.5", "clinic", [("select", "SELECT name FROM patients WHERE id = 7")])
        m.expected_alerts.append({"rule": contract.rule("first_access"), "subject": user})
    return conn_seq


def simulate(path: Path, rate: float = 500, duration: float = 60, speedup: float = 1.0, seed: int | None = None,
             rotate_on_size: int = 1024 * 1024, rotations: int = 9, late_writes: int = 3,
             failed_login_burst: int = 0, malformed: int = 0, start_time: datetime | None = None,
             progress: Callable[[int, int], None] | None = None, max_records: int | None = None,
             bad_lines: Sequence[bytes] = tuple(MALFORMED_LINES), style: str = "json",
             rotation: str = "chain", incidents: bool = False, stop: threading.Event | None = None,
             restart_at: float | None = None, learned: str | None = None) -> Manifest:
    """Writes about ``rate * duration`` records of simulated time, paced at ``rate * speedup`` per second.

    ``incidents``: also write the INCIDENTS (a password spray, a privilege escalation, card numbers in
    statements, a service account reading PHI, the audit log turned off); the manifest lists the
    alerts they must raise (with the burst of ``failed_login_burst``, a brute force) and the card
    numbers written.

    ``speedup`` > 1 compresses simulated time (a few minutes of traffic in a few seconds); the records
    carry simulated timestamps starting at ``start_time`` (default: now minus ``duration``).
    ``malformed`` lines are taken in turn from ``bad_lines`` (default: one of each kind in MALFORMED_LINES).
    ``style``: json, xml-old, xml-new or csv (STYLES). ``rotation``: chain or timestamp (ROTATION_SCHEMES).
    ``stop``: once set (by another thread), writing ends early; the manifest counts what was written.
    ``learned``: also write the LEARNED_INCIDENTS, their accounts named after this run name; they raise
    their alerts once the job's baselines hold ``baseline_history(first record's time, learned)``.
    ``restart_at``: at this fraction of the records the server restarts: the plugin's stop record, then
    its start record, number 1 of a new sequence (Manifest.earlier_sequences); the
    manifest expects the stop record's audit_stopped and, for Percona's numbered styles, the new
    sequence's record_gap (class restart).
    """
    if rotation not in ROTATION_SCHEMES:
        raise ValueError(f"unknown rotation {rotation!r} (known: {', '.join(ROTATION_SCHEMES)})")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    if malformed and style != "json":
        raise ValueError("malformed lines are Percona JSON lines: only with style json")
    if restart_at is not None and not 0 < restart_at < 1:
        raise ValueError(f"restart_at {restart_at}: a fraction of the records, above 0 and below 1")
    r = random.Random(seed)
    t0 = start_time or (datetime.now(timezone.utc) - timedelta(seconds=duration))
    log_start = t0.strftime("%Y-%m-%dT%H:%M:%S")
    total = int(rate * duration) if max_records is None else max_records
    xml, enterprise = style.startswith("xml"), style.startswith("enterprise")
    writer = AuditLogWriter(path, rotate_on_size, rotations, late_writes,
                            header=_XML_HEADER if xml else b"[\n" if enterprise else b"",
                            footer=_XML_FOOTER if xml else b"\n]\n" if enterprise else b"",
                            scheme=rotation, separator=b"," if enterprise else None)
    ids_in_second: Counter = Counter()
    expected = open(expected_path(path), "ab") if style != "json" else None
    m = Manifest(log_path=str(path), log_start=log_start)
    names: Counter = Counter()
    failed_by_user: Counter = Counter()
    seq = 0  # records written (and numbers left out): paces the run
    number = 0  # the record number in the current sequence
    conn_seq = 1000
    wall_start = time.monotonic()
    restart_from = int(total * restart_at) if restart_at is not None else -1
    malformed_at = sorted(r.sample(range(max(total, 1)), min(malformed, max(total, 1)))) if malformed else []
    burst_at = total // 2 if failed_login_burst else -1
    if failed_login_burst >= 5:  # the default brute_force threshold
        m.expected_alerts.append({"rule": contract.rule("brute_force"), "subject": "admin"})
    incidents_at = sorted(([(int(total * f), name) for f, name in INCIDENTS] if incidents else [])
                          + ([(int(total * f), name) for f, name in LEARNED_INCIDENTS] if learned else []))
    if learned is not None and not re.fullmatch(r"[a-z0-9]+", learned):
        raise ValueError(f"learned {learned!r}: a run name of lower-case letters and digits")
    last_failure: dict = {}  # user or ip -> simulated time of its last failed login

    def emit(rec: dict, sim_t: datetime) -> None:
        nonlocal seq, number
        seq += 1
        number += 1
        rec["record"] = f"{number}_{log_start}"
        rec["timestamp"] = _ts(sim_t)
        # Percona writes name, record, timestamp first.
        ordered = {"name": rec.pop("name"), "record": rec.pop("record"), "timestamp": rec.pop("timestamp"), **rec}
        if style != "json" and "startup_optionsi" in ordered:  # a typo of the plugin's JSON only
            ordered["startup_options"] = ordered.pop("startup_optionsi")
        names[ordered["name"]] += 1
        if int(ordered.get("connection_id") or 0):
            conn = m.connections.setdefault(str(ordered["connection_id"]), [0, "open"])
            conn[0] += 1
            if ordered["name"] == "Quit":
                conn[1] = "logout"
            elif ordered["name"] == "Connect" and int(ordered.get("status") or 0) != 0:
                conn[1] = "failed_login"
        if not m.first_record:
            m.first_record, m.first_event_time = ordered["record"], ordered["timestamp"]
        m.last_record, m.last_event_time = ordered["record"], ordered["timestamp"]
        if enterprise:  # the same facts in the class/event model; the expected file holds it as is
            event_id = ids_in_second[ordered["timestamp"]]  # counts events within one second, as MySQL's id
            ids_in_second[ordered["timestamp"]] += 1
            ordered = enterprise_record(ordered, event_id)
        writer.write(_render(ordered, style))
        if expected:
            expected.write((json.dumps(ordered, ensure_ascii=False).encode() if enterprise else _line(ordered)) + b"\n")

    def started(at: datetime) -> None:
        """The plugin's start record, number 1 of its sequence: a restart of the numbering (record_gap, low)."""
        emit({"name": "Audit", "mysql_version": "8.0.36-28", "startup_optionsi": "--audit_log_format=JSON",
              "os_version": "x86_64-Linux"}, at)
        if not enterprise:
            m.expected_alerts.append({"rule": contract.rule("record_gap"), "subject": log_start})

    started(t0)
    session: dict | None = None
    remaining_in_session = 0
    in_txn = False
    while seq < total and not (stop and stop.is_set()):
        sim_t = t0 + timedelta(seconds=seq / rate)
        # pace against the wall clock
        due = wall_start + (seq / rate) / speedup
        delay = due - time.monotonic()
        if delay > 0:
            writer.flush()
            time.sleep(min(delay, 0.5))
            continue
        if malformed_at and seq >= malformed_at[0]:
            malformed_at.pop(0)
            writer.write(bad_lines[m.malformed % len(bad_lines)])
            m.malformed += 1
            continue
        if seq == burst_at:
            for i in range(failed_login_burst):
                if seq >= total:
                    break
                conn_seq += 1
                emit({"name": "Connect", "connection_id": str(conn_seq), "status": 1045, "user": "admin",
                      "priv_user": "", "os_login": "", "proxy_user": "", "host": "scanner.example.net",
                      "ip": "203.0.113.66", "db": ""}, sim_t + timedelta(milliseconds=20 * i))
                failed_by_user["admin"] += 1
            burst_at = -1
            continue
        if incidents_at and seq >= incidents_at[0][0]:
            name = incidents_at.pop(0)[1]
            if name == "deleted_record":  # a record removed from the log: its number is missing
                seq += 1
                number += 1
                m.deleted_records.append(number)
                m.deleted_ids.append(f"{number}_{log_start}")
                m.expected_alerts.append({"rule": contract.rule("record_gap"), "subject": log_start})
                continue
            conn_seq = _incident(name, emit, sim_t, conn_seq, m, learned)
            failed_by_user.update({u: 1 for u in SPRAY_ACCOUNTS} if name == "spray" else {})
            continue
        if seq >= restart_from >= 0 and session is None and not in_txn:
            restart_from = -1  # the server stops (its stop record) and starts again: a new startup time
            emit({"name": "NoAudit", "mysql_version": "8.0.36-28", "startup_optionsi": "--audit_log_format=JSON",
                  "os_version": "x86_64-Linux"}, sim_t)
            m.expected_alerts.append({"rule": contract.rule("audit_stopped"), "subject": "(no user)"})
            m.earlier_sequences.append([log_start, number])
            restart = sim_t if sim_t.strftime("%Y-%m-%dT%H:%M:%S") != log_start else sim_t + timedelta(seconds=1)
            log_start, number = restart.strftime("%Y-%m-%dT%H:%M:%S"), 0
            m.log_start = log_start
            started(restart)
            continue
        if session is None:
            conn_seq += 1
            user = r.choice(USERS)
            host, ip = r.choice(HOSTS)
            ok = r.random() > 0.02
            if not ok and any(sim_t - last_failure.get(k, datetime.min.replace(tzinfo=timezone.utc))
                              < CLEAN_FAILURE_SPACING for k in (user, ip)):
                ok = True  # clean traffic: failures stay isolated
            if not ok:
                last_failure[user] = last_failure[ip] = sim_t
            emit({"name": "Connect", "connection_id": str(conn_seq), "status": 0 if ok else 1045, "user": user,
                  "priv_user": user if ok else "", "os_login": "", "proxy_user": "", "host": host, "ip": ip,
                  "db": SCHEMA}, sim_t)
            if not ok:
                failed_by_user[user] += 1
                continue
            session = {"id": str(conn_seq), "user": user, "host": host, "ip": ip}
            remaining_in_session = r.randint(5, 60)
            continue
        account = f"{session['user']}[{session['user']}] @ {session['host']} [{session['ip']}]"
        base = {"connection_id": session["id"], "user": account, "host": session["host"], "os_user": "",
                "ip": session["ip"], "db": SCHEMA}
        if remaining_in_session <= 0:
            if in_txn:
                emit({"name": "Query", "command_class": "commit", "status": 0, "sqltext": "COMMIT", **base}, sim_t)
                in_txn = False
                continue
            emit({"name": "Quit", "connection_id": session["id"], "status": 0, "user": session["user"],
                  "priv_user": session["user"], "os_login": "", "proxy_user": "", "host": session["host"],
                  "ip": session["ip"], "db": SCHEMA}, sim_t)
            session = None
            continue
        remaining_in_session -= 1
        if not in_txn and r.random() < 0.15:
            emit({"name": "Query", "command_class": "begin", "status": 0, "sqltext": "BEGIN", **base}, sim_t)
            in_txn = True
            continue
        if in_txn and r.random() < 0.12:
            emit({"name": "Query", "command_class": "commit", "status": 0, "sqltext": "COMMIT", **base}, sim_t)
            in_txn = False
            continue
        cls, _, make, (err, p_err) = r.choices(STATEMENTS, weights=[s[1] for s in STATEMENTS])[0]
        status = err if r.random() < p_err else 0
        emit({"name": "Query", "command_class": cls, "status": status, "sqltext": make(r), **base}, sim_t)
        if progress and seq % 1000 == 0:
            progress(seq, total)
    writer.flush()
    writer.close()
    if expected:
        expected.close()
    m.records = seq - len(m.deleted_records)
    m.rotations = writer.rotated
    m.late_writes = writer.late_written
    m.failed_logins = sum(failed_by_user.values())
    m.failed_logins_by_user = dict(failed_by_user)
    m.events_by_name = dict(names)
    m.wall_seconds = round(time.monotonic() - wall_start, 3)
    if progress:
        progress(seq, total)
    m.write(manifest_path(path))
    return m
