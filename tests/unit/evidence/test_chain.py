"""The verifier's chain against the job's (EventChainTest has the same vectors), and what it finds."""

import copy
from datetime import datetime

import pytest

from auditpipe.evidence import signing
from auditpipe.evidence.chain import canonical, link, link_mac, verify_links

# EventChainTest.vector(): the same document as the job builds it
VECTOR = {"_id": "db-01/1_2026-11-22T10:00:00", "server": "db-01",
          "event_time": datetime(2026, 11, 28, 10, 0, 0, 123000),  # 1795860000123 ms, naive UTC as pymongo gives it
          "status": 1045, "connection_id": 12345678901, "sqltext": "SELECT \"x\"\\n\t\u0001 é ✓ 𝄞",
          "tables": ["shop.cards", "shop.orders"], "extra": {"z": "1", "a": "2"}, "event_time_trusted": False,
          "ingest": {"topic": "audit.raw", "partition": 0, "offset": 7, "timestamp": 1795860001000},
          "chain_seq": 9, "chain_digest": "ignored"}


def test_canonical_form_and_digests_are_the_jobs():
    assert canonical(VECTOR) == (
        '{"_id":"db-01/1_2026-11-22T10:00:00","connection_id":12345678901,"event_time":1795860000123,'
        '"event_time_trusted":false,"extra":{"a":"2","z":"1"},"ingest":{"offset":7,"partition":0,'
        '"timestamp":1795860001000,"topic":"audit.raw"},"server":"db-01",'
        '"sqltext":"SELECT \\"x\\"\\\\n\\t\\u0001 é ✓ 𝄞","status":1045,"tables":["shop.cards","shop.orders"]}')
    first = link("", VECTOR)
    assert first == "2360ea144295777db0366420633febcc8d745d532dec04b3153e0c1c26c8457e"
    assert link(first, VECTOR) == "fabb91cf8fbe4d2f9f8744f60377f4dffb41af5d79cd9916416cb63c4acccf1f"


def test_the_link_mac_is_the_jobs():
    """LinkKeyTest has the same vector; the MAC is not part of the canonical content."""
    key = bytes(range(32))
    assert link_mac(key, 1, "2360ea144295777db0366420633febcc8d745d532dec04b3153e0c1c26c8457e") == \
        "841f167ca0676b5f01522e6ad60f7788"
    assert canonical({**VECTOR, "chain_mac": "x"}) == canonical(VECTOR)


@pytest.mark.parametrize("length", [1, 16, 32, 63, 64, 65, 200])
def test_the_link_mac_is_the_standard_hmac_whatever_the_keys_length(length):
    """chain.py computes HMAC-SHA-256 from precomputed states (a third of hmac.new's cost): the same result."""
    import hashlib
    import hmac

    key = bytes((7 * i + length) % 256 for i in range(length))
    digest = "fabb91cf8fbe4d2f9f8744f60377f4dffb41af5d79cd9916416cb63c4acccf1f"
    expected = hmac.new(key, f"auditpipe-chain-link/1\n42\n{digest}".encode(), hashlib.sha256).hexdigest()[:32]
    assert link_mac(key, 42, digest) == expected


KEY = bytes(range(32))


def chain(n, server="db-01", key=None):
    docs, previous = [], ""
    for i in range(1, n + 1):
        d = {"_id": f"{server}/{i}", "server": server, "event_time": datetime(2026, 11, 22, 10, 0, i % 60),
             "sqltext": f"select {i}", "line_sha256": f"line-of-{server}/{i}", "chain_seq": i}
        d["chain_digest"] = previous = link(previous, d)
        if key is not None:
            d["chain_mac"] = link_mac(key, i, previous)
        docs.append(d)
    return docs


def forged_append(docs, server="db-01"):
    """What whoever holds the store's credentials can write: the next link, its digest right, no key."""
    last = docs[-1]
    d = {"_id": f"{server}/forged", "server": server, "event_time": datetime(2027, 1, 1), "sqltext": "GRANT ALL",
         "line_sha256": "forged", "chain_seq": last["chain_seq"] + 1}
    d["chain_digest"] = link(last["chain_digest"], d)
    return d


def test_links_the_key_authenticates_verify():
    docs = chain(5, key=KEY)
    assert kinds(verify_links("db-01", docs, {5: docs[-1]["chain_digest"]}, link_keys=[KEY])) == []
    # a former key is still accepted, and a new key put first
    assert kinds(verify_links("db-01", docs, {}, link_keys=[b"\x01" * 32, KEY])) == []


def test_a_forged_append_with_a_correct_digest_is_unauthenticated():
    docs = chain(5, key=KEY)
    forged = forged_append(docs)
    report = verify_links("db-01", docs + [forged], {}, link_keys=[KEY])
    assert kinds(report) == [("unauthenticated", 6, "db-01/forged")]
    assert "carry no MAC" in report.findings[0].detail
    # without the keys, nothing tells it from the job's
    assert kinds(verify_links("db-01", docs + [forged], {})) == []
    # a MAC made up is no better
    forged["chain_mac"] = "0" * 32
    assert "does not give" in verify_links("db-01", docs + [forged], {}, link_keys=[KEY]).findings[0].detail


def test_the_genuine_link_after_a_forged_one_is_kept_and_the_forged_one_named():
    """The job's next event takes the link the forger took: the job's is the one the key authenticates."""
    docs = chain(6, key=KEY)
    forged = forged_append(docs[:5])
    report = verify_links("db-01", [forged] + docs, {}, link_keys=[KEY])
    assert sorted(kinds(report)) == [("inserted", 6, "db-01/forged")]


def test_a_rewritten_run_of_links_is_one_finding():
    docs = chain(8, key=KEY)
    for d in docs[2:6]:
        del d["chain_mac"]
    report = verify_links("db-01", docs, {}, link_keys=[KEY])
    assert kinds(report) == [("unauthenticated", 3, "db-01/3")] and report.findings[0].last_seq == 6
    assert "links 3 to 6" in report.findings[0].detail


def test_a_link_key_file_holds_keys_a_line(tmp_path):
    path = tmp_path / "keys" / "links.key"
    copy_ = tmp_path / "job" / "links.key"
    assert signing.make_link_key(path, copy_)
    assert path.stat().st_mode & 0o777 == 0o600 and copy_.read_bytes() == path.read_bytes()
    keys = signing.load_link_keys(path)
    assert len(keys) == 1 and len(keys[0]) == 32
    assert not signing.make_link_key(path) and signing.load_link_keys(path) == keys  # kept
    path.write_text("# rotated\n" + "ab" * 32 + "\n" + keys[0].hex() + "\n")
    assert signing.load_link_keys(path) == [b"\xab" * 32, keys[0]]
    path.write_text("abcd\n")
    with pytest.raises(ValueError, match="line 1: a key is 64 hex digits"):
        signing.load_link_keys(path)


def kinds(report):
    return [(f.kind, f.seq, f.event_id) for f in report.findings]


def test_an_untouched_chain_verifies_and_heads_anchor_it():
    docs = chain(10)
    r = verify_links("db-01", docs, {5: docs[4]["chain_digest"], 10: docs[9]["chain_digest"]})
    assert kinds(r) == [] and r.links == 10 and r.anchored_to == 10 and r.heads_checked == 2


def test_trimmed_oldest_links_are_no_alarm():
    docs = chain(10)[4:]
    r = verify_links("db-01", docs, {})
    assert kinds(r) == [] and r.first_seq == 5


def test_an_edited_event_is_named():
    docs = chain(10)
    docs[3]["sqltext"] = "select nothing"
    assert kinds(verify_links("db-01", docs, {})) == [("edited", 4, "db-01/4")]


def test_an_edit_with_its_digest_recomputed_breaks_the_next_link_and_the_head():
    docs = chain(10)
    docs[3]["sqltext"] = "select nothing"
    docs[3]["chain_digest"] = link(docs[2]["chain_digest"], docs[3])
    r = verify_links("db-01", docs, {10: chain(10)[9]["chain_digest"]})
    assert kinds(r)[0] == ("edited", 5, "db-01/5")
    assert "db-01/4" in r.findings[0].detail


def test_a_rewritten_chain_does_not_match_its_head():
    original = chain(10)
    docs = copy.deepcopy(original)
    docs[3]["sqltext"] = "select nothing"
    previous = docs[2]["chain_digest"]
    for d in docs[3:]:
        d["chain_digest"] = previous = link(previous, d)
    assert kinds(verify_links("db-01", docs, {10: original[9]["chain_digest"]})) == [("head_mismatch", 10, "db-01/10")]


def test_a_deleted_event_is_a_missing_link():
    docs = chain(10)
    del docs[6]
    r = verify_links("db-01", docs, {})
    assert kinds(r) == [("deleted", 7, None)]
    assert "db-01/6" in r.findings[0].detail and "db-01/8" in r.findings[0].detail


def test_inserted_documents_are_named():
    docs = chain(10)
    forged = {"_id": "db-01/forged", "server": "db-01", "sqltext": "select 1"}
    copied_link = dict(docs[2], _id="db-01/forged2", sqltext="drop table x")
    r = verify_links("db-01", docs + [forged, copied_link], {})
    assert sorted(kinds(r), key=str) == sorted([("inserted", None, "db-01/forged"), ("inserted", 3, "db-01/forged2")], key=str)


def test_swapped_events_are_reordered():
    docs = chain(10)
    docs[4]["chain_seq"], docs[5]["chain_seq"] = 6, 5
    r = verify_links("db-01", docs, {})
    assert kinds(r)[0][0] == "reordered" and kinds(r)[0][1] == 5


def test_a_copy_linked_again_is_explained_by_the_archive_not_called_a_deletion():
    from auditpipe.evidence.chain import explain_repeats

    docs = chain(10)
    # link 8 was a copy of event 3, re-sent late: the store kept event 3 at link 3, the archive has both
    copy = dict(docs[2], chain_seq=8, line_sha256=docs[2]["line_sha256"])
    archived = docs[:7] + [copy] + docs[8:]
    stored = docs[:7] + docs[8:]
    report = verify_links("db-01", stored, {})
    assert kinds(report) == [("deleted", 8, None)]
    left, notes = explain_repeats(report.findings, stored, archived)
    assert left == [] and "copies of events stored earlier (db-01/3)" in notes[0]
    # a real deletion stays one: the archive's row there is no copy of a stored event
    left, _ = explain_repeats(report.findings, stored, docs)
    assert [f.kind for f in left] == ["deleted"]


def test_every_unlinked_document_is_an_insert_however_old_it_claims_to_be():
    docs = chain(5)
    for i, d in enumerate(docs):
        d["ingest"] = {"timestamp": 2_000_000 + i}
    previous = ""
    for d in docs:  # links over the content with ingest
        d["chain_digest"] = previous = link(previous, d)
    old = {"_id": "db-01/old", "server": "db-01", "ingest": {"timestamp": 1_000_000}}  # backdated: no excuse
    late = {"_id": "db-01/late", "server": "db-01", "ingest": {"timestamp": 3_000_000}}
    r = verify_links("db-01", docs + [old, late], {})
    assert sorted(kinds(r), key=str) == [("inserted", None, "db-01/late"), ("inserted", None, "db-01/old")]


def test_links_deleted_from_the_end_are_named_against_what_is_known_to_exist():
    docs = chain(10)
    r = verify_links("db-01", docs[:7], {5: docs[4]["chain_digest"]}, expected_last=10, why="the head names link 10")
    assert kinds(r) == [("deleted", 8, None)]
    assert r.findings[0].last_seq == 10 and "links 8 to 10 missing at the end, after event db-01/7" in r.findings[0].detail
    assert kinds(verify_links("db-01", docs[:9], {}, expected_last=10, why="x")) == [("deleted", 10, None)]
    assert kinds(verify_links("db-01", docs, {}, expected_last=10, why="x")) == []
    assert kinds(verify_links("db-01", docs, {}, expected_last=7, why="x")) == [], "a newer end than expected is no finding"
    assert kinds(verify_links("db-01", docs[:7], {}, last_seq=7, expected_last=10, why="x")) == [], \
        "a range that ends earlier judges no end"




def test_a_copy_linked_again_at_the_end_is_explained_too():
    from auditpipe.evidence.chain import explain_repeats

    docs = chain(10)
    copy = dict(docs[2], chain_seq=10, line_sha256=docs[2]["line_sha256"])  # the last link: a late copy of event 3
    archived = docs[:9] + [copy]
    report = verify_links("db-01", docs[:9], {}, expected_last=10, why="the archive holds links up to 10")
    assert kinds(report) == [("deleted", 10, None)]
    left, notes = explain_repeats(report.findings, docs[:9], archived)
    assert left == [] and "links 10 to 10" in notes[0]


def test_heads_younger_than_the_in_flight_window_are_not_yet_expected():
    from auditpipe.evidence.signing import head_millis
    from auditpipe.evidence.verify import IN_FLIGHT_S, _expected_end, _Heads

    now = 1_800_000_000_000
    heads = _Heads()
    heads.add({"seq": 5, "recorded_at": {"$date": "2026-11-01T08:00:00Z"}}, now)  # long ago (manifest form)
    heads.add({"seq": 9, "recorded_at": datetime.utcfromtimestamp((now - 10_000) / 1000)}, now)  # 10 s ago (store form)
    assert heads.settled[0] == 5 and heads.in_flight == (9, 10)
    assert _expected_end(heads, None, "")[0] == 5
    assert _expected_end(heads, 7, "archive") == (7, "the archive holds links up to 7")
    assert head_millis({"$date": {"$numberLong": "1700000000000"}}) == 1_700_000_000_000
    assert head_millis("not a time") is None and IN_FLIGHT_S >= 60


def test_new_links_go_on_from_the_anchor_verified_before():
    from auditpipe.evidence.chain import Anchor

    docs = chain(12)
    anchor = Anchor(8, docs[7]["chain_digest"], "db-01/8")
    r = verify_links("db-01", docs[8:], {12: docs[11]["chain_digest"]}, after=anchor)
    assert kinds(r) == [] and (r.first_seq, r.last_seq, r.links, r.anchored_to) == (9, 12, 4, 12)
    # the first new link must follow the anchor's digest: one made over another chain does not
    other = chain(12, server="db-01")
    other[8]["sqltext"] = "select other"
    assert kinds(verify_links("db-01", other[8:9], {}, after=anchor)) == [("edited", 9, "db-01/9")]
    # links missing between the anchor and the first new one, and at the end though a head names them
    r = verify_links("db-01", docs[10:], {}, after=anchor)
    assert kinds(r) == [("deleted", 9, None)] and r.findings[0].last_seq == 10
    assert "links 9 to 10 missing between event db-01/8 (link 8, verified earlier)" in r.findings[0].detail
    r = verify_links("db-01", [], {}, expected_last=12, why="the head names link 12", after=anchor)
    assert kinds(r) == [("deleted", 9, None)] and "after event db-01/8 (link 8)" in r.findings[0].detail
    assert kinds(verify_links("db-01", [], {}, expected_last=8, why="x", after=anchor)) == []
    # a document stored since that claims a link verified before is an insert, as is one without a link
    claim = dict(docs[2], _id="db-01/claims-3")
    r = verify_links("db-01", docs[8:] + [claim, {"_id": "db-01/bare", "server": "db-01"}], {}, after=anchor)
    assert sorted(kinds(r), key=str) == [("inserted", 3, "db-01/claims-3"), ("inserted", None, "db-01/bare")]


def kept_newest_first(docs):
    """``docs`` kept as a verification pass keeps them, read newest first; the stale ones read again."""
    from auditpipe.evidence.chain import Kept

    kept = Kept()
    for d in reversed(docs):
        kept.add("db-01", d)
    by_id = {d["_id"]: d for d in docs}
    again = kept.refresh("db-01", lambda ids: {i: by_id[i] for i in ids if i in by_id})
    return kept.docs["db-01"], again


def test_kept_documents_drop_their_content_and_are_judged_as_the_whole_ones():
    from auditpipe.evidence.chain import CANONICAL

    docs = chain(200)
    kept, again = kept_newest_first(docs)
    assert again == 0 and sum(CANONICAL in d for d in kept) == 0, "each link's two links before it were read"
    assert kinds(verify_links("db-01", kept, {200: docs[199]["chain_digest"]})) == []
    trimmed, _ = kept_newest_first(docs[50:])
    assert sum(CANONICAL in d for d in trimmed) == 2, "the oldest two read keep theirs: what came before is trimmed"

    def tampered(change):
        whole = copy.deepcopy(chain(10))
        whole = change(whole) or whole
        kept, _ = kept_newest_first(whole)
        read = list(reversed(whole))  # in the order read: of two documents claiming a link, the first is judged first
        return sorted(kinds(verify_links("db-01", kept, {})), key=str), sorted(kinds(verify_links("db-01", read, {})), key=str)

    def edited(d):
        d[3]["sqltext"] = "select nothing"

    def recomputed(d):
        edited(d)
        d[3]["chain_digest"] = link(d[2]["chain_digest"], d[3])

    def deleted(d):
        del d[6]

    def swapped(d):
        d[4]["chain_seq"], d[5]["chain_seq"] = 6, 5

    def inserted(d):
        return d + [dict(d[2], _id="db-01/forged", sqltext="drop table x"), {"_id": "db-01/bare", "server": "db-01"}]

    def linked_in(d):  # a second link 3 that follows link 2, read last: links 4 and 5 were kept without it
        forged = dict(d[2], _id="db-01/forged", sqltext="drop table x")
        forged["chain_digest"] = link(d[1]["chain_digest"], forged)
        return [forged] + d

    def identical(d):
        return d + [dict(d[4])]

    for change in (edited, recomputed, deleted, swapped, inserted, linked_in, identical):
        found, expected = tampered(change)
        assert found == expected and (found or change is identical), change.__name__
    assert tampered(inserted)[0] == sorted([("inserted", 3, "db-01/forged"), ("inserted", None, "db-01/bare")], key=str)
    assert tampered(linked_in)[0] == [("inserted", 3, "db-01/forged")]
    _, again = kept_newest_first(linked_in(chain(10)))
    assert again == 2, "links 4 and 5 follow link 3, which a second document claims: read again"


def test_an_event_timed_further_ahead_than_the_job_trusts_and_not_flagged_is_named():
    """The job flags an event whose time is more than event-time.max-ahead ahead of its shipping
    (event_time_trusted: false); one that claims trust with such a time was not written by the job."""
    docs = chain(4)
    shipped = 1_795_860_000_000
    for d in docs:
        d["ingest"] = {"timestamp": shipped}
        d["event_time"] = shipped - 1000
    docs[2]["event_time"] = shipped + 3_600_000  # an hour ahead
    relinked, previous = [], ""
    for d in docs:
        d["chain_digest"] = previous = link(previous, d)
        relinked.append(d)
    report = verify_links("db-01", relinked, {}, max_ahead_ms=300_000)
    assert kinds(report) == [("time_ahead", 3, "db-01/3")] and "60 min ahead of when the line was shipped, beyond" \
        in report.findings[0].detail, "one link: no \"the first\""
    assert kinds(verify_links("db-01", relinked, {})) == [], "not judged without the job's bound"
    docs[2]["event_time_trusted"] = False  # as the job writes it
    previous = ""
    for d in docs:
        d["chain_digest"] = previous = link(previous, d)
    assert kinds(verify_links("db-01", docs, {}, max_ahead_ms=300_000)) == []
    from auditpipe.evidence.chain import effective_ms

    assert effective_ms(docs[2], 300_000) == shipped, "judged by its shipping time, as the job counts it"
    assert effective_ms(docs[1], 300_000) == shipped - 1000
