"""Every framework as data (cli/auditpipe/evidence/frameworks.py): the two tables are consistent with
the control tags and the job's alert rules, docs/compliance.md shows them as they are, and the
soc2 and nist reports take their requirements and control tags from them."""

from datetime import timedelta

from auditpipe import contract, paths
from auditpipe.evidence import frameworks, regimes, report


def test_the_tables_name_only_known_tags_rules_and_requirements_and_leave_nothing_unmapped():
    assert frameworks.problems() == []


def test_the_framework_keys_are_the_tables_and_the_alert_schemas():
    import json

    in_table = list(dict.fromkeys(fw for fw, _ in frameworks.requirements()))
    assert in_table == list(frameworks.FRAMEWORKS), "framework-requirements.csv lists them in FRAMEWORKS' order"
    # keys of the alerts' frameworks object: a store refuses a field name with a dot or a leading $
    assert all("." not in k and not k.startswith("$") for k in frameworks.FRAMEWORKS)
    schema = json.loads((paths.SCHEMAS / "alert.schema.json").read_text())
    assert schema["properties"]["frameworks"]["propertyNames"]["enum"] == list(frameworks.FRAMEWORKS)


def test_a_broken_row_is_named(tmp_path, monkeypatch):
    bad = tmp_path / "framework-map.csv"
    bad.write_text(frameworks.MAP_FILE.read_text() + "brute_force,nist-800-53,AU-99\nno_such_rule,soc2,CC6.1\n")
    monkeypatch.setattr(frameworks, "MAP_FILE", bad)
    frameworks.mapping.cache_clear()
    try:
        found = frameworks.problems()
    finally:
        frameworks.mapping.cache_clear()
    assert "framework-map.csv: brute_force has two rows for nist-800-53" in found
    assert "framework-map.csv: brute_force -> nist-800-53 'AU-99' is not in framework-requirements.csv" in found
    assert "framework-map.csv: 'no_such_rule' is neither a control tag nor an alert rule" in found


def test_a_rule_serves_what_its_controls_serve_and_what_its_own_rows_add():
    got = frameworks.of_subject("brute_force")
    assert got["pci-dss-v4"] == ["10.2.1.4"] and got["pci-dss-v3"] == ["10.2.4"]
    assert got["hipaa"] == ["164.308(a)(5)(ii)(C)"]
    assert got["nist-800-53"] == ["AC-7", "AU-2", "AU-6"]
    assert got["mitre-attack"] == ["T1110.001"]
    assert list(got) == [fw for fw in frameworks.FRAMEWORKS if fw in got], "in the frameworks' order"
    # integrity has no control tag: all of it is its own
    assert frameworks.of_subject("integrity")["pci-dss-v4"] == ["10.3.4"]
    for rule in contract.alert_rules():
        if rule not in frameworks.NOT_AN_ATTACK:
            assert frameworks.of_subject(rule)["mitre-attack"], rule
    assert "mitre-attack" not in frameworks.of_subject("review_overdue"), "a missed review is no attack technique"


def test_a_requirement_is_evidenced_by_the_tags_that_map_to_it():
    nist = {rid: tags for rid, _, tags in frameworks.requirement_tags("nist-800-53")}
    assert nist["AC-7"] == ["HIPAA-164.308(a)(5)(ii)(C)", "PCI-DSS-10.2.1.4"]
    assert "AU-6" not in nist, "review is what alerts serve, not a tag of an event"
    soc2 = [rid for rid, _, _ in frameworks.requirement_tags("soc2")]
    assert soc2 == ["CC6.1", "CC6.2", "CC6.3", "CC7.2", "CC8.1"]


def test_the_documented_tables_are_the_data_files():
    doc = (paths.REPO / "docs" / "compliance.md").read_text()
    assert frameworks.markdown() in doc, "docs/compliance.md's framework tables are stale: paste frameworks.markdown()"


def test_the_soc2_and_nist_reports_show_each_requirement_with_its_tags():
    t0 = report.datetime(2026, 11, 23, 10, 0, tzinfo=report.timezone.utc)
    for key in ("soc2", "nist"):
        regime = regimes.REGIMES[key]
        assert regime.mapped and regime.framework in frameworks.FRAMEWORKS
        assert set(regime.data_classes) == set(contract.data_classes())
        r = report.Report(regime, t0, t0 + timedelta(hours=1), None, t0)
        r.controls = [{"control": rid, "requirement": text, "events": 0, "tags": tags}
                      for rid, text, tags in frameworks.requirement_tags(regime.framework)]
        page = report.render_html(r)
        assert "evidenced by the control tags" in page
        assert "./auditpipe query events-by-control " not in page, "that query counts tags, not requirements"
    rows = [{"_id": {"controls": ["PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"], "user": "u", "category": "c",
                     "action": "a"}, "events": 5}]
    assert report.rows_for_control(rows, ["PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"])[0]["events"] == 5, \
        "an event with two of the tags counted once"
