"""Reviewers' own keys (docs/reviews.md "Who the reviewer is"): each reviewer signs their decisions with an
Ed25519 key only they hold; the enrolled reviewers' public keys (``review.reviewers_file``) say whose a
signature is. The store's users hold no reviewer's key, so they can neither forge a decision nor change one
a reviewer signed.

The reviewers file holds one key a line, ``NAME ed25519 BASE64`` (the raw 32-byte public key), ``#``
comments allowed. A name may have several keys (a new one after a lost laptop): a key stays in the file as
long as decisions signed with it are kept, or they no longer verify.

A decision's signature covers ``auditpipe-review-decision/1``, its link number and the SHA-256 of its
canonical content without the chain fields and the signature (``signed_bytes``); its link's digest then
covers the signature too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from auditpipe import paths
from auditpipe.errors import UserError

TAG = "auditpipe-review-decision/1"
ALGORITHM = "ed25519"
#: a decision's signature (base64) and the id of the key that made it (in its identity block)
SIGNATURE = "signature"
KEY_ID = "key_id"
#: an enrolled reviewer's name (the decision schema's ``reviewer`` pattern): what a decision records and
#: reports show, so nothing a terminal or a page could take for markup or a control
NAME = re.compile(json.loads((paths.SCHEMAS / "review-decision.schema.json").read_text())
                  ["properties"]["reviewer"]["pattern"])
#: where `review enroll` and `review decide` look for the reviewer's private key when given none
KEY_ENV = "AUDITPIPE_REVIEWER_KEY"


def default_key_file(environ=os.environ) -> Path:
    """The reviewer's private key: $AUDITPIPE_REVIEWER_KEY, else auditpipe/reviewer.key in the user's
    configuration directory ($XDG_CONFIG_HOME, else ~/.config): the person's, not the stack's."""
    if environ.get(KEY_ENV):
        return Path(os.path.expanduser(environ[KEY_ENV]))
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "auditpipe" / "reviewer.key"


def key_id(public_key) -> str:
    """The first 16 hex digits of the SHA-256 of the raw public key."""
    return hashlib.sha256(_raw(public_key)).hexdigest()[:16]


def _raw(public_key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class Reviewer:
    name: str
    key_id: str
    public_key: object


def load_reviewers(path: Path) -> dict[str, Reviewer]:
    """The enrolled keys by key id; {} when the file does not exist. UserError naming a bad line."""
    from cryptography.hazmat.primitives.asymmetric import ed25519

    if not path.exists():
        return {}
    out: dict[str, Reviewer] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        try:
            if len(parts) != 3 or parts[1] != ALGORITHM or not NAME.search(parts[0]):
                raise ValueError
            key = ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(parts[2], validate=True))
        except ValueError:
            raise UserError(f"{path} line {number}: a reviewer's key is a line 'NAME ed25519 BASE64' (NAME of letters, "
                            "digits and . _ @ + -); `auditpipe review enroll` writes one") from None
        out[key_id(key)] = Reviewer(parts[0], key_id(key), key)
    return out


def load_private_key(path: Path):
    """The reviewer's Ed25519 private key (``-``: from standard input, as a container is given it); UserError
    saying what to do when there is none."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        key = serialization.load_pem_private_key(data, password=None)
    except FileNotFoundError:
        raise UserError(f"no reviewer's key at {path}: a reviewer signs each decision with their own key "
                        f"(`auditpipe review enroll NAME --key {path}` makes and enrolls one; --key or {KEY_ENV} "
                        "names another); nothing was recorded") from None
    except (OSError, ValueError, TypeError) as e:
        raise UserError(f"{path} is not a reviewer's key (an unencrypted Ed25519 private key, PEM): {e}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise UserError(f"{path} holds a {type(key).__name__}, not an Ed25519 private key")
    return key


def enroll(reviewers_file: Path | None, name: str, key_file: Path) -> tuple[Reviewer, bool]:
    """Enrolls ``name`` with the key in ``key_file``, made there (mode 0600) when it does not exist; returns
    the enrolled key and whether it was made. Refuses a bad name and a key enrolled already. Without a
    ``reviewers_file`` the key is made or read and nothing is enrolled (``line`` gives what to add)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    if not NAME.search(name):
        raise UserError(f"'{name[:60]}' is not a reviewer's name here: letters, digits and . _ @ + - (at most 200), "
                        "beginning with a letter or digit")
    made = not key_file.exists()
    if made:
        from auditpipe.evidence.signing import write_secret

        key = ed25519.Ed25519PrivateKey.generate()
        write_secret(key_file, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
    else:
        key = load_private_key(key_file)
    public = key.public_key()
    kid = key_id(public)
    if reviewers_file is None:
        return Reviewer(name, kid, public), made
    enrolled = load_reviewers(reviewers_file)
    if kid in enrolled:
        raise UserError(f"the key in {key_file} is enrolled already, as {enrolled[kid].name} ({reviewers_file})")
    reviewers_file.parent.mkdir(parents=True, exist_ok=True)
    with open(reviewers_file, "a", encoding="utf-8") as f:
        f.write(line(Reviewer(name, kid, public)) + "\n")
    return Reviewer(name, kid, public), made


def line(reviewer: Reviewer) -> str:
    """The reviewers file's line of ``reviewer``."""
    return f"{reviewer.name} {ALGORITHM} {base64.b64encode(_raw(reviewer.public_key)).decode()}"


def signed_bytes(doc: dict) -> bytes:
    """What a decision's signature covers: the tag, its link number and the SHA-256 of its canonical content
    without the signature (evidence/chain.py ``canonical``, which leaves out the chain fields)."""
    from auditpipe.evidence.chain import SEQ, canonical

    body = {k: v for k, v in doc.items() if k != SIGNATURE}
    content = hashlib.sha256(canonical(body).encode("utf-8", "replace")).hexdigest()
    return f"{TAG}\n{doc.get(SEQ)}\n{content}".encode()


def sign(private_key, doc: dict) -> str:
    return base64.b64encode(private_key.sign(signed_bytes(doc))).decode()


def check(doc: dict, reviewers: dict[str, Reviewer]) -> str | None:
    """Why ``doc`` is not a decision its reviewer signed (None when it is): no signature, a key not enrolled,
    a key enrolled for another name, or a signature that does not verify (the decision changed since)."""
    from cryptography.exceptions import InvalidSignature

    identity = doc.get("identity")
    kid = identity.get(KEY_ID) if isinstance(identity, dict) else None
    signature = doc.get(SIGNATURE)
    if not isinstance(signature, str) or not isinstance(kid, str):
        return "not signed by a reviewer's key"
    reviewer = reviewers.get(kid)
    if reviewer is None:
        return f"signed with key {kid[:16]}, which is not an enrolled reviewer's (review.reviewers_file)"
    if reviewer.name != doc.get("reviewer"):
        return f"names {doc.get('reviewer')!s:.60} as its reviewer but is signed with {reviewer.name}'s key"
    try:
        reviewer.public_key.verify(base64.b64decode(signature, validate=True), signed_bytes(doc))
    except (InvalidSignature, ValueError, TypeError):
        return f"its signature by {reviewer.name}'s key does not verify: the decision is not as signed"
    return None
