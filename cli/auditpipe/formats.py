"""The audit log formats auditpipe reads: their names, how their records are framed, how to tell them.

The parsers are Java (io.auditpipe.parser.AuditFormats, the registry the job uses); this module
knows what the Python side needs of each format: its name (the config schema's enum and `auditpipe
parse` use the same list), how a collector cuts its records out of the file (``FRAMING``: the
patterns of a record's first and last line, the same as the Java side's
io.auditpipe.parser.Framing, which a unit test compares), and how to recognize it from a line, for
sources configured with ``format: auto`` and for `auditpipe parse` without --format. Detection is
a fallback that says what it chose; naming the format in the config is the way to be sure.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Framing:
    """How records are cut out of a file: one per line (no patterns), or several lines each. A
    multi-line record ends with the line its end pattern matches (rsyslog's endmsg.regex, the
    catch-up); the start pattern is for Fluentd, whose multiline parser knows only a first line."""

    start: str | None = None
    end: str | None = None

    def __post_init__(self):
        if (self.start is None) != (self.end is None):
            raise ValueError("a multi-line format needs both a start and an end pattern")

    @property
    def multi_line(self) -> bool:
        return self.end is not None


_XML = Framing(start=r"^ *<AUDIT_RECORD",
               end=r'(^ */>|^ *[A-Z_]+="[^"]*"/>|^ *<AUDIT_RECORD .*/>|</AUDIT_RECORD>) *$')
FRAMING: dict[str, Framing] = {
    "percona-json": Framing(),
    "percona-csv": Framing(start=r'^"[A-Za-z ]+","[0-9]+_',
                           end=r'(","[0-9A-Fa-f.:]*","[^"]*"|^"(Audit|NoAudit)",.*")$'),
    "percona-xml": _XML,
    "mysql-enterprise-json": Framing(start=r"^ {0,2},? *[{]", end=r"^ {0,2}([{].*)?[}] *,? *$"),
    "mysql-enterprise-xml": _XML,
    "mariadb-audit": Framing(),
    "aurora-audit": Framing(),
    "azure-mysql-audit": Framing(),
    # one Cloud Logging entry a line; `import` and `parse` (the JVM's reader) gather a split entry's parts
    "cloudsql-mysql-audit": Framing(),
    "mcafee-json": Framing(),
    "syslog": Framing(),  # records in a syslog envelope, one message a line, each record's format told by it
}
FORMATS = list(FRAMING)  # in io.auditpipe.parser.AuditFormats' order; the config schema's enum too

# A line of each format looks like this (docs/formats.md); the first match wins. The XML formats
# differ only in the record id's name (Percona's plugin RECORD, MySQL Enterprise and Percona's
# audit_log_filter RECORD_ID), which is a line of its own.
_SIGNATURES = [
    ("percona-json", re.compile(rb'^\s*\{\s*"audit_record"\s*:')),
    ("mcafee-json", re.compile(rb'^\s*\{\s*"msg-type"\s*:')),
    # Cloud SQL for MySQL's audit entries in Cloud Logging (the request's type, or the plugin in the insertId)
    ("cloudsql-mysql-audit", re.compile(rb'^\s*\{.*(google\.cloud\.sql\.audit\.v1\.MysqlAuditEntry"|#cloudsql_mysql_audit#)')),
    # Azure Database for MySQL's diagnostic logs, in any of their spellings
    ("azure-mysql-audit", re.compile(rb'^\s*\{.*("(event_class(_s)?|EventClass)"\s*:|"MySqlAuditLogs")')),
    ("mysql-enterprise-json", re.compile(rb'^\s*(\{.*)?"class"\s*:\s*"')),
    ("percona-xml", re.compile(rb'^\s*(RECORD="|<RECORD>)')),
    ("mysql-enterprise-xml", re.compile(rb'^\s*(RECORD_ID="|<RECORD_ID>)')),
    ("percona-csv", re.compile(rb'^"[A-Za-z ]+","\d+_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d","')),
    # the default time (%Y%m%d %H:%i:%s) or another server_audit_timestamp_format without a comma
    ("mariadb-audit", re.compile(rb"^(\d{4})-?(\d{2})-?(\d{2})[ T](\d{2}):?(\d{2}):?(\d{2})(?:[.](\d{1,9}))? ?"
                                 rb"(Z|[+-]\d{2}:?\d{2})?,[^,]*,[^,]*,[^,]*,\d+,\d+,[A-Z_]+,")),
    # Aurora MySQL: epoch microseconds, maybe after the CloudWatch Logs export's own time
    ("aurora-audit", re.compile(rb"^(\d{4}-\d\d-\d\dT[^ ,]+Z )?\d{16},[^,]*,[^,]*,[^,]*,\d+,\d+,[A-Z_]+,")),
]


# What only syslog carries: MariaDB's record without its time (`[syslog_info ]serverhost,user,...`).
_ENVELOPED_SIGNATURES = [
    ("mariadb-audit", re.compile(rb"^[^,]*,[^,]*,[^,]*,\d+,\d+,[A-Z_]+,")),
]

# A syslog header in front of a record (io.auditpipe.parser.SyslogEnvelope reads it; docs/formats.md
# "Records in a syslog envelope"): RFC 5424 after <PRI>1 (or 1 alone, the priority taken off by a
# receiver), or an optional <PRI>, a time (Mmm dd [yyyy ]hh:mm:ss or RFC 3339), a host unless the
# next word is the tag, and a tag; or a tag alone.
_TAG = rb"[A-Za-z][A-Za-z0-9_.\-/]{0,64}(?:\[\d+\])?:"
_SYSLOG_HEADER = re.compile(
    rb"^(?:(?:<\d{1,3}>1 \S+|1 (?:-|\d{4}-\d\d-\d\dT\S+)) \S+ \S+ \S+ \S+ (?:-|(?:\[(?:[^\]\\]|\\.)*\])+) ?(?:\xef\xbb\xbf)?"
    rb"|(?:<\d{1,3}>)?(?:(?:[A-Z][a-z]{2} [ \d]?\d (?:\d{4} )?\d\d:\d\d:\d\d(?:\.\d{1,9})?"
    rb"|\d{4}-\d\d-\d\dT[^\s,]+) (?:(?!" + _TAG + rb" )[^\s,]+ )?)?" + _TAG + rb" ?"
    rb"|<\d{1,3}>(?:[A-Z][a-z]{2} [ \d]?\d (?:\d{4} )?\d\d:\d\d:\d\d(?:\.\d{1,9})? (?:\S+ )?)?)")
_ESCAPED = re.compile(rb"#0([0-3][0-7])")


def unwrap(line: bytes) -> bytes | None:
    """The record in a syslog envelope (its escaped newlines turned back where it is a multi-line
    record), or None when ``line`` has no syslog header."""
    m = _SYSLOG_HEADER.match(line)
    if not m or not m.group(0):
        return None
    body = line[m.end():]
    if body.lstrip(b" ")[:1] in (b"<", b'"') or body.lstrip(b" ")[:2] in (b"{#", b"[#"):
        body = _ESCAPED.sub(lambda e: bytes([int(e.group(1), 8)]), body)
    return body


def detect_line(line: bytes) -> str | None:
    """The format whose records have a line like ``line``, or None."""
    for name, signature in _SIGNATURES:
        if signature.match(line):
            return name
    return None


def detect_enveloped(line: bytes) -> str | None:
    """The format of the record in ``line``'s syslog envelope, or None (no envelope, or no record
    of a known format in it)."""
    body = unwrap(line)
    if body is None:
        return None
    for part in body.split(b"\n")[:20]:
        found = detect_line(part)
        if found:
            return found
    for name, signature in _ENVELOPED_SIGNATURES:
        if signature.match(body):
            return name
    return None


def detect_file(path: Path, max_lines: int = 20) -> tuple[str | None, str]:
    """(format, how it was decided) from the first non-empty lines of ``path`` (through gzip for a .gz name)."""
    try:
        with (gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")) as f:
            for n, line in enumerate(f, 1):
                if n > max_lines:
                    break
                line = line.rstrip(b"\n")
                if not line.strip():
                    continue
                found = detect_line(line)
                if found:
                    return found, f"line {n} of {path} looks like {found}"
                inside = detect_enveloped(line)
                if inside:
                    return "syslog", f"line {n} of {path} is a syslog message holding {inside}"
        return None, f"none of the first {max_lines} lines of {path} looks like a known format ({', '.join(FORMATS)})"
    except FileNotFoundError:
        return None, f"{path} does not exist yet"
    except (OSError, EOFError) as e:  # a .gz name on a file that is not gzip, or a truncated one
        return None, f"{path} cannot be read: {e}"


class Framer:
    """Cuts records out of lines (bytes, without their newlines) the way rsyslog frames them: each
    line a record, or a format's lines up to the one its end pattern matches, joined with LF."""

    def __init__(self, fmt: str):
        end = FRAMING[fmt].end
        self._end = re.compile(end) if end else None
        self._pending: list = []

    def add(self, line) -> list[list]:
        """The records (each a list of its lines) that ``line`` completes."""
        if self._end is None:
            return [[line]]
        self._pending.append(line)
        # the patterns are ASCII; latin-1 keeps every byte of a line as one character
        if self._end.search(bytes(line).decode("latin-1")):
            done, self._pending = self._pending, []
            return [done]
        return []

    def finish(self) -> list[list]:
        """The unfinished record left at the end of the input (e.g. a file's closing </AUDIT>)."""
        done, self._pending = self._pending, []
        return [done] if done else []


def frame(lines: list, fmt: str) -> list[list]:
    """All records of ``lines``, each a list of its lines, the rest at the end included."""
    framer, out = Framer(fmt), []
    for line in lines:
        out.extend(framer.add(line))
    return out + framer.finish()
