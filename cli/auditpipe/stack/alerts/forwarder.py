"""Alerts to a SIEM as CEF over syslog (config ``alerts.cef``, docs/alerts.md "CEF over syslog").

The forwarder reads the alerts topic, where every alert is (the job's rules', the continuous
verification's integrity alerts, review_overdue), in a consumer group of its own with
isolation.level=read_committed, turns each into a CEF message (stack/alerts/cef.py) and writes it to the
target over TCP or TLS. Offsets are committed only for messages written at least ``CONFIRM_AFTER``
seconds earlier on a connection still open: syslog over TCP acknowledges nothing, but a receiver
that went away is seen by then, and whatever was written since the last commit is written again
on a new connection. So an alert reaches the SIEM at least once, also across a receiver's or the
forwarder's restart; a second copy carries the same ``externalId`` (the alert's id), and a replay
of the job publishes an alert again under its id too. A receiver that is down holds the forwarder
at its place on the topic (retried with backoff up to ``LONGEST_BACKOFF``); the alerts topic keeps
90 days. The first run starts at the topic's oldest alert.

The local stack's supervisor runs it in a thread when ``alerts.cef`` is set; a deployment runs
`auditpipe forward` (the ``forward`` compose service). What it did last is kept in
``<state>/forwarder/cef.json``, which `status` shows.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from auditpipe.config import Config, duration_seconds
from auditpipe.errors import UserError
from auditpipe.stack.alerts import cef

#: the forwarder's consumer group (its offsets are what it has delivered); an ACL names it
GROUP = "auditpipe-cef-forwarder"
#: a message counts as delivered when the connection it went on is still open this long after
CONFIRM_AFTER = 1.0
FIRST_BACKOFF = 1.0
LONGEST_BACKOFF = 60.0
BATCH = 500


def state_file(cfg: Config) -> Path:
    return cfg.state_dir / "forwarder" / "cef.json"


@dataclass
class Target:
    scheme: str  # tcp | tls
    host: str
    port: int
    framing: str
    facility: int
    hostname: str
    timeout: float
    ca_file: str | None = None
    certificate_file: str | None = None
    key_file: str | None = None

    @property
    def address(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def target(cfg: Config) -> Target | None:
    """The configured syslog target (alerts.cef), or None."""
    section = cfg.data["alerts"].get("cef")
    if section is None:
        return None
    scheme, rest = section["target"].split("://", 1)
    host, port = rest.rsplit(":", 1)
    name = section.get("hostname") or socket.gethostname()
    if not cef.hostname_ok(name):
        raise UserError(f"alerts.cef.hostname: {name!r} is no syslog host name (printable ASCII, no spaces, "
                        "at most 255 characters); set one")
    files = {key: str(cfg._path(section[key])) for key in ("ca_file", "certificate_file", "key_file") if key in section}
    return Target(scheme, host.strip("[]"), int(port), section["framing"], section["facility"], name,
                  duration_seconds(section["timeout"]), **files)


@dataclass
class ForwardState:
    """What the forwarder did last (shown by status)."""

    target: str = ""
    sent: int = 0  # messages written and confirmed since the state began
    last_alert: str = ""
    last_sent_at: str = ""
    error: str = ""
    error_since: str = ""

    @classmethod
    def load(cls, cfg: Config) -> ForwardState:
        try:
            data = json.loads(state_file(cfg).read_text())
            return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
        except (OSError, ValueError, TypeError):
            return cls()

    def save(self, cfg: Config) -> None:
        f = state_file(cfg)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(f)


class Connection:
    """One TCP or TLS connection to the target."""

    def __init__(self, t: Target):
        self.t = t
        raw = socket.create_connection((t.host, t.port), timeout=t.timeout)
        if t.scheme == "tls":
            context = ssl.create_default_context(cafile=t.ca_file)
            if t.certificate_file:
                context.load_cert_chain(t.certificate_file, t.key_file)
            try:
                raw = context.wrap_socket(raw, server_hostname=t.host)
            except (ssl.SSLError, OSError):
                raw.close()
                raise
        self.sock = raw

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def open(self) -> bool:
        """Whether the receiver still holds the connection: a syslog receiver sends nothing, so a
        readable end of file (or a reset) means it closed it."""
        self.sock.setblocking(False)
        try:
            return self.sock.recv(1) != b""
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return True
        except OSError:
            return False
        finally:
            try:
                self.sock.settimeout(self.t.timeout)
            except OSError:
                pass

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _decode(value: bytes) -> dict:
    from bson import json_util

    options = json_util.RELAXED_JSON_OPTIONS.with_options(tz_aware=True, tzinfo=timezone.utc)
    doc = json_util.loads(value, json_options=options)
    if not isinstance(doc, dict) or not isinstance(doc.get("_id"), str) or not isinstance(doc.get("rule"), str):
        raise ValueError("not an alert document (an object with _id and rule)")
    return doc


def frame_of(t: Target, topic: str, message) -> tuple[bytes, str]:
    """The syslog frame of one message of the alerts topic, and the alert's id (or where it was)."""
    syslog = cef.Syslog(t.framing, t.facility, t.hostname)
    try:
        alert = _decode(message.value())
        raised = alert.get("raised_at")
        at = raised if isinstance(raised, datetime) else datetime.now(timezone.utc)
        return syslog.frame(cef.message(alert), str(alert.get("severity")), at), alert["_id"]
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        where = f"{topic}/{message.partition()}/{message.offset()}"
        text = cef.unreadable(topic, message.partition(), message.offset(), str(e)[:300])
        return syslog.frame(text, "medium", datetime.now(timezone.utc)), where


class Forwarder:
    """The consumer, the connection and what was written but not yet confirmed."""

    def __init__(self, cfg: Config, t: Target, log=print):
        from confluent_kafka import Consumer

        from auditpipe.stack.kafka.topics import QUIET_CLIENT, topic_name

        self.cfg, self.t, self.log = cfg, t, log
        self.topic = topic_name("alerts")
        self.consumer = Consumer({
            **cfg.kafka_client_for("forwarder"), "group.id": GROUP, "enable.auto.commit": False,
            "isolation.level": "read_committed", "auto.offset.reset": "earliest",
            # a receiver down for long holds the forwarder between polls: that is no reason to leave the group
            "max.poll.interval.ms": 86_400_000, **QUIET_CLIENT})
        self.consumer.subscribe([self.topic])
        self.conn: Connection | None = None
        self.pending: list[tuple[float, bytes, str, int, int]] = []  # (written at, frame, id, partition, offset)
        self.state = ForwardState.load(cfg)
        self.state.target = t.address
        self.state.save(cfg)  # the deployment's healthcheck: the forwarder has started

    def close(self) -> None:
        if self.conn:
            self.conn.close()
        self.consumer.close()

    def _drop_connection(self) -> None:
        if self.conn:
            self.conn.close()
        self.conn = None

    def write(self, messages) -> None:
        """Adds the frames of ``messages`` to what awaits confirmation and writes them; without a
        connection it makes one and writes everything unconfirmed on it, the older ones again."""
        first = len(self.pending)
        for m in messages:
            frame, aid = frame_of(self.t, self.topic, m)
            self.pending.append((time.monotonic(), frame, aid, m.partition(), m.offset()))
        if self.conn is None:
            self.conn = Connection(self.t)
            if first:
                self.log(f"forward: connected to {self.t.address}; writing {first} unconfirmed alert(s) again")
            first = 0
        for i in range(first, len(self.pending)):
            _, frame, aid, p, o = self.pending[i]
            self.conn.send(frame)
            self.pending[i] = (time.monotonic(), frame, aid, p, o)

    def confirm(self, everything: bool = False) -> int:
        """Commits the offsets of what was written CONFIRM_AFTER ago (``everything``: waits for all of it)
        on a connection that is still open; returns how many were confirmed. A closed connection is
        dropped: its unconfirmed messages are written again on the next."""
        from confluent_kafka import TopicPartition

        if not self.pending:
            return 0
        if everything:
            time.sleep(max(0.0, self.pending[-1][0] + CONFIRM_AFTER - time.monotonic()))
        if self.conn is None or not self.conn.open():
            self._drop_connection()
            raise ConnectionError(f"{self.t.address} closed the connection")
        cutoff = time.monotonic() - CONFIRM_AFTER
        done = [p for p in self.pending if p[0] <= cutoff]
        if not done:
            return 0
        offsets: dict[int, int] = {}
        for _, _, _, partition, offset in done:
            offsets[partition] = max(offsets.get(partition, -1), offset)
        self.consumer.commit(offsets=[TopicPartition(self.topic, p, o + 1) for p, o in offsets.items()],
                             asynchronous=False)
        self.pending = self.pending[len(done):]
        self.state.sent += len(done)
        self.state.last_alert, self.state.last_sent_at = done[-1][2], _now()
        self.state.error = self.state.error_since = ""
        self.state.save(self.cfg)
        return len(done)

    def caught_up(self) -> bool:
        """Whether the group is at the end of every partition assigned to it (``--once``): its position,
        or before it has read anything its committed offset (else the oldest message)."""
        from confluent_kafka import TopicPartition

        parts = self.consumer.assignment()
        if not parts:
            return False
        for tp in self.consumer.position(parts):
            low, high = self.consumer.get_watermark_offsets(tp, timeout=10, cached=False)
            at = tp.offset
            if at < 0:
                committed = self.consumer.committed([TopicPartition(tp.topic, tp.partition)], timeout=10)[0].offset
                at = committed if committed >= 0 else low
            if at < high:
                return False
        return True

    def failed(self, error: str) -> None:
        if error != self.state.error:
            self.log(f"forward: {error}; trying again")
            self.state.error, self.state.error_since = error, _now()
            self.state.save(self.cfg)


def run(cfg: Config, once: bool = False, stopping=lambda: False, log=print) -> int:
    """Forwards alerts until ``stopping()`` (``once``: until the topic's end, then returns; an
    unreachable target is then an error). Returns how many alerts were confirmed."""
    from confluent_kafka import KafkaError, KafkaException

    t = target(cfg)
    if t is None:
        raise UserError("alerts.cef is not set: name the SIEM's syslog receiver there (docs/alerts.md \"CEF over syslog\")")
    f = Forwarder(cfg, t, log)
    confirmed, backoff = 0, FIRST_BACKOFF
    assigned_by = time.monotonic() + 60
    try:
        while not stopping():
            try:
                batch, errors = [], []
                if f.conn is not None or not f.pending:
                    batch = f.consumer.consume(BATCH, timeout=0.2 if f.pending else 1)
                    errors = [m.error() for m in batch if m.error() and m.error().code() != KafkaError._PARTITION_EOF]
                    batch = [m for m in batch if not m.error()]
                if batch or (f.pending and f.conn is None):
                    f.write(batch)  # the alerts read before an error are written first: none is skipped
                if errors:  # the topic unreadable (an ACL, a topic gone): said, in status too
                    raise KafkaException(errors[0])
                confirmed += f.confirm()
                backoff = FIRST_BACKOFF
                if once and not batch:
                    if f.caught_up():
                        confirmed += f.confirm(everything=True)
                        if not f.pending:
                            return confirmed
                    elif not f.consumer.assignment() and time.monotonic() > assigned_by:
                        raise UserError(f"Kafka at {cfg.kafka_bootstrap} gave the forwarder no partition of "
                                        f"{f.topic} within a minute (consumer group {GROUP})")
            except (OSError, KafkaException) as e:  # sockets, TLS; the topic unreadable, a commit refused
                if isinstance(e, OSError):
                    f._drop_connection()
                error = (f"Kafka at {cfg.kafka_bootstrap}: {e}" if isinstance(e, KafkaException)
                         else f"{t.address} did not take the alerts: {e}")
                if once:
                    raise UserError(f"{error} ({confirmed} confirmed; the rest are sent at the next run)") from None
                f.failed(error)
                time.sleep(backoff)
                backoff = min(backoff * 2, LONGEST_BACKOFF)
        return confirmed
    finally:
        f.close()
