"""Review decisions against the real store (docs/reviews.md): a day of imported history and a live brute
force await review; bad decisions are refused with nothing written; reviewers deciding at once are all
kept, in order, and one reviewer's second decision never; the second copy is the store's line for
line; verify names an edited, a removed and a rewritten decision; the PCI report counts the days
reviewed (10.4.1) and the alerts decided (10.4.3); a day past its deadline raises its alert once and
leaves the review queue when decided; a sign-off forged by a store user, one backdated by a reviewer and
the decisions emptied from the store are named (FORGED, BACKDATED, DELETED), and the report and the second
copy take no forged one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import pytest

from auditpipe import paths
from auditpipe.evidence import reviewer_keys, reviews
from auditpipe.evidence.chain import link
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

LIVE = "e2e-reviews"  # a configured source: its brute force is an alert to decide
HISTORY = "e2e-reviews-history"  # imported: a past day to review
REVIEWERS = ("alice", "bob", "carol", "dave", "erin")


@pytest.fixture(scope="module")
def reviewed(stack, tmp_path_factory):
    """Two ended days (the first with imported evidence) and an alert of today, awaiting review."""
    folder = tmp_path_factory.mktemp("reviews")
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    first = today - timedelta(days=2)
    simulate(folder / "audit.log", rate=1500 / 86400, duration=86400, speedup=86400 / 5, seed=3, start_time=first)
    stack.cli("import", str(folder / "audit.log"), "--server", HISTORY)
    simulate(stack.log_path(LIVE), rate=200, duration=10, speedup=5, seed=5, failed_login_burst=8,
             start_time=datetime.now(timezone.utc) - timedelta(seconds=20))
    alerts = stack.db()[stack.cfg.store["alerts_collection"]]
    alert = stack.wait_for("the brute force's alert", lambda: (a := alerts.find_one(
        {"server": LIVE, "rule": "brute_force"}), a), timeout=120)
    stack.db()[stack.cfg.store["reviews_collection"]].delete_many({})
    ledger = reviews.ledger_path(stack.cfg)
    if ledger.exists():
        ledger.unlink()
    for who in REVIEWERS:  # each reviewer's own key, enrolled as a reviewer runs it
        enrolled = review(stack, "enroll", who, "--key", str(KEYS / f"{who}.key"))
        assert enrolled.returncode == 0 and f"enrolled in {stack.cfg.reviewers_file}" in enrolled.stdout, enrolled
    return first.date(), alert


KEYS = Path(tempfile.gettempdir()) / f"auditpipe-e2e-reviewer-keys-{os.getpid()}"  # each reviewer's own key


@pytest.fixture(scope="module", autouse=True)
def _keys():
    import shutil

    shutil.rmtree(KEYS, ignore_errors=True)
    yield
    shutil.rmtree(KEYS, ignore_errors=True)


def review(stack, *args: str, reviewer: str | None = None) -> subprocess.CompletedProcess:
    """`auditpipe review ARGS` as ``reviewer`` (their key in $AUDITPIPE_REVIEWER_KEY; None: a key that is not there)."""
    env = {**os.environ, reviewer_keys.KEY_ENV: str(KEYS / f"{reviewer or 'nobody'}.key")}
    return subprocess.run([sys.executable, "-m", "auditpipe", "--config", str(stack.cfg_file), "review", *args],
                          capture_output=True, text=True, cwd=paths.REPO, env=env, timeout=120)


def queue(stack) -> list[str]:
    return sorted(d["_id"] for d in stack.db()[stack.cfg.store["review_queue_collection"]].find())


def stored(stack) -> list[dict]:
    return sorted(stack.db()[stack.cfg.store["reviews_collection"]].find(), key=lambda d: d["chain_seq"])


def test_what_awaits_review_and_bad_decisions_write_nothing(stack, reviewed):
    first, alert = reviewed
    day, next_day = f"day:pci:{first}", f"day:pci:{first + timedelta(days=1)}"
    listed = review(stack, "list", "--from", "3d")
    assert listed.returncode == 0, listed.stderr
    assert day in listed.stdout and next_day in listed.stdout, listed.stdout
    assert f"day:pci:{first - timedelta(days=1)}" not in listed.stdout, "no day before the first with evidence"
    assert f"alert:{alert['_id']}" in listed.stdout
    today = datetime.now(timezone.utc).date()
    stranger = review(stack, "enroll", "mallory", "--key", str(KEYS / "mallory.key"), "--reviewers-file",
                      str(KEYS / "elsewhere"))
    assert stranger.returncode == 0, stranger.stderr
    for args, who, why in (
            ((day, "--outcome", "expected"), None, "no reviewer's key at"),
            ((day, "--outcome", "expected"), "mallory", "is not an enrolled reviewer's"),
            (("alert:no/such/alert", "--outcome", "investigated", "--note", "x"), "alice", "no alert no/such/alert"),
            ((f"day:pci:{today}", "--outcome", "expected"), "alice", "the day has not ended"),
            ((f"day:pci:{first - timedelta(days=1)}", "--outcome", "expected"), "alice", "holds no evidence of that day"),
            ((day, "--outcome", "escalated", "--note", "a\x1b]0;owned\x07b"), "alice", "control character"),
            ((day, "--outcome", "escalated"), "alice", "needs a note"),
            ((day, "--outcome", "approved"), "alice", "invalid choice"),
            ((day, "alert:no/such/alert", "--outcome", "expected"), "alice", "no alert")):
        r = review(stack, "decide", *args, reviewer=who)
        assert r.returncode == 2 and why in r.stderr, (args, r.stdout, r.stderr)
    bad_name = review(stack, "enroll", "eve\u202e", "--key", str(KEYS / "eve.key"))
    assert bad_name.returncode == 2 and "is not a reviewer's name" in bad_name.stderr, bad_name.stderr
    assert stored(stack) == [], "a refused decision writes nothing, nor does any other item of the same call"

    # the deadline check after a verification pass: the first day (over a day past its end) is overdue, once
    from auditpipe.stack import verification

    logged: list[str] = []
    assert verification.check_review_deadlines(stack.cfg, logged.append, "") == ""
    assert verification.check_review_deadlines(stack.cfg, logged.append, "") == ""
    assert len(logged) == 1 and "1 day(s) past review.deadline" in logged[0], logged
    overdue = stack.db()[stack.cfg.store["alerts_collection"]].find_one({"_id": f"review_overdue/pci/{first}"})
    assert (overdue["subject"], overdue["severity"], overdue["server"]) == (day, "medium", "*"), overdue
    jsonschema.validate(overdue, json.loads((paths.SCHEMAS / "alert.schema.json").read_text()))
    assert overdue["_id"] in [a["_id"] for a in stack.topic_messages("alerts")], "on the alerts topic too"
    assert queue(stack) == [day, next_day]
    assert re.search(rf"{day}\s+OVERDUE since", review(stack, "list", "--from", "3d").stdout)


def test_decisions_are_kept_in_order_once_per_reviewer_and_verified(stack, reviewed):
    first, alert = reviewed
    day = f"day:pci:{first}"
    assert review(stack, "decide", day, "--outcome", "expected", reviewer="alice").returncode == 0
    assert queue(stack) == [f"day:pci:{first + timedelta(days=1)}"], "a day decided leaves the queue at once"
    listed = review(stack, "list", "--from", "3d").stdout
    assert f"alert:review_overdue/pci/{first}" not in listed, "the day's decision answers its overdue alert"
    again = review(stack, "decide", day, "--outcome", "investigated", "--note", "second look", reviewer="alice")
    assert again.returncode == 2 and "alice already decided" in again.stderr, again.stderr
    # four reviewers at once, and one of them twice: every other reviewer's decision kept, hers once
    calls = [("bob", day), ("carol", day), ("dave", day), ("erin", f"alert:{alert['_id']}"), ("erin", f"alert:{alert['_id']}")]
    running = [subprocess.Popen([sys.executable, "-m", "auditpipe", "--config", str(stack.cfg_file), "review", "decide",
                                 item, "--outcome", "escalated", "--note", f"{who}: ticket SEC-7\nsource blocked"],
                                env={**os.environ, reviewer_keys.KEY_ENV: str(KEYS / f"{who}.key")}, cwd=paths.REPO,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for who, item in calls]
    codes = sorted(p.wait(timeout=120) for p in running)
    assert codes == [0, 0, 0, 0, 2], [p.communicate() for p in running]
    docs = stored(stack)
    assert [d["chain_seq"] for d in docs] == [1, 2, 3, 4, 5]
    assert sorted((d["reviewer"], d["item"]) for d in docs) == sorted({("alice", day), *calls})
    enrolled = reviewer_keys.load_reviewers(stack.cfg.reviewers_file)
    assert all(d["identity"]["source"] == "key" and enrolled[d["identity"]["key_id"]].name == d["reviewer"]
               and reviewer_keys.check(d, enrolled) is None for d in docs)
    previous = ""
    for d in docs:  # one chain, each link following the one before it
        assert d["_id"] == f"decision/{d['chain_seq']}" and link(previous, d) == d["chain_digest"], d
        previous = d["chain_digest"]
    lines = reviews.ledger_path(stack.cfg).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [json.loads(reviews.ledger_line(d)) for d in docs]
    logged = review(stack, "log")
    assert logged.returncode == 0 and logged.stdout.count("decision/") == 5, logged.stdout
    assert "\x1b" not in logged.stdout

    clean = stack.cli("verify", "--decisions")
    assert re.search(r"store\s+review decisions: links 1 to 5 \(5 present\): OK", clean.stdout), clean.stdout
    assert re.search(r"copy\s+review decisions: links 1 to 5 \(5 present\): OK", clean.stdout), clean.stdout

    coll = stack.db()[stack.cfg.store["reviews_collection"]]
    # an edited outcome
    coll.update_one({"_id": "decision/2"}, {"$set": {"outcome": "false_positive"}})
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and "store: review decisions link 2 event decision/2: EDITED" in found.stdout, found.stdout
    coll.replace_one({"_id": "decision/2"}, docs[1])
    # the newest removed: the second copy holds it
    coll.delete_one({"_id": "decision/5"})
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and re.search(r"store: review decisions link 5: DELETED: link 5 missing at the end",
                                               found.stdout), found.stdout
    coll.insert_one(docs[4])
    # the whole chain rewritten in the store, each link recomputed: only the copy tells
    previous = ""
    for d in docs:
        forged = {**d, "outcome": "false_positive"}
        forged["chain_digest"] = previous = link(previous, forged)
        coll.replace_one({"_id": d["_id"]}, forged)
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and "store/copy: review decisions link 1: EDITED" in found.stdout, found.stdout
    for d in docs:
        coll.replace_one({"_id": d["_id"]}, d)
    assert stack.cli("verify", "--decisions").returncode == 0, "put back: clean again"
    # and the whole verify shows the decisions beside the events (its exit code is the session's other
    # modules' too: they leave tampered servers of their own)
    everything = stack.cli("verify", check=False)
    assert re.search(r"copy\s+review decisions: links 1 to 5 \(5 present\): OK", everything.stdout), everything.stdout


def test_the_pci_report_counts_the_days_reviewed_and_the_alerts_decided(stack, reviewed):
    first, alert = reviewed
    r = stack.cli("report", "pci", "--from", first.isoformat(), "--to", datetime.now(timezone.utc).isoformat())
    page = open(re.search(r"report: (.+)", r.stdout).group(1).strip(), encoding="utf-8").read()
    assert re.search(r'data-figure="control:PCI-DSS-10.4.1">1 of 2 days reviewed<', page), "first day of two"
    alerts = stack.db()[stack.cfg.store["alerts_collection"]].count_documents(
        {"first_event_time": {"$gte": datetime.combine(first, datetime.min.time())}})
    # decided: erin's brute force, and the first day's overdue alert through the day's decisions
    assert re.search(rf'data-figure="control:PCI-DSS-10.4.3">2 of {alerts} alerts decided<', page), alerts
    assert re.search(r'data-figure="escalations">4<', page)
    assert f"day:pci:{first + timedelta(days=1)}" in page, "the unreviewed day is an open item"
    assert "ticket SEC-7" in page and f"alert:{alert['_id']}" in page


def test_a_forged_a_backdated_and_an_emptied_sign_off_are_named(stack, reviewed):
    first, _ = reviewed
    coll = stack.db()[stack.cfg.store["reviews_collection"]]
    docs = stored(stack)
    assert len(docs) == 5
    next_day = f"day:pci:{first + timedelta(days=1)}"

    def append(doc: dict) -> None:
        doc["chain_seq"], doc["_id"] = 6, "decision/6"
        if "signature" in doc:
            doc["signature"] = reviewer_keys.sign(reviewer_keys.load_private_key(KEYS / "erin.key"), doc)
        doc["chain_digest"] = link(docs[-1]["chain_digest"], doc)
        coll.insert_one(doc)

    # a store user signs off the unreviewed day as alice: linked correctly, but no key of alice's signed it
    forged = {k: v for k, v in docs[0].items() if k != "signature"}
    append({**forged, "item": next_day, "item_time": datetime.combine(first + timedelta(days=1), datetime.min.time()),
            "decided_at": datetime.now(timezone.utc).replace(microsecond=0)})
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and re.search(r"store: review decisions link 6 event decision/6: FORGED: a decision of "
                                               r"alice: not signed by a reviewer's key", found.stdout), found.stdout
    r = stack.cli("report", "pci", "--from", first.isoformat(), "--to", datetime.now(timezone.utc).isoformat())
    page = open(re.search(r"report: (.+)", r.stdout).group(1).strip(), encoding="utf-8").read()
    assert re.search(r'data-figure="control:PCI-DSS-10.4.1">1 of 2 days reviewed<', page), "the forged one not counted"
    assert 'data-section="review-not-counted"' in page and "decision/6" in page
    # the second copy checks each link before it takes it: a genuine decision after the forged one stays out
    genuine = review(stack, "decide", f"day:pci:{first}", "--outcome", "expected", reviewer="erin")
    assert genuine.returncode == 2 and "takes no decision after link 5: link 6 (decision/6): not signed" in genuine.stderr
    assert len(reviews.ledger_path(stack.cfg).read_text().splitlines()) == 5
    coll.delete_many({"chain_seq": {"$gt": 5}})

    # erin signs off the first day with her own key, dated before it was found overdue and before link 5
    overdue = stack.db()[stack.cfg.store["alerts_collection"]].find_one({"_id": f"review_overdue/pci/{first}"})
    erin = reviewer_keys.load_private_key(KEYS / "erin.key").public_key()
    back = {**docs[4], "reviewer": "erin", "identity": {**docs[4]["identity"], "key_id": reviewer_keys.key_id(erin)},
            "item": f"day:pci:{first}", "kind": "day", "regime": "pci", "server": None,
            "item_time": datetime.combine(first, datetime.min.time()), "note": "",
            "outcome": "expected", "decided_at": overdue["raised_at"] - timedelta(hours=1)}
    from auditpipe.stack import verification

    logged: list[str] = []
    assert verification.check_review_deadlines(stack.cfg, logged.append, "") == "" and not logged
    append(back)
    # the verifier's check after its next pass: the chain ended at link 5 when it last looked, later than the date
    assert verification.check_review_deadlines(stack.cfg, logged.append, "") == ""
    assert any("BACKDATED" in line for line in logged), logged
    alert = stack.db()[stack.cfg.store["alerts_collection"]].find_one(
        {"rule": "integrity", "server": reviews.CHAIN_NAME, "subject": "decision/6"})
    assert alert and "the verifier found the decisions' chain ending at link 5" in alert["summary"], alert
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and re.search(r"store: review decisions link 6 event decision/6: BACKDATED: erin's "
                                               r"decision says .*, but link 5, which the store took before it",
                                               found.stdout), found.stdout
    assert "FORGED" not in found.stdout, "her key signed it: only its time is false"
    coll.delete_many({"chain_seq": {"$gt": 5}})

    # every decision removed from the store: the copy holds them
    coll.delete_many({})
    found = stack.cli("verify", "--decisions", check=False)
    assert found.returncode == 1 and re.search(r"store: review decisions link 1: DELETED: the store holds no decision, "
                                               r"the copy holds links 1 to 5", found.stdout), found.stdout
    coll.insert_many(docs)
    assert stack.cli("verify", "--decisions").returncode == 0, "put back: clean again"
