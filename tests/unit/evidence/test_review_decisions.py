"""Review decisions without a store: items, the reviewer's identity, notes, the days awaiting review, the
archive's copy giving the store's digests, a report's review rows (tests/e2e/test_reviews.py: against the store)."""

import json
import re
from datetime import date, datetime, timedelta, timezone

import pytest

from auditpipe import config
from auditpipe.errors import UserError
from auditpipe.evidence import report, reviews
from auditpipe.evidence.chain import canonical, link, verify_links

NOW = datetime(2026, 11, 29, 9, 30, tzinfo=timezone.utc)


@pytest.fixture
def cfg(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text("review: {regimes: [pci, sox]}\n")
    return config.load(f)


def test_items_are_days_of_reviewed_regimes_or_alerts(cfg):
    assert reviews.parse_item("day:pci:2026-11-28", cfg) == reviews.Item.day_of("pci", date(2026, 11, 28))
    assert reviews.parse_item("day:pci:2026-11-28", cfg).key == "day:pci:2026-11-28"
    assert reviews.parse_item("alert:brute_force/db-01/app/1", cfg).alert_id == "brute_force/db-01/app/1"
    with pytest.raises(UserError, match="review.regimes is pci, sox"):
        reviews.parse_item("day:hipaa:2026-11-28", cfg)
    with pytest.raises(UserError, match="not a date"):
        reviews.parse_item("day:pci:2026-02-30", cfg)
    for bad in ("day:pci:28.11.2026", "alert:", "2026-11-28", "day:pci:2026-11-28x", "alert"):
        with pytest.raises(UserError, match="is not an item"):
            reviews.parse_item(bad, cfg)


def test_the_reviewer_comes_from_the_flag_else_the_environment_and_must_be_one():
    name, identity = reviews.reviewer_identity("alice", {"AUDITPIPE_REVIEWER": "bob"})
    assert (name, identity["source"]) == ("alice", "flag") and identity["host"]
    name, identity = reviews.reviewer_identity(None, {"AUDITPIPE_REVIEWER": "bob"})
    assert (name, identity["source"]) == ("bob", "environment")
    with pytest.raises(UserError, match="give --reviewer NAME or set AUDITPIPE_REVIEWER"):
        reviews.reviewer_identity(None, {})
    for bad, why in ((" alice", "space"), ("", "empty"), ("a\x1b[2Jb", "control character"),
                     ("a\u202eb", "control character"), ("a\nb", "control character"),
                     ("x" * (reviews.reviewer_max() + 1), "more than")):
        with pytest.raises(UserError, match=why):
            reviews.reviewer_identity(bad, {})


def test_a_note_is_printable_text_bounded_and_required_unless_expected():
    reviews.check_note("", "expected")
    reviews.check_note("ticket SEC-1:\n\tpassword reset é ✓", "escalated")
    with pytest.raises(UserError, match="needs a note"):
        reviews.check_note("  ", "false_positive")
    with pytest.raises(UserError, match=r"control character \(\\x1b at character 2\)"):
        reviews.check_note("a\x1b[2Jb", "investigated")
    with pytest.raises(UserError, match="control character"):
        reviews.check_note("ok \u2066hidden", "investigated")
    with pytest.raises(UserError, match="control character"):
        reviews.check_note("lone \udc80 surrogate", "investigated")
    with pytest.raises(UserError, match=f"more than {reviews.note_max()}"):
        reviews.check_note("x" * (reviews.note_max() + 1), "investigated")


def test_outcomes_regimes_and_requirements_are_written_once():
    assert reviews.outcomes() == ("expected", "investigated", "escalated", "false_positive")
    schema = config.load_schema()["properties"]["review"]["properties"]["regimes"]
    assert tuple(schema["items"]["enum"]) == tuple(report.REGIMES) == reviews.regimes()
    assert set(reviews.REVIEW_REQUIREMENTS) <= set(report.REGIMES)


def test_the_days_awaiting_review_are_the_ended_days_since_the_first_with_evidence():
    since, until = NOW - timedelta(days=3), NOW
    assert reviews.ended_days(since, until, NOW, None) == [], "no evidence: nothing to review"
    assert reviews.ended_days(since, until, NOW, date(2026, 11, 1)) == [
        date(2026, 11, 26), date(2026, 11, 27), date(2026, 11, 28)], "the day in progress is not one"
    assert reviews.ended_days(since, until, NOW, date(2026, 11, 27)) == [date(2026, 11, 27), date(2026, 11, 28)]
    midnight = datetime(2026, 11, 28, tzinfo=timezone.utc)
    assert reviews.ended_days(midnight, midnight + timedelta(days=1), NOW, date(2026, 1, 1)) == [date(2026, 11, 28)]


def decisions(n: int) -> list[dict]:
    out, previous = [], ""
    for seq in range(1, n + 1):
        d = {"_id": f"decision/{seq}", "item": f"day:pci:2026-11-{seq:02d}", "kind": "day", "regime": "pci",
             "server": None, "item_time": datetime(2026, 11, seq), "reviewer": "alice",
             "identity": {"source": "flag", "os_user": "alice", "host": "h"},
             "decided_at": datetime(2026, 11, 28, 10, 0, 0, 123000), "outcome": "expected", "note": "é\nok",
             "chain_seq": seq}
        d["chain_digest"] = previous = link(previous, d)
        out.append(d)
    return out


def test_the_archives_copy_gives_the_stores_digests_and_an_edit_or_removal_shows():
    stored = decisions(3)
    copy = [json.loads(reviews.ledger_line(d)) for d in stored]
    assert [canonical(c) for c in copy] == [canonical(d) for d in stored]
    assert not verify_links(reviews.CHAIN_NAME, copy, {}).findings
    copy[1]["outcome"] = "false_positive"
    assert [(f.kind, f.seq) for f in verify_links(reviews.CHAIN_NAME, copy, {}).findings] == [("edited", 2)]
    found = verify_links(reviews.CHAIN_NAME, stored[:2], {}, expected_last=3, why="the archive holds link 3")
    assert [(f.kind, f.seq) for f in found.findings] == [("deleted", 3)]


def test_a_reports_review_rows_count_reviewed_days_and_decided_alerts(cfg):
    first = date(2026, 11, 20)
    made = [{"_id": "decision/1", "item": "day:pci:2026-11-27", "reviewer": "alice", "outcome": "expected",
             "note": "", "decided_at": NOW},
            {"_id": "decision/2", "item": "alert:a1", "reviewer": "bob", "outcome": "escalated", "note": "SEC-1",
             "decided_at": NOW},
            {"_id": "decision/3", "item": "day:sox:2026-11-27", "reviewer": "carol", "outcome": "expected", "note": "",
             "decided_at": NOW}]
    section = reviews.review_section(cfg, "pci", NOW - timedelta(days=3), NOW, NOW, made, [{"_id": "a1"}, {"_id": "a2"}],
                                     first)
    assert (section["days_reviewed"], section["days_total"]) == (1, 3)
    assert section["open_days"] == ["day:pci:2026-11-26", "day:pci:2026-11-28"]
    assert (section["alerts_decided"], section["alerts_total"], section["open_alerts"]) == (1, 2, ["alert:a2"])
    assert section["escalations"] == 1 and [d["_id"] for d in section["decisions"]] == ["decision/1", "decision/2"]
    rows = reviews.requirement_rows("pci", section)
    assert [(r["control"], r["events"], r["of"]) for r in rows] == [("PCI-DSS-10.4.1", 1, 3), ("PCI-DSS-10.4.3", 1, 2)]
    assert reviews.requirement_rows("hipaa", section) == []
    hipaa = reviews.review_section(cfg, "hipaa", NOW - timedelta(days=3), NOW, NOW, made, [], first)
    assert not hipaa["daily"] and hipaa["days_total"] == 0, "a regime not in review.regimes has no days to review"

    r = report.Report(report.REGIMES["pci"], NOW - timedelta(days=3), NOW, None, NOW)
    r.review_requirements, r.review = rows, section
    page = report.render_html(r)
    assert re.search(r'data-figure="control:PCI-DSS-10.4.1">1 of 3 days reviewed<', page)
    assert re.search(r'data-figure="reviewed-days">1 of 3<', page)
    evidence = json.loads(re.search(r'id="evidence">(.*?)</script>', page, re.S).group(1))
    assert evidence["review"]["days_reviewed"] == 1 and evidence["review_requirements"][0]["of"] == 3

