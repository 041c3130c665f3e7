"""An alert as ArcSight's Common Event Format (CEF 0) in a syslog message (docs/alerts.md "CEF over
syslog"), for the SIEMs that take only that; stack/alerts/forwarder.py sends them.

The header names the rule (signature id) and its description (name), the severity on CEF's 0-10
scale; the extension uses the keys of CEF's dictionary the way database-monitoring products fill
them: ``duser`` the database account, ``src`` (``c6a2`` for IPv6) or ``shost`` the origin,
``dhost`` the audited server, ``rt``/``start``/``end`` as milliseconds since the epoch,
``externalId`` the alert's id (a SIEM drops a second copy by it), ``msg`` the summary, ``cnt`` the
evidence count, and custom strings with their labels for the rest (``MAPPING``).

Everything in an alert may come from a database user (account names, hosts, statements in the
summary): each value is escaped as CEF asks (header: backslash and pipe; extension: backslash,
equals sign, CR and LF as ``\\r`` ``\\n``), other control characters become U+FFFD, and each value is
cut to ``VALUE_BYTES`` (``MSG_BYTES`` for ``msg``) UTF-8 bytes of its escaped form, ending in "…", so
that no message exceeds ``MAX_MESSAGE_BYTES`` with its syslog header: what the usual receivers take
whole (rsyslog's default maxMessageSize is 8 KiB).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from auditpipe import __version__, contract

VENDOR = PRODUCT = "auditpipe"
#: CEF severity (0-10) of each alert severity: ArcSight reads 0-3 low, 4-6 medium, 7-8 high, 9-10 very high
SEVERITY = {"low": 3, "medium": 6, "high": 8, "critical": 10}
#: syslog severity (RFC 5424) of each alert severity: crit, err, warning, notice
SYSLOG_SEVERITY = {"critical": 2, "high": 3, "medium": 4, "low": 5}
#: what an alert's subject is, by rule (schemas/alert.schema.json "subject"): an account goes to duser,
#: an origin to src, c6a2 or shost; anything else (a record sequence, a link, a day) to cs5 "Subject".
#: Every rule of the job's contract is here (tests/unit/stack/test_cef.py).
SUBJECT = {
    contract.rule("brute_force"): "account",
    contract.rule("login_after_failures"): "account",
    contract.rule("account_change"): "account",
    contract.rule("unauthorized_data_access"): "account",
    contract.rule("first_access"): "account",
    contract.rule("off_hours"): "account",
    contract.rule("volume_spike"): "account",
    contract.rule("new_origin"): "account",
    contract.rule("audit_stopped"): "account",
    contract.rule("ddl_outside_change_window"): "account",
    contract.rule("password_spray"): "origin",
    contract.rule("record_gap"): None,
    contract.rule("integrity"): None,
    contract.rule("review_overdue"): None,
}
#: the custom strings (key, label)
CONTROLS, FRAMEWORKS, GAP_CLASS, EVIDENCE, SUBJECT_CS = (
    ("cs1", "Controls"), ("cs2", "Frameworks"), ("cs3", "Gap class"), ("cs4", "Evidence"), ("cs5", "Subject"))
#: how the alert's fields map to CEF (docs/alerts.md prints this table)
MAPPING = (
    ("rule", "Device Event Class ID (header)"),
    ("the rule's description (schemas/job-contract.json)", "Name (header)"),
    ("severity", "Severity (header): low 3, medium 6, high 8, critical 10"),
    ("_id", "externalId"),
    ("raised_at", "rt"),
    ("first_event_time, last_event_time", "start, end"),
    ("server", "dhost"),
    ("subject, an account", "duser"),
    ("subject, an origin", "src (IPv4), c6a2 (IPv6) or shost"),
    ("subject, anything else", f"{SUBJECT_CS[0]} ({SUBJECT_CS[1]})"),
    ("summary", "msg"),
    ("evidence_count", "cnt"),
    ("controls", f"{CONTROLS[0]} ({CONTROLS[1]}), comma-separated"),
    ("frameworks", f"{FRAMEWORKS[0]} ({FRAMEWORKS[1]}), framework:id,id;..."),
    ("gap_class", f"{GAP_CLASS[0]} ({GAP_CLASS[1]})"),
    ("evidence", f"{EVIDENCE[0]} ({EVIDENCE[1]}), the first event ids, comma-separated"),
)
VALUE_BYTES = 512
MSG_BYTES = 2048
MAX_MESSAGE_BYTES = 8192
CUT = "…"
_CONTROL = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _clean(text: str) -> str:
    return _CONTROL.sub("\ufffd", text)


def header_value(text: str, limit: int = VALUE_BYTES) -> str:
    """A header field: backslash and pipe escaped; CR and LF, not allowed there, become spaces."""
    escaped = _clean(str(text)).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return _cut(escaped, limit)


def extension_value(text: str, limit: int = VALUE_BYTES) -> str:
    """An extension value: backslash, equals sign, CR and LF escaped."""
    escaped = (_clean(str(text)).replace("\\", "\\\\").replace("=", "\\=")
               .replace("\r", "\\r").replace("\n", "\\n"))
    return _cut(escaped, limit)


def _cut(escaped: str, limit: int) -> str:
    """At most ``limit`` UTF-8 bytes, never ending inside an escape sequence: cut ones end in CUT."""
    if len(escaped.encode()) <= limit:
        return escaped
    room = limit - len(CUT.encode())
    out = escaped.encode()[:room].decode("utf-8", "ignore")
    trailing = len(out) - len(out.rstrip("\\"))
    if trailing % 2:  # an escape sequence's backslash without its character
        out = out[:-1]
    return out + CUT


def _millis(t) -> str | None:
    if isinstance(t, datetime):
        return str(int((t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp() * 1000))
    return None


def description(rule: str) -> str:
    """The rule's description in the job's contract, without its full stop; the rule itself if unknown."""
    for r in contract.contract()["alert_rules"]:
        if r["rule"] == rule:
            return r["description"].rstrip(".")
    return str(rule)


def subject_fields(rule: str, subject) -> list[tuple[str, str]]:
    if subject in (None, ""):
        return []
    subject = str(subject)
    kind = SUBJECT.get(rule)
    if kind == "account":
        return [("duser", subject)]
    if kind == "origin":
        try:
            ip = ipaddress.ip_address(subject)
            if ip.version == 4:
                return [("src", subject)]
            return [("c6a2", subject), ("c6a2Label", "Source IPv6 Address")]
        except ValueError:
            return [("shost", subject)]
    return [(SUBJECT_CS[0], subject), (SUBJECT_CS[0] + "Label", SUBJECT_CS[1])]


def message(alert: dict) -> str:
    """The CEF message of an alert document (schemas/alert.schema.json, dates as datetimes)."""
    rule = str(alert.get("rule", ""))
    severity = SEVERITY.get(alert.get("severity"), 5)
    head = "|".join(["CEF:0", VENDOR, PRODUCT, header_value(__version__), header_value(rule, 64),
                     header_value(description(rule), 256), str(severity)])
    ext: list[tuple[str, str]] = [("externalId", alert.get("_id", ""))]
    for key, field in (("rt", "raised_at"), ("start", "first_event_time"), ("end", "last_event_time")):
        if (ms := _millis(alert.get(field))) is not None:
            ext.append((key, ms))
    if alert.get("server"):
        ext.append(("dhost", alert["server"]))
    ext += subject_fields(rule, alert.get("subject"))
    ext.append(("cnt", str(int(alert.get("evidence_count") or 0))))
    if alert.get("controls"):
        ext += [(CONTROLS[0], ",".join(map(str, alert["controls"]))), (CONTROLS[0] + "Label", CONTROLS[1])]
    if alert.get("frameworks"):
        joined = ";".join(f"{k}:{','.join(map(str, v))}" for k, v in sorted(alert["frameworks"].items()))
        ext += [(FRAMEWORKS[0], joined), (FRAMEWORKS[0] + "Label", FRAMEWORKS[1])]
    if alert.get("gap_class"):
        ext += [(GAP_CLASS[0], alert["gap_class"]), (GAP_CLASS[0] + "Label", GAP_CLASS[1])]
    if alert.get("evidence"):
        ext += [(EVIDENCE[0], ",".join(map(str, alert["evidence"]))), (EVIDENCE[0] + "Label", EVIDENCE[1])]
    # msg last: a parser that splits values at the next " key=" is least likely to go wrong in free text
    ext.append(("msg", alert.get("summary") or ""))
    return head + "|" + " ".join(
        f"{k}={extension_value(v, MSG_BYTES if k == 'msg' else VALUE_BYTES)}" for k, v in ext)


def unreadable(topic: str, partition: int, offset: int, error: str) -> str:
    """The CEF message standing for a message of the alerts topic that is no alert document: the SIEM
    learns that one was there and where, nothing is skipped silently."""
    head = "|".join(["CEF:0", VENDOR, PRODUCT, header_value(__version__), "unreadable_alert",
                     "A message of the alerts topic is no alert document", "5"])
    return head + "|" + " ".join(f"{k}={extension_value(v)}" for k, v in (
        ("externalId", f"{topic}/{partition}/{offset}"), ("msg", f"{topic} partition {partition} offset {offset}: {error}")))


@dataclass(frozen=True)
class Syslog:
    """How a CEF message is put in a syslog message over TCP or TLS: RFC 5424 with octet counting
    (RFC 6587, and RFC 5425 over TLS), or RFC 3164 ended by LF (a CEF message holds no LF)."""

    framing: str  # rfc5424 | rfc3164
    facility: int
    hostname: str

    def frame(self, cef: str, severity: str, at: datetime) -> bytes:
        pri = self.facility * 8 + SYSLOG_SEVERITY.get(severity, 5)
        at = at.astimezone(timezone.utc)
        if self.framing == "rfc3164":
            # the usual CEF-over-syslog line: no tag, the time in UTC without a year
            line = f"<{pri}>{at:%b} {at.day:2d} {at:%H:%M:%S} {self.hostname} {cef}".encode()
            return line + b"\n"
        msg = f"<{pri}>1 {at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}Z {self.hostname} {PRODUCT} - alert - {cef}".encode()
        return str(len(msg)).encode() + b" " + msg


def hostname_ok(name: str) -> bool:
    """A syslog HOSTNAME: printable US-ASCII without spaces, at most 255 characters (RFC 5424)."""
    return 0 < len(name) <= 255 and all(33 <= ord(c) <= 126 for c in name)
