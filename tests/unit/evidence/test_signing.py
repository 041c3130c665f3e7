"""Signed chain heads: the bytes a signature covers (the vector HeadSignerTest.java asserts too), the key pair,
and the check verify makes of each head."""

from __future__ import annotations

import base64
import stat
from datetime import datetime, timezone

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
    public = signing.load_public_key(pub_file)
    kid = signing.key_id(public)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    signed = sign(private, HEAD)
    assert signing.check(signed, public, kid).state == "signed"
    assert signing.check(HEAD, public, kid).state == "unsigned"
    assert signing.check({**signed, "digest": "cd" * 32}, public, kid).state == "forged", "an edited head"
    assert signing.check({**signed, "previous_seq": 16}, public, kid).state == "forged"
    assert signing.check({**signed, "signature": "not base64!"}, public, kid).state == "forged"
    stranger = sign(ed25519.Ed25519PrivateKey.generate(), HEAD)
    assert signing.check(stranger, public, kid).state == "other_key", "another key's head is no anchor"
    assert signing.check({**stranger, "key_id": kid}, public, kid).state == "forged"
    pub_file.unlink()
    signing.make_key_pair(key_file, pub_file)
    assert signing.key_id(signing.load_public_key(pub_file)) == kid, "the public half made again from the pair"
