"""The compliance controls (schemas/compliance-controls.csv) and the table of them in docs/compliance.md."""

from __future__ import annotations

from auditpipe import paths

CONTROLS_FILE = paths.SCHEMAS / "compliance-controls.csv"


def controls_markdown() -> str:
    """schemas/compliance-controls.csv as the table in docs/compliance.md (a test keeps them equal)."""
    import csv

    rows = list(csv.DictReader(CONTROLS_FILE.read_text().splitlines()))
    out = ["| control | framework | requirement | an event evidences it when |", "|---|---|---|---|"]
    for r in rows:
        when = " and ".join(f"{k.strip()} is {' or '.join(f'`{v}`' for v in vals.split('|'))}"
                            for k, vals in (c.strip().split("=", 1) for c in r["when"].split("&")))
        out.append(f"| {r['control']} | {r['framework']} | {r['requirement']} | {when} |")
    return "\n".join(out) + "\n"
