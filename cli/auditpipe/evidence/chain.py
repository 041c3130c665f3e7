"""Tamper evidence: recompute each server's hash chain and report the first broken link (docs/archive.md).

The job links every stored event into its server's chain (pipelines/flink-job/.../chain/EventChain.java):
``chain_seq`` 1, 2, 3, ... and ``chain_digest`` = SHA-256 of (previous digest in hex, a newline, the
event's canonical content), the first link following the empty string, and, with the chain's link key,
``chain_mac`` (evidence/signing.py ``link_mac``), which authenticates the link. The canonical content is
the document without the chain fields, as JSON with sorted keys, no whitespace, times as integer
milliseconds: what ``canonical`` below computes, tested against the job's vectors
(tests/unit/test_chain.py). Every minute the job also writes each server's head (its last link's
number and digest) to the chain-heads collection and the archive's manifest: anchors that a
rewrite of the chain itself does not match.

``verify_links`` is the whole judgement, for one server's documents from one place (the store or
the archive); it knows nothing about where they came from.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from auditpipe import contract

CHAIN = "chain"  # the imported chain an event or head belongs to; absent: the server's live chain
SEQ = "chain_seq"
DIGEST = "chain_digest"
MAC = "chain_mac"
LINK_TAG = "auditpipe-chain-link/1"
MAC_HEX = 32  # the first 16 bytes of the HMAC
#: the fields a link's digest does not cover (the job's EventDocument.CHAIN_FIELDS, through the contract)
CHAIN_FIELDS = frozenset(contract.event_fields("chain_fields"))
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _plain(value: Any) -> Any:
    """A document's value as the canonical form sees it: times as integer milliseconds since the epoch."""
    if isinstance(value, datetime):
        if value.tzinfo is None:  # pymongo's default: naive UTC
            value = value.replace(tzinfo=timezone.utc)
        delta = value - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


#: a slim document's canonical content, computed when it was read (``slim``)
CANONICAL = "\x00canonical"
#: the fields verification reads besides the canonical content
SLIM_FIELDS = ("_id", "server", CHAIN, SEQ, DIGEST, MAC, "event_time", "event_time_trusted", "line_sha256")
#: a slim document's shipping time (its ``ingest.timestamp``) in epoch milliseconds
SHIPPED = "\x00shipped"


def slim(doc: dict) -> dict:
    """What verification needs of a document: a few fields and its canonical content, less than half
    the memory of the document as read (bench/README.md); ``Kept`` drops the content once the
    document's links are computed."""
    out = {k: doc[k] for k in SLIM_FIELDS if k in doc}
    shipped = shipped_ms(doc)
    if shipped is not None:
        out[SHIPPED] = shipped
    out[CANONICAL] = canonical(doc)
    return out


def shipped_ms(doc: dict) -> int | None:
    """When a document's line was shipped (its ``ingest.timestamp``, the Kafka record's time), in epoch ms."""
    if SHIPPED in doc:
        return doc[SHIPPED]
    ingest = doc.get("ingest")
    t = _plain(ingest.get("timestamp")) if isinstance(ingest, dict) else None
    return t if isinstance(t, int) and not isinstance(t, bool) else None


def effective_ms(doc: dict, max_ahead_ms: int | None) -> int | None:
    """The time the job judged a document by (IngestedEvent.eventTimeMillis): its event time, or its
    shipping time when the event time is untrusted: flagged so, or further ahead of the shipping time than
    ``max_ahead_ms`` (the job's event-time.max-ahead), which the job would have flagged."""
    t = _plain(doc.get("event_time"))
    shipped = shipped_ms(doc)
    if shipped is not None and (doc.get("event_time_trusted") is False or not isinstance(t, int)
                                or (max_ahead_ms is not None and t > shipped + max_ahead_ms)):
        return shipped
    return t if isinstance(t, int) else None


def canonical(doc: dict) -> str:
    """The canonical content of an event document: what its link's digest covers."""
    if CANONICAL in doc:
        return doc[CANONICAL]
    if LINKS in doc:
        raise KeyError(f"the canonical content of {doc.get('_id')} was not kept (Kept): ask link() or content()")
    body = {k: _plain(v) for k, v in doc.items() if k not in CHAIN_FIELDS}
    # default=str: a type the job never writes (a column added to an archive file) still gets a form,
    # which then cannot match the digest
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _digest(previous: str, content: str) -> bytes:
    # encoded as Java's getBytes encodes: a lone surrogate becomes '?'
    return hashlib.sha256((previous + "\n" + content).encode("utf-8", "replace")).digest()


def link(previous: str, doc: dict) -> str:
    """The digest of the link after ``previous`` ("" for the first) for this document."""
    links = doc.get(LINKS)
    if links is not None and CANONICAL not in doc:
        if previous not in links:
            raise KeyError(f"link of {doc.get('_id')} after {previous[:16]}...: not kept (Kept.refresh reads it again)")
        return links[previous].hex()
    return _digest(previous, canonical(doc)).hex()


def link_mac(key: bytes, seq: int, digest: str) -> str:
    """The MAC of link ``seq`` with ``digest`` under ``key``: HMAC-SHA-256 over ``auditpipe-chain-link/1``,
    the link's number and its digest, each on a line, its first 16 bytes in hex (the job's LinkKey.mac;
    the vector in tests/unit/evidence/test_chain.py). The digest covers the event and every link before it."""
    return _mac(_keyed(key), _link_message(seq, digest))


def _link_message(seq: int, digest: str) -> bytes:
    return f"{LINK_TAG}\n{seq}\n{digest}".encode("ascii", "replace")


def _mac(state: tuple, message: bytes) -> str:
    inner, outer = state
    h = inner.copy()
    h.update(message)
    o = outer.copy()
    o.update(h.digest())
    return o.hexdigest()[:MAC_HEX]


@functools.lru_cache(maxsize=16)
def _keyed(key: bytes) -> tuple:
    """HMAC-SHA-256 (RFC 2104) under ``key`` as its two SHA-256 states after the padded key. A MAC
    from copies of them costs 0.7 us, from ``hmac.new`` 1.9 and from a copy of an ``hmac.HMAC`` 1.2
    (2026-12-05): what keeps checking every link's MAC near a tenth of a verification pass's
    judgement (bench/verify_cost.py). tests/unit/evidence/test_chain.py holds it to ``hmac``'s result."""
    block = hashlib.sha256().block_size
    padded = (hashlib.sha256(key).digest() if len(key) > block else key).ljust(block, b"\0")
    return (hashlib.sha256(bytes(b ^ 0x36 for b in padded)), hashlib.sha256(bytes(b ^ 0x5C for b in padded)))


def when(ms: int) -> str:
    """Epoch milliseconds as a UTC time a person reads in a finding."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def content(doc: dict) -> bytes:
    """The SHA-256 of a document's canonical content: what tells identical copies apart from others."""
    kept = doc.get(CONTENT)
    return kept if kept is not None else hashlib.sha256(canonical(doc).encode("utf-8", "replace")).digest()


#: what a kept document's canonical content gave, once it was dropped: {previous digest: its link after it}
LINKS = "\x00links"
#: the SHA-256 of a kept document's canonical content (``content``)
CONTENT = "\x00content"


class Kept:
    """One place's documents as a verification pass keeps them while it reads them, by server, in any
    order: each ``slim``, and once the documents of the two links before it are read, its canonical
    content (most of a slim document's memory) is dropped for what it gives: its link's digest after
    each of theirs (``LINKS``, all ``verify_links`` asks of it: its own link, and whether it was swapped
    with the one before) and its content's hash (``CONTENT``: identical copies). A pass reading newest
    first thus holds the canonical content of about two documents a server, not of all of them.

    A document read later at one of those two links (a second document claiming a link: an insert)
    makes the ones after it stale: ``refresh`` reads them again, whole."""

    def __init__(self) -> None:
        self.docs: dict[str, list[dict]] = {}
        # each server's documents by link: the document, or a list of those claiming the same link
        self._at: dict[str, dict[int, dict | list[dict]]] = {}
        self._stale: dict[str, list[dict]] = {}

    def add(self, server: str, doc: dict) -> None:
        """Keeps ``doc`` (as read) among ``server``'s documents."""
        kept = slim(doc)
        self.docs.setdefault(server, []).append(kept)
        self.note(server, kept)

    def note(self, server: str, doc: dict) -> None:
        """Takes ``doc`` into account for the documents kept after it, without keeping it (a document
        judged with them from elsewhere: one the store refused)."""
        if not _linked(doc):
            return
        at = self._at.setdefault(server, {})
        seq = doc[SEQ]
        held = at.get(seq)
        at[seq] = doc if held is None else (held if isinstance(held, list) else [held]) + [doc]
        for later in (seq + 1, seq + 2):
            for d in _docs_at(at, later):
                if LINKS in d and doc[DIGEST] not in d[LINKS]:
                    self._stale.setdefault(server, []).append(d)
        for t in (seq, seq + 1, seq + 2):
            for d in _docs_at(at, t):
                self._settle(at, d)

    def _settle(self, at: dict[int, dict | list[dict]], doc: dict) -> None:
        if CANONICAL not in doc:
            return
        seq = doc[SEQ]
        before = [_docs_at(at, seq - k) for k in (1, 2) if seq - k >= 1]
        if not all(before):
            return  # a link before it not read (yet): it keeps its content
        previous = {d[DIGEST] for docs in before for d in docs} | ({""} if seq <= 2 else set())
        text = doc.pop(CANONICAL)
        doc[LINKS] = {p: _digest(p, text) for p in previous}
        doc[CONTENT] = hashlib.sha256(text.encode("utf-8", "replace")).digest()

    def refresh(self, server: str, read) -> int:
        """Reads ``server``'s stale documents again (``read``: ids -> the documents still stored, by id),
        whole; one no longer stored is dropped (the capped collection trimmed it meanwhile). Returns
        how many were read again."""
        stale = {id(d): d for d in self._stale.pop(server, [])}
        if not stale:
            return 0
        found = read([d.get("_id") for d in stale.values()])
        for d in stale.values():
            doc = found.get(d.get("_id"))
            if doc is None:
                self.docs[server] = [k for k in self.docs[server] if k is not d]
                continue
            d.clear()
            d.update(slim(doc))
        return len(stale)


def _docs_at(at: dict[int, dict | list[dict]], seq: int) -> list[dict]:
    held = at.get(seq)
    return [] if held is None else held if isinstance(held, list) else [held]


@dataclass
class Finding:
    """Something wrong with the chain: kind is edited, deleted, inserted, reordered, head_mismatch,
    unauthenticated (links whose MAC the link key does not give: written by someone without the key),
    time_ahead (an event time further ahead of its shipping time than the job trusts, not flagged so), or
    unreadable (an archive file that cannot be read, so its links cannot be checked)."""
    kind: str
    server: str
    seq: int | None
    event_id: str | None
    detail: str
    last_seq: int | None = None  # a deletion: the last missing link; unauthenticated: the last such link

    def line(self, where: str) -> str:
        at = f"link {self.seq}" if self.seq is not None else ("" if self.kind in ("unreadable", "deleted") else "no link")
        event = f" event {self.event_id}" if self.event_id else ""
        return f"{where}: {' '.join(x for x in (self.server, at) if x)}{event}: {self.kind.upper()}: {self.detail}"


@dataclass
class ServerReport:
    server: str
    first_seq: int | None = None
    last_seq: int | None = None
    links: int = 0
    heads_checked: int = 0
    anchored_to: int | None = None  # the last link a head confirmed
    identical_copies: int = 0  # a link present twice, the same document (an archive compaction caught midway)
    findings: list[Finding] = field(default_factory=list)


def _id(doc: dict) -> str | None:
    v = doc.get("_id")
    return None if v is None else str(v)


@dataclass(frozen=True)
class Anchor:
    """A link verified earlier, which the links after it continue from (an incremental pass), with the
    digest of the link before it when known (to check the link's own content again)."""
    seq: int
    digest: str
    event_id: str | None
    previous: str | None = None


def verify_links(server: str, docs: Iterable[dict], heads: dict[int, str], first_seq: int | None = None,
                 last_seq: int | None = None, expected_last: int | None = None, why: str = "",
                 after: Anchor | None = None, link_keys: list[bytes] | None = None,
                 max_ahead_ms: int | None = None) -> ServerReport:
    """Checks one server's chain over ``docs`` (any order) against its ``heads`` {seq: digest}.

    Links before the first document present are not an alarm (the capped collection trims the
    oldest events; an archive starts somewhere): the first link present is taken as given, and is
    checked by every link after it and by the heads. ``first_seq``/``last_seq`` limit the links judged.
    ``expected_last``: a link known to exist (a head, the other place's newest link; ``why`` says
    which): when the links present end before it, the ones after them were deleted from the end.
    Every document without a link is an insert: the job links every event it stores.
    ``after``: the docs are the links after this one, verified earlier: the first of them follows
    its digest, links between them are missing, and a document claiming a link up to it is an insert.
    ``link_keys``: the chain's link keys (evidence/signing.py ``load_link_keys``): a link whose MAC none
    of them gives is UNAUTHENTICATED (consecutive ones, one finding); None: MACs are not checked.
    ``max_ahead_ms``: the job's event-time.max-ahead: a link whose event time is further ahead of its
    shipping time without ``event_time_trusted: false`` (which the job sets on such an event) is TIME_AHEAD
    (consecutive ones, one finding); None: not judged.
    """
    report = ServerReport(server)
    by_seq: dict[int, list[dict]] = {}
    docs = list(docs)
    for doc in docs:
        seq = doc.get(SEQ)
        if not _linked(doc):
            report.findings.append(Finding("inserted", server, None, _id(doc),
                                           "a document without a chain link: the job did not write it"))
            continue
        if after is not None and seq <= after.seq:
            report.findings.append(Finding(
                "inserted", server, seq, _id(doc),
                f"a document stored after link {after.seq} was verified claims link {seq}, which comes before it"))
            continue
        if (first_seq is not None and seq < first_seq) or (last_seq is not None and seq > last_seq):
            continue
        by_seq.setdefault(seq, []).append(doc)
    if not by_seq:
        if after is not None and expected_last is not None and last_seq is None and expected_last > after.seq:
            report.findings.append(_deleted_at_end(server, after.seq, after.event_id, expected_last, why))
        return report
    seqs = sorted(by_seq)
    report.first_seq, report.last_seq = seqs[0], seqs[-1]
    forged: list[list] = []  # runs of unauthenticated links: [first, last, first event id, whether it has a MAC]
    ahead: list[list] = []  # runs of links timed too far ahead: [first, last, first event id, by how much in ms]

    states = None if link_keys is None else [_keyed(k) for k in link_keys]

    def authentic(d: dict) -> bool:
        return states is None or _authentic(d, states)

    previous: str | None = "" if seqs[0] == 1 else None
    previous_doc: dict | None = None
    if after is not None:
        if seqs[0] == after.seq + 1:
            previous, previous_doc = after.digest, {"_id": after.event_id}
        else:
            missing = (f"link {after.seq + 1}" if seqs[0] == after.seq + 2
                       else f"links {after.seq + 1} to {seqs[0] - 1}")
            report.findings.append(Finding(
                "deleted", server, after.seq + 1, None,
                f"{missing} missing between event {after.event_id} (link {after.seq}, verified earlier) and event "
                f"{_id(by_seq[seqs[0]][0])} (link {seqs[0]}): deleted", last_seq=seqs[0] - 1))
    for i, seq in enumerate(seqs):
        if i > 0 and seq != seqs[i - 1] + 1:
            missing = (f"link {seqs[i - 1] + 1}" if seq == seqs[i - 1] + 2
                       else f"links {seqs[i - 1] + 1} to {seq - 1}")
            report.findings.append(Finding(
                "deleted", server, seqs[i - 1] + 1, None,
                f"{missing} missing between event {_id(previous_doc)} (link {seqs[i - 1]}) and event "
                f"{_id(by_seq[seq][0])} (link {seq}): deleted", last_seq=seq - 1))
            previous = None
        candidates = _without_identical_copies(by_seq[seq], report)
        doc = candidates[0]
        if len(candidates) > 1:
            genuine = sorted((d for d in candidates if previous is not None and link(previous, d) == d[DIGEST]),
                             key=lambda d: not authentic(d))  # the one the key authenticates first
            authenticated = [d for d in candidates if authentic(d)]
            doc = genuine[0] if genuine else authenticated[0] if authenticated else candidates[0]
            for other in candidates:
                if other is not doc:
                    report.findings.append(Finding(
                        "inserted", server, seq, _id(other),
                        f"a second document claims link {seq}, already held by event {_id(doc)}"))
        report.links += 1
        if not authentic(doc):
            _run(forged, seq, doc, MAC in doc)
        by = _ahead_by(doc, max_ahead_ms)
        if by is not None:
            _run(ahead, seq, doc, by)
        if previous is not None and link(previous, doc) != doc[DIGEST]:
            report.findings.append(_broken(server, seq, doc, previous, previous_doc, by_seq))
        head = heads.get(seq)
        if head is not None:
            report.heads_checked += 1
            if head != doc[DIGEST]:
                report.findings.append(Finding(
                    "head_mismatch", server, seq, _id(doc),
                    f"the head recorded for link {seq} says {head[:16]}..., the document says {doc[DIGEST][:16]}...:"
                    " the chain up to here was rewritten"))
            elif not report.findings:
                report.anchored_to = seq
        previous, previous_doc = doc[DIGEST], doc
    report.findings += _of_runs("unauthenticated", server, forged, lambda which, has_mac: (
        f"{which} {'carry a MAC the link key does not give' if has_mac else 'carry no MAC'}: written by someone "
        "without the chain's link key, not by the job"))
    report.findings += _of_runs("time_ahead", server, ahead, lambda which, by: (
        f"{which}: event time {by / 60_000:,.0f} min ahead of when the line was shipped"
        f"{' (the first)' if ' to ' in which else ''}, beyond the "
        f"{max_ahead_ms / 60_000:g} min the job trusts, yet not flagged event_time_trusted: false as the job flags "
        "such an event: not written by the job"))
    if expected_last is not None and last_seq is None and expected_last > seqs[-1]:
        report.findings.append(_deleted_at_end(server, seqs[-1], _id(previous_doc) if previous_doc else None,
                                               expected_last, why))
    return report


def _deleted_at_end(server: str, last: int, last_id: str | None, expected_last: int, why: str) -> Finding:
    gone = f"link {expected_last}" if expected_last == last + 1 else f"links {last + 1} to {expected_last}"
    return Finding("deleted", server, last + 1, None,
                   f"{gone} missing at the end, after event {last_id} (link {last}), though {why}: deleted",
                   last_seq=expected_last)


def _of_runs(kind: str, server: str, runs: list[list], detail) -> list[Finding]:
    """A finding for each run of links (``_run``): ``detail(which links, what the first one showed)``."""
    return [Finding(kind, server, first, event_id, detail(f"link {first}" if first == last else
                                                          f"links {first} to {last}", what), last_seq=last)
            for first, last, event_id, what in runs]


def _run(runs: list[list], seq: int, doc: dict, what) -> None:
    """Adds link ``seq`` to the last run of ``runs`` when it follows it, else starts a run."""
    if runs and runs[-1][1] == seq - 1:
        runs[-1][1] = seq
    else:
        runs.append([seq, seq, _id(doc), what])


def _ahead_by(doc: dict, max_ahead_ms: int | None) -> int | None:
    """How far a document's event time is ahead of its shipping time, when beyond ``max_ahead_ms`` and not
    flagged untrusted; else None."""
    if max_ahead_ms is None or doc.get("event_time_trusted") is False:
        return None
    t, shipped = _plain(doc.get("event_time")), shipped_ms(doc)
    if not isinstance(t, int) or shipped is None or t <= shipped + max_ahead_ms:
        return None
    return t - shipped


def _authentic(doc: dict, states: list[tuple]) -> bool:
    """Whether one of the link keys (as ``_keyed`` states) gives ``doc``'s MAC."""
    mac = doc.get(MAC)
    if not isinstance(mac, str):
        return False
    message = _link_message(doc[SEQ], doc[DIGEST])  # once for every key of the ring
    for state in states:  # a loop: any() over a generator costs 0.4 us an event more (bench/verify_cost.py)
        if _mac(state, message) == mac:
            return True
    return False


def _linked(doc: dict) -> bool:
    seq = doc.get(SEQ)
    return isinstance(seq, int) and not isinstance(seq, bool) and isinstance(doc.get(DIGEST), str)


def _without_identical_copies(candidates: list[dict], report: ServerReport) -> list[dict]:
    if len(candidates) == 1:
        return candidates
    kept, seen = [], set()
    for d in candidates:
        key = (_id(d), d.get(DIGEST), content(d))
        if key in seen:
            report.identical_copies += 1
            continue
        seen.add(key)
        kept.append(d)
    return kept


def _broken(server: str, seq: int, doc: dict, previous: str, previous_doc: dict | None,
            by_seq: dict[int, list[dict]]) -> Finding:
    """Names what most likely happened at a link whose digest does not follow."""
    after = by_seq.get(seq + 1)
    if after and link(previous, after[0]) in (doc[DIGEST], after[0][DIGEST]):
        return Finding("reordered", server, seq, _id(doc),
                       f"link {seq} holds what belongs at link {seq + 1} (event {_id(after[0])}) and the other way"
                       " round: the two events were swapped")
    if previous_doc is not None:
        return Finding("edited", server, seq, _id(doc),
                       f"its content does not give its digest: event {_id(doc)} was changed after it was written"
                       f" (or event {_id(previous_doc)} before it was changed and its digest recomputed)")
    return Finding("edited", server, seq, _id(doc), "its content does not give its digest")


def explain_repeats(findings: list[Finding], stored: list[dict], archived: list[dict]) -> tuple[list[Finding], list[str]]:
    """Links missing from the store that the archive shows to be copies of events stored earlier.

    A line re-sent after the job forgot its id (later than the stats' lateness) is linked again;
    its insert into the store is a duplicate, ignored, so the store lacks that link while the archive
    has it (docs/archive.md, known limits). Such a gap is no deletion when, for every missing link,
    the archive's row there has the id of an event the store holds at an earlier link, from the
    same line (line_sha256). Returns the findings left and a note for each gap explained.
    """
    by_id = {d.get("_id"): d for d in stored}
    at = {r.get(SEQ): r for r in archived}
    left, notes = [], []
    for f in findings:
        if f.kind != "deleted" or f.seq is None or f.last_seq is None:
            left.append(f)
            continue
        copies = []
        for seq in range(f.seq, f.last_seq + 1):
            row = at.get(seq)
            first = by_id.get(row.get("_id")) if row else None
            if not (first and first.get(SEQ, seq) < seq and first.get("line_sha256") == row.get("line_sha256")):
                copies = None
                break
            copies.append(row["_id"])
        if copies is None:
            left.append(f)
        else:
            notes.append(f"{f.server}: links {f.seq} to {f.last_seq} are not in the store because they are copies of "
                         f"events stored earlier ({', '.join(copies[:3])}{'...' if len(copies) > 3 else ''}), re-sent "
                         "after the job had forgotten their ids; the archive holds them: not a deletion")
    return left, notes


def compare_copies(server: str, store: dict[int, str], archive: dict[int, str]) -> list[Finding]:
    """Links present in both the store and the archive must have the same digest."""
    out = []
    for seq in sorted(set(store) & set(archive)):
        if store[seq] != archive[seq]:
            out.append(Finding("edited", server, seq, None,
                               "the store and the archive hold different events for this link"))
            break
    return out
