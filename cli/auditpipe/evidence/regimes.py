"""The reviews a report is for (`auditpipe report pci|hipaa|sox|soc2|nist`, docs/reports.md): each
regime's title, framework, data classes and the retention it asks. The reports and the reviews
(which day of which regime awaits a decision) both read them here."""

from __future__ import annotations

from dataclasses import dataclass

from auditpipe import contract


@dataclass(frozen=True)
class Regime:
    key: str
    title: str
    framework: str  # as in schemas/compliance-controls.csv
    data_classes: tuple[str, ...]
    keep_days: int  # how long the regime asks audit records to be kept
    immediate_days: int | None  # of which immediately available (hot), where it says
    retention_basis: str
    # its requirements are another framework's (auditpipe.evidence.frameworks), each evidenced by the
    # events carrying any control tag mapped to it; ``framework`` is then that framework's key
    mapped: bool = False


REGIMES = {
    "pci": Regime("pci", "PCI DSS v4.0 Requirement 10: audit log evidence", "PCI DSS v4.0", ("pci_cardholder",),
                  365, 90, "PCI DSS v4.0 10.5.1: audit log history retained for at least 12 months, the most "
                  "recent three months immediately available for analysis"),
    "hipaa": Regime("hipaa", "HIPAA Security Rule 164.312(b): audit controls evidence", "HIPAA Security Rule",
                    ("hipaa_ephi",), 6 * 365, None, "HIPAA 164.316(b)(2)(i): documentation retained six years "
                    "(commonly applied to audit records; the rule sets no period for the logs themselves)"),
    "sox": Regime("sox", "SOX IT general controls: access and change evidence", "SOX ITGC", ("sox_financial",),
                  7 * 365, None, "SOX section 802 and SEC Rule 2-06: records relevant to an audit retained seven "
                  "years (commonly applied to the audit trail of financial systems)"),
    "soc2": Regime("soc2", "SOC 2 Trust Services Criteria: logical access, monitoring and change evidence", "soc2",
                   contract.data_classes(), 365, None, "SOC 2 sets no retention period; a Type II report covers an "
                   "observation period of up to twelve months, whose records are commonly kept a year", mapped=True),
    "nist": Regime("nist", "NIST SP 800-53 Rev. 5, AU and AC families: audit evidence", "nist-800-53",
                   contract.data_classes(), 30 * 365 // 12, 365, "NIST SP 800-53 AU-11 leaves the period to the "
                   "organization; OMB M-21-31 asks federal agencies for 12 months in active storage and 18 more "
                   "in cold storage", mapped=True),
}
