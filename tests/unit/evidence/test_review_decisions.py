"""Review decisions without a store: items, the reviewer's identity, notes, the days awaiting review, the
archive's copy giving the store's digests, a report's review rows (tests/e2e/evidence/test_reviews.py: against the store)."""

import json
import re
from datetime import date, datetime, timedelta, timezone

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from auditpipe import config
from auditpipe.errors import UserError
from auditpipe.evidence import regimes, report, reviewer_keys, reviews
from auditpipe.evidence.chain import canonical, link, verify_links

NOW = datetime(2026, 11, 29, 9, 30, tzinfo=timezone.utc)


@pytest.fixture
def cfg(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text(f"state_dir: {tmp_path / 'state'}\nreview: {{regimes: [pci, sox]}}\n")
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


def test_the_reviewer_is_the_name_their_enrolled_key_was_given(cfg, tmp_path):
    with pytest.raises(UserError, match="no reviewer's key at .*review enroll NAME"):
        reviews.reviewer_identity(cfg, tmp_path / "none.key", {})
    enrolled, made = reviewer_keys.enroll(cfg.reviewers_file, "alice", tmp_path / "alice.key")
    assert made and (tmp_path / "alice.key").stat().st_mode & 0o777 == 0o600
    name, identity, _ = reviews.reviewer_identity(cfg, None, {reviewer_keys.KEY_ENV: str(tmp_path / "alice.key")})
    assert (name, identity["source"], identity["key_id"]) == ("alice", "key", enrolled.key_id) and identity["host"]
    with pytest.raises(UserError, match="enrolled already, as alice"):
        reviewer_keys.enroll(cfg.reviewers_file, "mallory", tmp_path / "alice.key")
    printed, made = reviewer_keys.enroll(None, "bob", tmp_path / "bob.key")  # --print: nothing enrolled
    assert made and not (tmp_path / "elsewhere").exists()
    (tmp_path / "elsewhere").write_text(reviewer_keys.line(printed) + "\n")
    assert reviewer_keys.load_reviewers(tmp_path / "elsewhere")[printed.key_id].name == "bob", "the line as printed"
    with pytest.raises(UserError, match="not an enrolled reviewer's"):
        reviews.reviewer_identity(cfg, tmp_path / "bob.key", {})
    for bad in (" alice", "", "a\x1b[2Jb", "a\u202eb", "a\nb", "<b>", "x" * 201):
        with pytest.raises(UserError, match="is not a reviewer's name"):
            reviewer_keys.enroll(cfg.reviewers_file, bad, tmp_path / "c.key")
    cfg.reviewers_file.write_text(cfg.reviewers_file.read_text() + "eve ed25519 not-base64\n")
    with pytest.raises(UserError, match="line 2: a reviewer's key is a line 'NAME ed25519 BASE64'"):
        reviewer_keys.load_reviewers(cfg.reviewers_file)


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
    assert tuple(schema["items"]["enum"]) == tuple(regimes.REGIMES) == reviews.regimes()
    assert set(reviews.REVIEW_REQUIREMENTS) <= set(regimes.REGIMES)


def test_the_days_awaiting_review_are_the_ended_days_since_the_first_with_evidence():
    since, until = NOW - timedelta(days=3), NOW
    assert reviews.ended_days(since, until, NOW, None) == [], "no evidence: nothing to review"
    assert reviews.ended_days(since, until, NOW, date(2026, 11, 1)) == [
        date(2026, 11, 26), date(2026, 11, 27), date(2026, 11, 28)], "the day in progress is not one"
    assert reviews.ended_days(since, until, NOW, date(2026, 11, 27)) == [date(2026, 11, 27), date(2026, 11, 28)]
    midnight = datetime(2026, 11, 28, tzinfo=timezone.utc)
    assert reviews.ended_days(midnight, midnight + timedelta(days=1), NOW, date(2026, 1, 1)) == [date(2026, 11, 28)]


def decisions(n: int, key=None, times=None) -> list[dict]:
    """``n`` decisions as `review decide` writes them, signed with ``key`` (an Ed25519 private key) if given."""
    out, previous = [], ""
    for seq in range(1, n + 1):
        d = {"_id": f"decision/{seq}", "item": f"day:pci:2026-11-{seq:02d}", "kind": "day", "regime": "pci",
             "server": None, "item_time": datetime(2026, 11, seq), "reviewer": "alice",
             "identity": {"source": "key", "key_id": reviewer_keys.key_id(key.public_key()) if key else "0" * 16,
                          "os_user": "alice", "host": "h"},
             "decided_at": (times or {}).get(seq, datetime(2026, 11, 28, 10, 0, 0, 123000)), "outcome": "expected",
             "note": "é\nok", "chain_seq": seq}
        if key:
            d["signature"] = reviewer_keys.sign(key, d)
        d["chain_digest"] = previous = link(previous, d)
        out.append(d)
    return out


def relink(docs: list[dict]) -> None:
    previous = ""
    for d in docs:
        d["chain_digest"] = previous = link(previous, d)


def test_a_decision_counts_only_as_its_reviewers_key_signed_it(cfg, tmp_path):
    reviewer_keys.enroll(cfg.reviewers_file, "alice", tmp_path / "alice.key")
    reviewer_keys.enroll(cfg.reviewers_file, "bob", tmp_path / "bob.key")
    alice, bob = (reviewer_keys.load_private_key(tmp_path / f"{n}.key") for n in ("alice", "bob"))
    enrolled = reviewer_keys.load_reviewers(cfg.reviewers_file)
    good = decisions(3, alice)
    assert [reviewer_keys.check(d, enrolled) for d in good] == [None] * 3
    copy = [json.loads(reviews.ledger_line(d)) for d in good]
    assert [reviewer_keys.check(d, enrolled) for d in copy] == [None] * 3, "the copy's lines verify as the store's"

    unsigned = decisions(1)[0]
    assert "not signed" in reviewer_keys.check(unsigned, enrolled)
    edited = dict(good[0], outcome="false_positive")
    assert "does not verify" in reviewer_keys.check(edited, enrolled)
    renamed = dict(good[1], reviewer="bob")  # alice's signature claimed for bob: the name is part of what is signed
    assert "signed with alice's key" in reviewer_keys.check(renamed, enrolled)
    forged = decisions(1, bob)[0]  # bob signs a decision naming alice
    assert "signed with bob's key" in reviewer_keys.check(forged, enrolled)
    stranger = decisions(1, ed25519.Ed25519PrivateKey.generate())[0]
    assert "not an enrolled reviewer's" in reviewer_keys.check(stranger, enrolled)

    # verify's findings: a forged decision in the chain, linked correctly, is FORGED by name
    chain = decisions(3, alice)
    chain[2] = dict(chain[2], outcome="escalated", note="forged")
    relink(chain)
    found = reviews._forged(chain, enrolled, cfg.reviewers_file)
    assert [(f.kind, f.seq) for f in found] == [("forged", 3)] and "alice" in found[0].detail
    assert not verify_links(reviews.CHAIN_NAME, chain, {}).findings, "the links alone cannot tell"


def test_a_decision_dated_before_what_the_store_took_first_is_backdated():
    t = datetime(2026, 11, 28, 10, tzinfo=timezone.utc)
    kept = decisions(3, times={1: t, 2: t + timedelta(minutes=1), 3: t + timedelta(minutes=2)})
    assert reviews.backdated(kept, {}) == []
    skewed = decisions(3, times={1: t, 2: t + timedelta(minutes=10), 3: t + timedelta(minutes=6)})
    assert reviews.backdated(skewed, {}) == [], "within CLOCK_SKEW_S of the link before: two clocks"
    late = decisions(3, times={1: t, 2: t + timedelta(hours=2), 3: t - timedelta(days=1)})
    found = reviews.backdated(late, {})
    assert [(f.kind, f.seq) for f in found] == [("backdated", 3)] and "link 2" in found[0].detail
    overdue = {"day:pci:2026-11-02": reviews._plain(t + timedelta(hours=1))}
    found = reviews.backdated(decisions(2, times={1: t - timedelta(hours=1), 2: t}), overdue)
    assert [(f.kind, f.seq) for f in found] == [("backdated", 2)] and "review_overdue" in found[0].detail


def test_an_emptied_place_is_a_deletion_unless_retention_explains_it(cfg):
    held = decisions(3, times={s: NOW - timedelta(days=2) for s in (1, 2, 3)})
    f = reviews._emptied(cfg, "store", [], held, NOW)
    assert (f.kind, f.seq, f.last_seq) == ("deleted", 1, 3)
    assert reviews._emptied(cfg, "copy", [], held, NOW).kind == "deleted"
    old = decisions(3, times={s: NOW - timedelta(days=cfg.store["evidence_retention_days"] + 1) for s in (1, 2, 3)})
    assert reviews._emptied(cfg, "store", [], old, NOW) is None, "the store's retention removed them"
    assert reviews._emptied(cfg, "copy", [], old, NOW).kind == "deleted", "the copy keeps every decision"
    assert reviews._emptied(cfg, "store", held, held, NOW) is None


class _Coll:
    """The reviews collection as sync_ledger reads it: find by chain_seq."""

    def __init__(self, docs):
        self.docs = docs

    def find(self, query):
        return [d for d in self.docs if d["chain_seq"] > query["chain_seq"]["$gt"]]


def test_the_copy_takes_a_decision_only_once_it_checks_its_link_and_signature(cfg, tmp_path):
    reviewer_keys.enroll(cfg.reviewers_file, "alice", tmp_path / "alice.key")
    alice = reviewer_keys.load_private_key(tmp_path / "alice.key")
    ledger = tmp_path / "decisions.jsonl"
    cfg.data["review"]["ledger_file"] = str(ledger)
    chain = decisions(4, alice)
    assert reviews.sync_ledger(cfg, _Coll(chain[:2])) == 2
    chain[2] = dict(chain[2], note="forged")  # a store user's edit, linked again
    relink(chain)
    with pytest.raises(UserError, match="takes no decision after link 2: link 3 .*does not verify"):
        reviews.sync_ledger(cfg, _Coll(chain))
    assert len(ledger.read_text().splitlines()) == 2, "nothing after the forged link"
    broken = decisions(4, alice)
    broken[2]["chain_digest"] = "0" * 64
    with pytest.raises(UserError, match="link 3 .*does not follow"):
        reviews.sync_ledger(cfg, _Coll(broken))
    good = decisions(4, alice)
    assert reviews.sync_ledger(cfg, _Coll(good)) == 2 and len(ledger.read_text().splitlines()) == 4


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

    r = report.Report(regimes.REGIMES["pci"], NOW - timedelta(days=3), NOW, None, NOW)
    r.review_requirements, r.review = rows, section
    page = report.render_html(r)
    assert re.search(r'data-figure="control:PCI-DSS-10.4.1">1 of 3 days reviewed<', page)
    assert re.search(r'data-figure="reviewed-days">1 of 3<', page)
    evidence = json.loads(re.search(r'id="evidence">(.*?)</script>', page, re.S).group(1))
    assert evidence["review"]["days_reviewed"] == 1 and evidence["review_requirements"][0]["of"] == 3


def test_a_decision_that_does_not_verify_counts_for_nothing_in_a_report(cfg):
    made = [{"_id": "decision/1", "item": "day:pci:2026-11-27", "reviewer": "alice", "outcome": "expected",
             "note": "", "decided_at": NOW}]
    section = reviews.review_section(cfg, "pci", NOW - timedelta(days=3), NOW, NOW, made, [], date(2026, 11, 20),
                                     {"decision/1": "not signed by a reviewer's key"})
    assert (section["days_reviewed"], section["days_total"]) == (0, 3) and section["decisions"] == []
    assert section["not_counted"] == [{"_id": "decision/1", "reviewer": "alice", "item": "day:pci:2026-11-27",
                                       "why": "not signed by a reviewer's key"}]
    r = report.Report(regimes.REGIMES["pci"], NOW - timedelta(days=3), NOW, None, NOW)
    r.review_requirements, r.review = reviews.requirement_rows("pci", section), section
    page = report.render_html(r)
    assert re.search(r'data-figure="control:PCI-DSS-10.4.1">0 of 3 days reviewed<', page)
    assert 'data-section="review-not-counted"' in page and "not signed by a reviewer&#39;s key" in page

