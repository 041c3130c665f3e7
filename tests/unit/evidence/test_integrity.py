"""Integrity against an insider: the bytes a chain head's signature covers (the vector HeadSignerTest.java
asserts too), the key pair, the check verify makes of each head, heads that stop, and a finding as an
integrity alert."""

from __future__ import annotations

import base64
import stat
from datetime import datetime, timezone

import pytest

from auditpipe.evidence import signing

# HeadSignerTest.vectorHead() and VECTOR
HEAD = {"_id": "db-01/import-ü/42", "server": "db-01", "chain": "import-ü", "seq": 42, "previous_seq": 17,
        "digest": "ab" * 32, "last_event_id": "db-01/1700000000_7", "last_event_time": 1_700_000_000_123,
        "recorded_at": 1_700_000_060_000}
VECTOR = ("22:auditpipe-chain-head/1,5:db-01,9:import-ü,2:42,2:17,64:" + "ab" * 32
          + ",18:db-01/1700000000_7,13:1700000000123,13:1700000060000,")


def test_the_signed_bytes_are_the_jobs():
    assert signing.signed_bytes(HEAD) == VECTOR.encode("utf-8")
    as_stored = {**HEAD, "last_event_time": datetime.fromtimestamp(1_700_000_000.123, timezone.utc),
                 "recorded_at": {"$date": "2023-11-14T22:14:20.000Z"}}  # the store's dates, a manifest line's
    assert signing.signed_bytes(as_stored) == VECTOR.encode("utf-8")
    first = {k: v for k, v in HEAD.items() if k not in ("chain", "previous_seq")}
    assert signing.signed_bytes(first).startswith(b"22:auditpipe-chain-head/1,5:db-01,0:,2:42,0:,64:")


def sign(private, head: dict) -> dict:
    return {**head, "key_id": signing.key_id(private.public_key()),
            "signature": base64.b64encode(private.sign(signing.signed_bytes(head))).decode()}


def test_a_key_pair_is_made_once_private_and_checks_heads(tmp_path):
    key_file, pub_file = tmp_path / "keys" / "chain-signing.pem", tmp_path / "keys" / "chain-signing.pub"
    assert signing.make_key_pair(key_file, pub_file)
    assert not signing.make_key_pair(key_file, pub_file), "kept, not replaced"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    text = key_file.read_text()
    assert "BEGIN PRIVATE KEY" in text and "BEGIN PUBLIC KEY" in text, "the two blocks HeadSigner reads"
    public = signing.load_public_keys(pub_file)
    (kid,) = public
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    signed = sign(private, HEAD)
    assert signing.check(signed, public).state == "signed"
    assert signing.check(HEAD, public).state == "unsigned"
    assert signing.check({**signed, "digest": "cd" * 32}, public).state == "forged", "an edited head"
    assert signing.check({**signed, "previous_seq": 16}, public).state == "forged"
    assert signing.check({**signed, "signature": "not base64!"}, public).state == "forged"
    stranger = sign(ed25519.Ed25519PrivateKey.generate(), HEAD)
    assert signing.check(stranger, public).state == "other_key", "another key's head is no anchor"
    assert signing.check({**stranger, "key_id": kid}, public).state == "forged"
    pub_file.unlink()
    signing.make_key_pair(key_file, pub_file)
    assert list(signing.load_public_keys(pub_file)) == [kid], "the public half made again from the pair"


def test_after_a_rotation_heads_of_the_new_key_and_of_the_former_ones_verify(tmp_path):
    """docs/security.md "Rotating the heads' key": openssl makes the new pair, its public block is added
    to chain.public_key_file after the former one; heads of either verify, a third key's do not."""
    import subprocess

    key_file, pub_file = tmp_path / "chain-signing.pem", tmp_path / "chain-signing.pub"
    signing.make_key_pair(key_file, pub_file)
    new = tmp_path / "new.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(new)], check=True)
    public_block = subprocess.run(["openssl", "pkey", "-in", str(new), "-pubout"], check=True, capture_output=True).stdout
    with open(pub_file, "ab") as f:
        f.write(public_block)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    old_key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    new_key = serialization.load_pem_private_key(new.read_bytes(), password=None)
    keys = signing.load_public_keys(pub_file)
    assert len(keys) == 2
    assert signing.check(sign(old_key, HEAD), keys).state == "signed", "a head of the former key stays valid"
    assert signing.check(sign(new_key, HEAD), keys).state == "signed"
    assert signing.check(sign(ed25519.Ed25519PrivateKey.generate(), HEAD), keys).state == "other_key"
    (tmp_path / "empty.pub").write_text("no key here\n")
    with pytest.raises(ValueError, match="holds no public key"):
        signing.load_public_keys(tmp_path / "empty.pub")


def test_an_integrity_finding_is_an_alert_of_the_alerts_schema():
    import json

    import jsonschema

    from auditpipe import paths
    from auditpipe.evidence.chain import Finding
    from auditpipe.stack import verification

    schema = json.loads((paths.SCHEMAS / "alert.schema.json").read_text())
    now = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)
    edited = verification.alert_of("store", Finding("edited", "db-01", 7, "db-01/7", "its content does not give its digest"), now)
    jsonschema.validate({k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in edited.items()}, schema)
    assert edited["rule"] == "integrity" and edited["severity"] == "critical" and edited["evidence"] == ["db-01/7"]
    assert edited["_id"] == "integrity/db-01/store/edited/7/db-01/7", "the same finding, the same alert"
    head = verification.alert_of("chain_heads", Finding("forged_head", "db-01", 9, None, "x" * 400), now)
    assert head["evidence"] == [] and head["subject"] == "link 9" and len(head["summary"]) == 300
    assert verification.next_delay(600, 10) == 600 and verification.next_delay(600, 100) == 1000, "at most a tenth of the time"


def test_links_after_the_newest_head_are_unanchored_once_a_head_is_overdue():
    from auditpipe.evidence import verify

    heads = verify._Heads()
    now = 10_000_000
    heads.add({"seq": 100, "recorded_at": now - 200_000}, now)  # 200 s ago
    assert verify._heads_stopped("db-01", 100, heads, now, 60) == [], "nothing after the head"
    assert verify._heads_stopped("db-01", 130, heads, now, 120) == [], "a head may still come (120 s + 120 s)"
    [f] = verify._heads_stopped("db-01", 130, heads, now, 60)
    assert (f.kind, f.seq, f.last_seq) == ("unanchored", 101, 130) and "links 101 to 130" in f.detail
    # links timed ahead of the head's due time (a burst after a quiet spell, records timed ahead of the clock)
    # are not due a head yet, however old the one before them; one timed long enough ago is
    from datetime import datetime, timezone

    def at(ms):
        return datetime.fromtimestamp(ms / 1000, timezone.utc)

    fresh = [{"chain_seq": s, "event_time": at(now - 30_000)} for s in range(101, 131)]
    assert verify._heads_stopped("db-01", 130, heads, now, 60, fresh) == []
    old = fresh + [{"chain_seq": 101, "event_time": at(now - 181_000)}]
    assert [x.seq for x in verify._heads_stopped("db-01", 130, heads, now, 60, old)] == [101]


def test_the_head_interval_is_the_jobs(tmp_path):
    from auditpipe import config
    from auditpipe.stack.flink import job_settings

    (tmp_path / "a.yaml").write_text("flink: {job_options: {chain.head-interval: 2s}}\n")
    assert job_settings.head_interval_seconds(config.load(tmp_path / "a.yaml")) == 2
    (tmp_path / "b.yaml").write_text("{}\n")
    assert job_settings.head_interval_seconds(config.load(tmp_path / "b.yaml")) == 60, "the job's default, 1 min"


def test_a_slim_document_links_as_the_document_does():
    from auditpipe.evidence import chain

    doc = {"_id": "db-01/7", "server": "db-01", "chain_seq": 7, "chain_digest": "ab" * 32, "user": "app",
           "event_time": datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc), "line_sha256": "cd" * 32,
           "tables": ["shop.cards"], "ingest": {"timestamp": datetime(2026, 11, 26, 9, 0, 1)}}
    small = chain.slim(doc)
    assert chain.link("ef" * 32, small) == chain.link("ef" * 32, doc)
    assert "user" not in small and small["chain_seq"] == 7 and small["line_sha256"] == "cd" * 32
    assert chain.verify_links("db-01", [small], {7: "ab" * 32}).findings == [], "read like the document"


def test_a_head_missing_from_the_store_is_removed_one_missing_from_the_manifest_is_a_rolled_back_attempt():
    """The job writes a head to the store as it makes it and to the manifest when the checkpoint after
    it completes: after a failure the store holds heads of the attempt the job rolled back (link 40
    here), which the manifest never gets. A head the manifest holds must be in the store; a head the
    next one names as its previous must be in its place."""
    from auditpipe.evidence.verify import Verification, _removed_heads

    present = {("chain_heads", "db", None): {10, 20, 40, 50}, ("archive manifest", "db", None): {10, 20, 30, 50}}
    settled = {("chain_heads", "db", None): {10, 20, 40, 50}, ("archive manifest", "db", None): {10, 20, 30, 50}}
    previous = {("chain_heads", "db", None): {20: 10, 40: 20, 50: 30},
                ("archive manifest", "db", None): {20: 10, 30: 20, 50: 30}}
    v = Verification()
    _removed_heads(v, present, settled, previous)
    found = [(where, f.kind, f.seq) for where, f in v.findings]
    assert found == [("chain_heads", "head_removed", 30)], found  # named by 50, and the manifest holds it
    assert "the signed head after each names it" in v.findings[0][1].detail

    v = Verification()
    present[("chain_heads", "db", None)].add(30)
    _removed_heads(v, present, settled, previous)
    assert v.findings == [], "40 in the store alone is no removal"

    v = Verification()
    del previous[("chain_heads", "db", None)][50]
    present[("chain_heads", "db", None)].discard(30)
    _removed_heads(v, present, settled, previous)
    assert [(w, f.seq) for w, f in v.findings] == [("chain_heads", 30)]
    assert "the other place holds them, signed" in v.findings[0][1].detail


def test_verify_shows_each_source_gap_with_its_class_and_the_collectors_recorded_losses(tmp_path):
    import json

    from auditpipe import config
    from auditpipe.evidence.verify import Verification, format_report
    from auditpipe.stack.collector.rsyslog import gaps_file, recorded_gaps

    (tmp_path / "a.yaml").write_text(f"state_dir: {tmp_path / 'state'}\nsources:\n"
                                     f"  - {{path: {tmp_path}/db-01/audit.log, server: db-01}}\n"
                                     f"  - {{path: {tmp_path}/db-01/audit.log.x/audit.log, server: db-02}}\n")
    cfg = config.load(tmp_path / "a.yaml")
    assert recorded_gaps(cfg) == {}, "no file: nothing recorded"
    gaps_file(cfg).parent.mkdir(parents=True)
    gaps_file(cfg).write_text("".join(json.dumps({"at": f"2026-11-28T09:0{i}:00+0000", "source": source, "gap": f"gap {i}"})
                                      + "\n" for i, source in enumerate(
        [f"{tmp_path}/db-01/audit.log", f"{tmp_path}/db-01/audit.log.x/audit.log", f"{tmp_path}/db-01/audit.log",
         f"{tmp_path}/db-01/audit.log", f"{tmp_path}/db-01/audit.log", "/elsewhere/audit.log"])) + "not json\n")
    recorded = recorded_gaps(cfg)
    assert {k: [g["gap"] for g in v] for k, v in recorded.items()} == {
        "db-01": ["gap 0", "gap 2", "gap 3", "gap 4"], "db-02": ["gap 1"]}, "the longest configured path that matches"
    v = Verification(source_gaps=[
        {"server": "db-01", "severity": "low", "gap_class": "restart", "summary": "started again"},
        {"server": "db-01", "severity": "high", "summary": "record 7 is missing"}],
        collector_gaps={"db-01": recorded["db-01"]})
    text = format_report(v)
    assert "(2, alert record_gap: 1 restart, 1 unexplained)" in text, text
    assert "SOURCE GAP db-01 (restart, low): started again" in text
    assert "SOURCE GAP db-01 (unexplained, high): record 7 is missing" in text, "no class: unexplained"
    assert "COLLECTOR GAP db-01: 4 the collector recorded" in text and "the last 3:" in text
    assert "gap 0" not in text and "2026-11-28T09:04:00+0000: gap 4" in text
    assert v.clean, "a source gap is no finding of the chain"


def test_a_chain_the_store_lacks_is_deleted_unless_the_cap_trimmed_it():
    """The capped collection trims the oldest first: a chain gone from the store is a deletion when the
    store still holds something that arrived before the chain's newest known link, or nothing at all."""
    from auditpipe.evidence import verify

    now = 10_000_000_000
    heads = verify._Heads()
    heads.add({"seq": 100, "recorded_at": now - 600_000}, now)  # settled: 10 min ago
    [f] = [verify._emptied("db-01", heads, None, None)]
    assert (f.kind, f.last_seq) == ("deleted", 100) and "the store holds no event at all" in f.detail
    older = now - 1_000_000
    assert "the oldest at" in verify._emptied("db-01", heads, None, older).detail
    assert verify._emptied("db-01", heads, None, now - 60_000) is None, "everything left arrived after it: trimmed"
    young = verify._Heads()
    young.add({"seq": 100, "recorded_at": now - 10_000}, now)
    assert verify._emptied("db-01", young, None, None) is None, "a head in flight: its links may be on their way"
    # the archive's newest link: committed after the store had it, so no waiting for a head to settle
    archived = {"chain_seq": 120, "ingest": {"timestamp": now - 300_000}}
    f = verify._emptied("db-01", young, archived, None)
    assert f.last_seq == 120 and "the archive holds links up to 120" in f.detail
    assert verify._emptied("db-01", None, archived, now - 200_000) is None


def test_a_link_timed_far_ahead_is_due_a_head_by_when_it_was_shipped():
    """A forged append timed days ahead does not put off the heads' judgement: the job counts such a
    record at its shipping time, and so does verify."""
    from auditpipe.evidence import verify

    now = 10_000_000_000
    heads = verify._Heads()
    heads.add({"seq": 100, "recorded_at": now - 600_000}, now)
    forged = [{"chain_seq": 101, "event_time": datetime.fromtimestamp((now + 86_400_000) / 1000, timezone.utc),
               "ingest": {"timestamp": now - 500_000}}]
    assert verify._heads_stopped("db-01", 101, heads, now, 60, forged) == [], "by its event time: not due"
    [f] = verify._heads_stopped("db-01", 101, heads, now, 60, forged, 300_000)
    assert (f.kind, f.seq) == ("unanchored", 101)
