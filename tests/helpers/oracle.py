"""The test oracle: what the pipeline must make of an audit line, written here from the docs and
the plugins' formats, independently of the job's parser (a field lost, renamed, mistyped or taken
from another record fails the test that compares). The event's field names are those of
schemas/audit-event.schema.json; tests/unit/test_contract.py checks this module against it.
"""

from __future__ import annotations

import json
from pathlib import Path

from auditpipe import contract

# the fields enrichment adds to an event (the job's EventDocument.ENRICHMENT_FIELDS) and its categories
ENRICHMENT_FIELDS = contract.event_fields("enrichment_fields")
ENRICHED_CATEGORIES = ("authentication", "account_management", "schema_change", "data_read", "data_write",
                       "administration", "audit_system", "session", "other")

_STRING_FIELDS = ("command_class", "sqltext", "user", "priv_user", "os_user", "os_login", "proxy_user", "host",
                  "ip", "db")


_PAN_RUN = None
US_SSN = r"(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])"  # the config's default masking pattern


def _luhn_pan(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0 and digits[0] in "23456"


def mask_sensitive(text: str) -> tuple[str, list[str]]:
    """docs/compliance.md's masking, written here from the docs: card numbers (13-19 digits in groups
    split by single spaces or hyphens, Luhn-valid, first digit 2-6: all digits but the last four
    become '*'), the secrets of account statements (_mask_account_secrets) and the default us_ssn
    pattern (every digit '*'). Returns the text and what was found."""
    import re

    global _PAN_RUN
    _PAN_RUN = _PAN_RUN or re.compile(r"(?<![0-9])[0-9](?:[ -]?[0-9]){12,}(?![0-9])")
    chars = list(text)
    found = set()
    for m in _PAN_RUN.finditer(text):
        groups = [(g.start() + m.start(), g.end() + m.start()) for g in re.finditer(r"[0-9]+", m.group())]
        g = 0
        while g < len(groups):
            best = None
            for h in range(g, len(groups)):
                digits = "".join(text[a:b] for a, b in groups[g:h + 1])
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and _luhn_pan(digits):
                    best = h
            if best is None:
                g += 1
                continue
            positions = [i for a, b in groups[g:best + 1] for i in range(a, b)]
            for i in positions[:-4]:
                chars[i] = "*"
            found.add("pan")
            g = best + 1
    text = "".join(chars)
    text, secret = _mask_account_secrets(text)
    if secret:
        found.add("credentials")
    for m in re.finditer(US_SSN, text):
        text = text[:m.start()] + "".join("*" if c.isalnum() else c for c in m.group()) + text[m.end():]
        found.add("us_ssn")
    return text, sorted(found)


def _mask_account_secrets(text: str) -> tuple[str, bool]:
    """docs/compliance.md "Masking", credentials: after IDENTIFIED, or a word ending in PASSWORD that
    takes a value (= or ( or a quote or FOR next), the first quoted literal within 160 characters and
    before , ; or ) has everything between its quotes masked. Written for the quotes the simulator's
    JSON lines carry: ' and " (a backslash escapes, a doubled quote is one)."""
    import re

    chars, found = list(text), False
    resume = 0
    for k in re.finditer(r"(?i)(?<![\w])identified(?=[\s=(]|$)|password(?=[\s=(]|$)", text):
        start = k.end()
        if k.start() < resume:
            continue  # inside the literal masked last
        if k.group().lower().endswith("password"):
            rest = text[start:]
            after_for = re.match(r"(?i)\s*for\b([^;=]{0,160})=", rest)
            if after_for:
                start += after_for.end()
            elif not re.match(r"\s*[=('\"]", rest):
                continue  # a column read, not a value
        # a literal starts a value: its quote after a space, '=' or '(' (MariaDB's own "BY *****'" is no literal)
        m = re.match(r"[^,;)]{0,160}?(?:(?<=[\s=(])|^)(\\?['\"])", text[start:start + 161])
        if not m:
            continue
        token, i = m.group(1), start + m.end()
        if len(token) == 2:  # \' or \" (an escaped quote opens it: the same closes it)
            close = text.find(token, i)
            close = len(text) if close < 0 else close
            if close > i:
                chars[i:close] = "*" * (close - i)
                found, resume = True, close
            continue
        quote = token
        opened = i
        while i < len(text):
            if text[i] == "\\":
                chars[i] = "*"
                if i + 1 < len(text):
                    chars[i + 1] = "*"
                i += 2
                continue
            if text[i] == quote:
                if text[i + 1:i + 2] == quote:
                    chars[i] = chars[i + 1] = "*"
                    i += 2
                    continue
                break
            chars[i] = "*"
            i += 1
        if i > opened:  # an empty literal hides nothing
            found, resume = True, i
    return "".join(chars), found


def expected_document(server: str, log_path: Path, collector: str, line: bytes) -> dict | None:
    """The document a Percona JSON line must become (schemas/audit-event.schema.json); None for a
    line that is not a readable record (those are dead letters, checked elsewhere). Sensitive data
    is masked in the line first (mask_sensitive): the store holds the masked line and its digest."""
    import hashlib
    import re
    from datetime import datetime

    masked_text, masked = mask_sensitive(line.decode("latin-1"))
    line = masked_text.encode("latin-1")
    try:
        rec = json.loads(line)["audit_record"]
        record_id, name, ts = rec["record"], rec["name"], rec["timestamp"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    # what the plugin writes: text fields as strings, status and connection_id as integers (or digits)
    if not all(isinstance(rec.get(k), (str, type(None))) for k in ("record", "name", "timestamp", *_STRING_FIELDS)):
        return None
    if not record_id or not name:
        return None
    if not all(isinstance(rec.get(k), (int, type(None))) or str(rec.get(k)).isdigit()
               for k in ("status", "connection_id")):
        return None
    try:
        event_time = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S UTC")
    except (TypeError, ValueError):
        return None
    doc = {"_id": f"{server}/{record_id}", "server": server, "format": "percona-json", "source_file": str(log_path),
           "collector": collector, "record_id": record_id, "event_name": name, "event_time": event_time,
           "line_sha256": hashlib.sha256(line).hexdigest(), "original": line.decode("utf-8")}
    extra = {}
    for k, v in rec.items():
        if k in ("record", "name", "timestamp"):
            continue
        if k in ("status", "connection_id"):
            doc[k] = int(v)
        elif k in _STRING_FIELDS:
            doc[k] = v
        else:
            extra[k] = v
    if extra:
        doc["extra"] = extra
    account = re.fullmatch(r"([^\[]*)\[([^\]]*)\] @ (\S*) \[([^\]]*)\]", doc.get("user", ""))
    if account:  # the account string of query events: user[priv_user] @ host [ip]
        doc["user_raw"] = doc["user"]
        doc["user"] = account.group(1)
        for field, value in zip(("priv_user", "host", "ip"), account.groups()[1:]):
            doc[field] = doc.get(field) or value
    if name in ("Connect", "Change user"):
        doc["auth_outcome"] = "success" if doc.get("status", 0) == 0 else "failure"
    if masked:
        doc["masked"] = masked
    return _with_outcome(doc)


def expected_enterprise_document(server: str, log_path: Path, collector: str, line: bytes) -> dict:
    """The document a MySQL Enterprise Audit JSON record (one per line, as the simulator's expected
    file holds them) must become, after docs/formats.md's mapping table, written here independently
    of the job's parser."""
    from datetime import datetime

    def text(v):  # what the parser keeps in extra: scalars as text, objects and arrays as compact JSON
        if isinstance(v, (dict, list)):
            return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        return v if isinstance(v, str) else json.dumps(v)

    rec = json.loads(line)
    record_id = rec["timestamp"].replace(" ", "T") + f"_{rec['id']}"
    event = rec.get("event") or rec["class"]
    doc = {"_id": f"{server}/{record_id}", "server": server, "format": "mysql-enterprise-json",
           "source_file": str(log_path), "collector": collector, "record_id": record_id, "event_name": event,
           "event_time": datetime.strptime(rec["timestamp"], "%Y-%m-%d %H:%M:%S"), "line_sha256": None,
           "original": None}
    extra = {}
    for k, v in rec.items():
        if k in ("timestamp", "id", "event"):
            continue
        if k == "class":
            extra["class"] = v
        elif k == "connection_id":
            doc["connection_id"] = int(v)
        elif k == "account":
            doc["priv_user"] = v["user"]
            extra["priv_host"] = v["host"]
        elif k == "login":
            doc.update(user=v["user"], os_login=v["os"], ip=v["ip"], proxy_user=v["proxy"])
        elif k.endswith("_data") and isinstance(v, dict):
            rest = {}
            for field, value in v.items():
                if field == "status":
                    doc["status"] = int(value)
                elif field in ("db", "query", "sql_command"):
                    doc[{"db": "db", "query": "sqltext", "sql_command": "command_class"}[field]] = value
                elif field == "table":
                    extra["table"] = value
                else:
                    rest[field] = value
            if rest:  # the object's other fields, as one JSON object (no dotted keys: the store refuses them)
                extra[k] = text(rest)
        else:
            extra[k] = text(v)
    doc["extra"] = extra
    if rec["class"] == "connection" and event in ("connect", "change_user"):
        doc["auth_outcome"] = "success" if doc.get("status", 0) == 0 else "failure"
    return _with_outcome(doc)


def _with_outcome(doc: dict) -> dict:
    """PCI DSS 10.2.2's success or failure, for every event that says: the login's, else by status."""
    if "auth_outcome" in doc or "status" in doc:
        doc["outcome"] = doc.get("auth_outcome") or ("success" if doc["status"] == 0 else "failure")
    return doc
