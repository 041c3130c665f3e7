"""Every framework as data: each control tag (schemas/compliance-controls.csv) and each alert rule
mapped to the requirements of PCI DSS v4.0 and v3.2.1, HIPAA, SOX ITGC, NIST SP 800-53, SOC 2,
GDPR and MITRE ATT&CK (docs/compliance.md "Frameworks").

- schemas/framework-requirements.csv: each requirement of a framework once (framework, id, text);
- schemas/framework-map.csv: a subject (a control tag or an alert rule) and the ids of one framework
  it serves. A rule serves what its controls serve (the job's alert_rules) and what its own rows add.

Events carry their control tags; a requirement of another framework is evidenced by the events
whose tags map to it (`requirement_tags`), which is how the soc2 and nist reports read them.
"""

from __future__ import annotations

import csv
import functools

from auditpipe import contract, paths

REQUIREMENTS_FILE = paths.SCHEMAS / "framework-requirements.csv"
MAP_FILE = paths.SCHEMAS / "framework-map.csv"
#: alert rules about the review process, not an adversary's behaviour: no MITRE ATT&CK technique is theirs
NOT_AN_ATTACK = (contract.rule("review_overdue"),)

FRAMEWORKS = {  # key: name, in the order the docs and alerts list them
    "pci-dss-v4": "PCI DSS v4.0",
    "pci-dss-v3": "PCI DSS v3.2.1",
    "hipaa": "HIPAA Security Rule",
    "sox-itgc": "SOX ITGC",
    "nist-800-53": "NIST SP 800-53 Rev. 5",
    "soc2": "SOC 2 Trust Services Criteria (2017)",
    "gdpr": "GDPR",
    "mitre-attack": "MITRE ATT&CK Enterprise",
}


def _rows(path) -> list[dict]:
    return list(csv.DictReader(path.read_text().splitlines()))


@functools.cache
def requirements() -> dict[tuple[str, str], str]:
    """(framework, id) -> the requirement's text, in the file's order."""
    return {(r["framework"], r["id"]): r["requirement"] for r in _rows(REQUIREMENTS_FILE)}


@functools.cache
def mapping() -> dict[str, dict[str, tuple[str, ...]]]:
    """subject -> framework -> ids, as schemas/framework-map.csv says (a rule without its controls')."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for r in _rows(MAP_FILE):
        out.setdefault(r["subject"], {})[r["framework"]] = tuple(r["ids"].split("|"))
    return out


def _ordered(fw: str, ids) -> list[str]:
    order = [i for (f, i) in requirements() if f == fw]
    return sorted(set(ids), key=lambda i: order.index(i) if i in order else len(order))


def of_subject(subject: str) -> dict[str, list[str]]:
    """A control tag's requirements, or an alert rule's (its controls' and its own), by framework in
    FRAMEWORKS' order."""
    rules = {r["rule"]: r for r in contract.contract()["alert_rules"]}
    subjects = [subject] + (list(rules[subject]["controls"]) if subject in rules else [])
    merged: dict[str, set[str]] = {}
    for s in subjects:
        for fw, ids in mapping().get(s, {}).items():
            merged.setdefault(fw, set()).update(ids)
    return {fw: _ordered(fw, merged[fw]) for fw in FRAMEWORKS if fw in merged}


def requirement_tags(framework: str) -> list[tuple[str, str, list[str]]]:
    """(id, requirement, control tags that evidence it) for each requirement of ``framework`` that
    some control tag maps to, in the order of framework-requirements.csv."""
    tags = {t for t in mapping() if t not in contract.alert_rules()}
    out = []
    for (fw, rid), text in requirements().items():
        if fw != framework:
            continue
        evidencing = sorted(t for t in tags if rid in mapping()[t].get(framework, ()))
        if evidencing:
            out.append((rid, text, evidencing))
    return out


def problems() -> list[str]:
    """What is wrong with the two tables, each a sentence (tests/unit/evidence/test_frameworks.py)."""
    from auditpipe.evidence.controls import CONTROLS_FILE

    out = []
    controls = {r["control"]: r for r in _rows(CONTROLS_FILE)}
    rules = set(contract.alert_rules())
    for (fw, _rid) in requirements():
        if fw not in FRAMEWORKS:
            out.append(f"{REQUIREMENTS_FILE.name}: unknown framework {fw!r} (known: {', '.join(FRAMEWORKS)})")
    seen = set()
    for r in _rows(MAP_FILE):
        key = (r["subject"], r["framework"])
        if key in seen:
            out.append(f"{MAP_FILE.name}: {r['subject']} has two rows for {r['framework']}")
        seen.add(key)
        if r["subject"] not in controls and r["subject"] not in rules:
            out.append(f"{MAP_FILE.name}: {r['subject']!r} is neither a control tag nor an alert rule")
        for rid in r["ids"].split("|"):
            if (r["framework"], rid) not in requirements():
                out.append(f"{MAP_FILE.name}: {r['subject']} -> {r['framework']} {rid!r} is not in {REQUIREMENTS_FILE.name}")
    own = {name: key for key, name in FRAMEWORKS.items()}  # compliance-controls.csv names a framework by its name
    for tag, row in controls.items():
        fws = mapping().get(tag, {})
        key = own.get(row["framework"])
        if key is None:
            out.append(f"control {tag}: its framework {row['framework']!r} has no key here")
        elif len(fws.get(key, ())) != 1:
            out.append(f"control {tag}: one {key} requirement expected, found {fws.get(key, ())}")
        elif key != "sox-itgc" and not row["requirement"].startswith(fws[key][0] + " "):
            out.append(f"control {tag}: its requirement {row['requirement']!r} is not {key} {fws[key][0]}")
        for fw in ("nist-800-53", "soc2"):
            if fw not in fws:
                out.append(f"control {tag}: no {fw} requirement")
    for rule in rules:
        if "mitre-attack" not in of_subject(rule) and rule not in NOT_AN_ATTACK:
            out.append(f"alert rule {rule}: no MITRE ATT&CK technique")
        if "nist-800-53" not in of_subject(rule):
            out.append(f"alert rule {rule}: no NIST SP 800-53 control")
    used = {(fw, i) for s in mapping().values() for fw, ids in s.items() for i in ids}
    for key in requirements():
        if key not in used:
            out.append(f"{REQUIREMENTS_FILE.name}: {key[0]} {key[1]} is mapped from nothing")
    return out


def markdown() -> str:
    """The two tables as docs/compliance.md shows them: each control tag and each alert rule with its
    requirements per framework, then each requirement's text (a test keeps the doc equal)."""
    from auditpipe.evidence.controls import CONTROLS_FILE

    subjects = list(dict.fromkeys(r["control"] for r in _rows(CONTROLS_FILE))) + list(contract.alert_rules())
    head = "| control tag or alert rule | " + " | ".join(FRAMEWORKS.values()) + " |"
    out = [head, "|---" * (len(FRAMEWORKS) + 1) + "|"]
    for s in subjects:
        ids = of_subject(s)
        name = f"`{s}` (rule)" if s in contract.alert_rules() else s
        out.append(f"| {name} | " + " | ".join(", ".join(ids.get(fw, [])) for fw in FRAMEWORKS) + " |")
    out += ["", "| framework | id | requirement |", "|---|---|---|"]
    for (fw, rid), text in requirements().items():
        out.append(f"| {FRAMEWORKS[fw]} | {rid} | {text} |")
    return "\n".join(out) + "\n"
