"""The audit log formats auditpipe reads, and telling them apart by a line.

The parsers are Java (io.auditpipe.parser.AuditFormats, the registry the job uses); this module
knows their names (the config schema's enum and `auditpipe parse` use the same list, a unit test
keeps the three in step) and how to recognize each from one line, for sources configured with
``format: auto`` and for `auditpipe parse` without --format. Detection is a fallback that says
what it chose; naming the format in the config is the way to be sure.
"""

from __future__ import annotations

import re
from pathlib import Path

FORMATS = ["percona-json", "mariadb-audit"]

# A line of each format starts like this (docs/formats.md); the first match wins.
_SIGNATURES = [
    ("percona-json", re.compile(rb'^\s*\{\s*"audit_record"\s*:')),
    ("mariadb-audit", re.compile(rb"^\d{8} \d{2}:\d{2}:\d{2},[^,]*,[^,]*,[^,]*,\d+,\d+,[A-Z_]+,")),
]


def detect_line(line: bytes) -> str | None:
    """The format whose records start like ``line``, or None."""
    for name, signature in _SIGNATURES:
        if signature.match(line):
            return name
    return None


def detect_file(path: Path, max_lines: int = 20) -> tuple[str | None, str]:
    """(format, how it was decided) from the first non-empty lines of ``path``."""
    try:
        with open(path, "rb") as f:
            for n, line in enumerate(f, 1):
                if n > max_lines:
                    break
                line = line.rstrip(b"\n")
                if not line.strip():
                    continue
                found = detect_line(line)
                if found:
                    return found, f"line {n} of {path} looks like {found}"
        return None, f"none of the first {max_lines} lines of {path} looks like a known format ({', '.join(FORMATS)})"
    except FileNotFoundError:
        return None, f"{path} does not exist yet"
