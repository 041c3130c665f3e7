"""Signed chain heads and authenticated links (docs/security.md): the keys the job signs heads and links
with, and the checks verify makes.

The job signs each head with Ed25519 (pipelines/flink-job/.../chain/HeadSigner.java) over its fields
as length-prefixed UTF-8 (``signed_bytes``, the same bytes; tests/unit/evidence/test_integrity.py
holds the vector both sides assert). Whoever can write to the store can rewrite events, their
links and the heads there, but cannot sign a head: verify accepts as anchors only heads that the
public key verifies.

Each link also carries ``chain_mac`` made with the link key (evidence/chain.py ``link_mac``). The link
key file holds 64 hex digits a line: the first key links, later ones are former keys verify still accepts.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

TAG = "auditpipe-chain-head/1"


def head_millis(value) -> int | None:
    """A head's time as epoch milliseconds: a date from the store, {"$date": ...} (an ISO string or
    {"$numberLong": ...}) from the manifest's extended JSON, or epoch milliseconds; None for anything else."""
    from datetime import datetime

    from auditpipe.evidence.chain import _plain

    if isinstance(value, dict) and "$date" in value:
        value = value["$date"]
        if isinstance(value, dict):  # {"$numberLong": "..."}
            value = int(next(iter(value.values())))
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _plain(value) if isinstance(value, datetime) else None


def _millis(value) -> int:
    millis = head_millis(value)
    if millis is None:
        raise ValueError(f"not a time: {value!r}")
    return millis


def signed_bytes(head: dict) -> bytes:
    """What a head's signature covers: each field as ``<byte length>:<UTF-8 bytes>,``."""
    previous = head.get("previous_seq")
    fields = (TAG, head["server"], head.get("chain") or "", str(int(head["seq"])),
              "" if previous is None else str(int(previous)), head["digest"], head.get("last_event_id") or "",
              str(_millis(head["last_event_time"])), str(_millis(head["recorded_at"])))
    out = bytearray()
    for field in fields:
        data = field.encode("utf-8", "replace")
        out += f"{len(data)}:".encode() + data + b","
    return bytes(out)


def key_id(public_key) -> str:
    """The first 16 hex digits of the SHA-256 of the public key's DER (SubjectPublicKeyInfo) form."""
    from cryptography.hazmat.primitives import serialization

    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:16]


def make_key_pair(signing_key_file: Path, public_key_file: Path) -> bool:
    """Makes the key pair unless the signing key exists: the private key and its public key in
    ``signing_key_file`` (mode 0600, for the job), the public key alone in ``public_key_file``
    (for verify). Returns whether it made one."""
    if signing_key_file.exists():
        if not public_key_file.exists():  # the public half can always be had again from the pair
            public_key_file.write_bytes(_public_pem(load_signing_public_key(signing_key_file)))
        return False
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    signing_key_file.parent.mkdir(parents=True, exist_ok=True)
    signing_key_file.parent.chmod(0o700)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    signing_key_file.touch(mode=0o600)
    signing_key_file.chmod(0o600)
    signing_key_file.write_bytes(private + _public_pem(key.public_key()))
    public_key_file.parent.mkdir(parents=True, exist_ok=True)
    public_key_file.write_bytes(_public_pem(key.public_key()))
    return True


def _public_pem(public_key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def load_signing_public_key(signing_key_file: Path):
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_private_key(signing_key_file.read_bytes(), password=None).public_key()


def load_public_keys(public_key_file: Path) -> dict:
    """The Ed25519 public keys in ``public_key_file`` by key id: one PEM block each, the job's current key
    and the former ones whose heads stay valid (rotation, docs/security.md). ValueError with the reason
    when it holds none, or something else."""
    import re

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    text = public_key_file.read_bytes()
    blocks = re.findall(rb"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", text, re.S)
    if not blocks:
        raise ValueError(f"{public_key_file} holds no public key (PEM PUBLIC KEY)")
    keys = {}
    for n, block in enumerate(blocks, 1):
        key = serialization.load_pem_public_key(block)
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise ValueError(f"{public_key_file}: key {n} is a {type(key).__name__}, not an Ed25519 public key")
        keys[key_id(key)] = key
    return keys


@dataclass(frozen=True)
class HeadCheck:
    state: str  # "signed": the key verifies it; "unsigned"; "other_key": signed by a key not given; "forged"
    detail: str = ""


def check(head: dict, public_keys: dict) -> HeadCheck:
    """Whether a key of ``public_keys`` ({key id: key}, ``load_public_keys``) verifies ``head``'s signature:
    the one its ``key_id`` names."""
    from cryptography.exceptions import InvalidSignature

    signature = head.get("signature")
    if signature is None:
        return HeadCheck("unsigned")
    key = public_keys.get(head.get("key_id"))
    if key is None:
        return HeadCheck("other_key", f"signed by key {head.get('key_id')!r}, not by "
                                      f"{' or '.join(sorted(public_keys))}")
    try:
        key.verify(base64.b64decode(signature, validate=True), signed_bytes(head))
    except (InvalidSignature, ValueError, TypeError, KeyError) as e:
        return HeadCheck("forged", f"its signature does not verify ({type(e).__name__})")
    return HeadCheck("signed")


def link_key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def load_link_keys(path: Path) -> list[bytes]:
    """The keys of a link key file, the one that links first; ValueError with the reason for a bad file."""
    keys = []
    for number, line in enumerate(path.read_text(encoding="ascii", errors="replace").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) != 32:
            raise ValueError(f"{path} line {number}: a key is 64 hex digits (32 bytes) on a line of its own")
        keys.append(key)
    if not keys:
        raise ValueError(f"{path} holds no key (64 hex digits on a line)")
    return keys


def make_link_key(path: Path, *copies: Path) -> bool:
    """Makes the link key (mode 0600) unless it exists, and writes it to each of ``copies`` (the job's
    copy in a deployment) where they differ. Returns whether it made one."""
    import os

    made = not path.exists()
    if made:
        write_secret(path, b"# the chain's link key (docs/security.md): the first key links\n"
                      + os.urandom(32).hex().encode() + b"\n")
    for copy in copies:
        if copy != path and (not copy.exists() or copy.read_bytes() != path.read_bytes()):
            write_secret(copy, path.read_bytes())
    return made


def write_secret(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` (its folder made), readable by its owner alone (0600) before anything is in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_bytes(data)
