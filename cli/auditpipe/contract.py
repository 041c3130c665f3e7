"""What the CLI knows of the Flink job, read from the job's own account of it.

schemas/job-contract.json is printed by the job (``AuditPipelineJob --print-contract``) and kept
current by its JobContractTest: its options with types and defaults, the compliance keys, the alert
rules with their severities and controls, the evidence kinds, the dead-letter stages, the size limits the CLI derives
its own from, and where the event's fields are defined. Nothing here is copied by hand from the
job's code; the CLI's tests check every key it writes against this file.
"""

from __future__ import annotations

import functools
import json
import re

from auditpipe import paths

FILE = paths.SCHEMAS / "job-contract.json"


@functools.cache
def contract() -> dict:
    return json.loads(FILE.read_text())


def option_keys() -> frozenset[str]:
    """Every option key of the job."""
    return frozenset(o["key"] for o in contract()["options"])


def duration_seconds(key: str, job_options: dict) -> float:
    """A duration option of the job in seconds: ``job_options``' value (config flink.job_options), else the
    job's default (a Flink duration such as "1 min" or "2s"; a bare number is milliseconds). ValueError
    naming the key for one that is no duration."""
    text = str(job_options.get(key) or next(o["default"] for o in contract()["options"] if o["key"] == key))
    m = re.fullmatch(r"\s*([0-9]+)\s*(ms|s|sec|m|min|h)?\s*", text)
    if not m:
        raise ValueError(f"flink.job_options: {key} '{text}' is not a duration like 2s or 1 min")
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "sec": 1, None: 0.001, "m": 60, "min": 60, "h": 3600}[m.group(2)]


def alert_rules() -> tuple[str, ...]:
    """The names of the job's alert rules, in the job's order."""
    return tuple(r["rule"] for r in contract()["alert_rules"])


def rule(name: str) -> str:
    """An alert rule's name, checked against the job's rules: how the CLI writes one (a misspelt or
    removed rule is an error here, not a query that silently finds nothing)."""
    if name not in alert_rules():
        raise KeyError(f"the job has no alert rule {name!r} ({FILE.name}: {', '.join(alert_rules())})")
    return name


def evidence_kinds() -> dict[str, dict]:
    """The events the job keeps in the evidence collection, by kind: each kind's condition on the stored
    event document (one field, MongoDB's query language)."""
    return {k["kind"]: k["condition"] for k in contract()["evidence_kinds"]}


def alert_severities() -> tuple[str, ...]:
    return tuple(contract()["alert_severities"])


def record_gap_classes() -> dict[str, str]:
    """The classes of a record_gap alert (its ``gap_class``), each with the severity it raises, in the job's order."""
    return {c["class"]: c["severity"] for c in contract()["record_gap_classes"]}


def data_classes() -> tuple[str, ...]:
    return tuple(contract()["data_classes"])


def limit(name: str) -> int:
    """One of the job's size limits (bytes or counts), by its name in the contract."""
    return int(contract()["limits"][name])


def event_fields(group: str) -> tuple[str, ...]:
    """A group of the event document's fields: enrichment_fields or chain_fields."""
    return tuple(contract()["event"][group])


def _template_pattern(template: str) -> re.Pattern:
    """A compliance key template ("compliance.data-class.<class>.tables") as a pattern of the keys it stands for."""
    parts = re.split(r"<[a-z]+>", template)
    return re.compile("[^.]+".join(re.escape(p) for p in parts) + r"\Z")


def is_job_key(key: str) -> bool:
    """Whether the job reads ``key``: one of its options, a compliance key, or a key of a family
    the job passes on (``flink.<flink option>``, ``kafka.client.<property>``)."""
    if key in option_keys():
        return True
    if any(_template_pattern(k["key"]).match(key) for k in contract()["compliance_keys"]):
        return True
    families = [p["prefix"] for p in contract()["option_prefixes"] if p["prefix"] != "compliance."]
    return any(key.startswith(p) and len(key) > len(p) for p in families)


def compliance_key(template: str, **names: str) -> str:
    """A compliance key from its template in the contract, e.g. ("compliance.data-class.<class>.tables",
    class_="pci_cardholder"); raises if the template is not the job's."""
    if template not in {k["key"] for k in contract()["compliance_keys"]}:
        raise KeyError(f"{template} is not a compliance key of the job ({FILE.name})")
    key = template
    for name, value in names.items():
        key = key.replace(f"<{name.rstrip('_')}>", value)
    return key
