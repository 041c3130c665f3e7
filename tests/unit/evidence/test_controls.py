"""docs/compliance.md shows the control mapping the job reads (schemas/compliance-controls.csv)."""

from auditpipe import paths
from auditpipe.evidence.controls import controls_markdown


def test_the_documented_control_table_is_the_data_file():
    doc = (paths.REPO / "docs" / "compliance.md").read_text()
    assert controls_markdown() in doc, "docs/compliance.md's table is stale: paste auditpipe.compliance.controls_markdown()"
