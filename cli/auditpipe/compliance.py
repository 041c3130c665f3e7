"""The config's ``compliance`` section as the job reads it: ``compliance.*`` job properties.

The job (io.auditpipe.enrich.ComplianceSettings) is where they mean something; this module only
writes them, for the running job (components/flink.py) and for ``auditpipe parse --enrich``, so
that both see exactly the same settings. docs/compliance.md is the reference.
"""

from __future__ import annotations

from auditpipe import paths
from auditpipe.config import Config

DATA_CLASSES = ("pci_cardholder", "hipaa_ephi", "sox_financial")


def job_properties(cfg: Config) -> dict[str, str]:
    c = cfg.data["compliance"]
    out: dict[str, str] = {}
    for name in DATA_CLASSES:
        dc = c["data_classes"][name]
        if dc["tables"]:
            out[f"compliance.data-class.{name}.tables"] = ",".join(dc["tables"])
        if "allowed_principals" in dc:
            out[f"compliance.data-class.{name}.allowed-principals"] = ",".join(dc["allowed_principals"])
    if c["principals"]["administrators"]:
        out["compliance.principals.administrators"] = ",".join(c["principals"]["administrators"])
    if c["principals"]["service_accounts"]:
        out["compliance.principals.service-accounts"] = ",".join(c["principals"]["service_accounts"])
    out["compliance.masking.pan"] = "true" if c["masking"]["pan"] else "false"
    for name, regex in c["masking"]["patterns"].items():
        out[f"compliance.masking.pattern.{name}"] = regex
    for key, option in (("change_windows", "compliance.change-windows"), ("business_hours", "compliance.business-hours")):
        if c[key]:
            out[option] = "; ".join(f"{','.join(w['days'])} {w['from']}-{w['to']} {w['timezone']}" for w in c[key])
    return out


def alert_job_properties(cfg: Config) -> dict[str, str]:
    """The config's ``alerts`` section as the job's ``alerts.*`` options (docs/job-options.md)."""
    a = cfg.data["alerts"]
    out = {
        "alerts.brute-force.failures": str(a["brute_force"]["failures"]),
        "alerts.brute-force.window": a["brute_force"]["window"],
        "alerts.password-spray.accounts": str(a["password_spray"]["accounts"]),
        "alerts.password-spray.window": a["password_spray"]["window"],
        "alerts.login-after-failures.failures": str(a["login_after_failures"]["failures"]),
        "alerts.login-after-failures.window": a["login_after_failures"]["window"],
        "alerts.unauthorized-access.window": a["unauthorized_access"]["window"],
        "alerts.allowed-lateness": a["allowed_lateness"],
        "alerts.record-gap.grace": a["record_gap"]["grace"],
    }
    if "webhook" in a:
        out.update({"alerts.webhook.url": a["webhook"]["url"], "alerts.webhook.timeout": a["webhook"]["timeout"],
                    "alerts.webhook.retries": str(a["webhook"]["retries"])})
    return out


def problems(cfg: Config) -> list[str]:
    """What the schema cannot check: time zones of the change windows and business hours."""
    from zoneinfo import available_timezones

    out = []
    zones = None
    for key in ("change_windows", "business_hours"):
        for i, w in enumerate(cfg.data["compliance"][key]):
            if w["timezone"] != "UTC":
                zones = zones or available_timezones()
                if w["timezone"] not in zones:
                    out.append(f"compliance.{key}[{i}].timezone: '{w['timezone']}' is not an IANA time zone name")
            if "*" in w["days"] and len(w["days"]) > 1:
                out.append(f"compliance.{key}[{i}].days: '*' means every day; list days or '*', not both")
    return out


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
