"""`auditpipe verify`: recompute every server's chain over the store and the archive (docs/archive.md)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone

from auditpipe import contract
from auditpipe.archive import reader
from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.evidence import reviews, signing
from auditpipe.evidence.chain import (
    CHAIN,
    DIGEST,
    SEQ,
    Anchor,
    Finding,
    Kept,
    ServerReport,
    _plain,
    compare_copies,
    effective_ms,
    explain_repeats,
    link,
    slim,
    verify_links,
    when,
)
from auditpipe.store.client import mongo_client
from auditpipe.terminal import shown

#: How long after its head an event may take to reach the store and the archive: the job writes both at
#: each checkpoint (5 s), and the archive's files are committed after it. A link a head names that a place
#: lacks is a deletion only once its head is older than this; until then verify says it is on its way.
IN_FLIGHT_S = 120
#: Documents per batch read from the store, and between two of a ``Pacer``'s pauses.
READ_BATCH = 2000
#: Links missing between those a pass read are looked for once more among the rows stored from this long
#: before the newest row its walk began at (``_late_links``): the events' writer has two batches in
#: flight on the local FerretDB, which gives a batch's rows their record ids (insertion order) when it
#: starts to insert them and commits the two in either order, so a batch can become readable after
#: the newer one above it, below where a walk that began between the two has already read.
LATE_S = 30
#: How long a pass waits, at most, for such links while the store is being written, looking again.
LATE_WAIT_S = 5.0


@dataclass
class Progress:
    """How far a verification of the store got, for the next one to go on from (``verify(after=...)``):
    the newest stored document it read (the events collection is capped, so documents keep the order
    they were inserted in, and every document stored later, forged ones too, comes after it), and each
    server's last link (``Anchor``)."""
    marker: str | None = None
    anchors: dict[str, Anchor] = field(default_factory=dict)
    # documents verified though stored after the marker (links that landed late, ``_late_links``): not
    # read again as new
    seen: list[str] = field(default_factory=list)


@dataclass
class Walk:
    """Where a walk of the local FerretDB's events began: the newest row's record id (``_late_links``)."""
    top: int | None = None


@dataclass
class Verification:
    reports: list[tuple[str, ServerReport]] = field(default_factory=list)  # (where, report)
    findings: list[tuple[str, Finding]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source_gaps: list[dict] = field(default_factory=list)  # record_gap alerts: the server's sequence, not our chain
    collector_gaps: dict[str, list[dict]] = field(default_factory=dict)  # by server: collector-gaps.log's entries
    incremental: bool = False  # only the events stored after ``after`` were read
    progress: Progress | None = None  # with ``after``: where the next incremental verification goes on

    @property
    def clean(self) -> bool:
        return not self.findings


def _in_range(doc: dict, since: datetime | None, until: datetime | None) -> bool:
    t = doc.get("event_time")
    if t is None:
        return False
    ms = _plain(t)  # a datetime from the store, integer milliseconds from the archive
    return (since is None or ms >= _plain(since)) and (until is None or ms < _plain(until))


def _seq_window(docs: list[dict], since, until) -> tuple[int | None, int | None]:
    if since is None and until is None:
        return None, None
    seqs = [d[SEQ] for d in docs if isinstance(d.get(SEQ), int) and _in_range(d, since, until)]
    return (min(seqs), max(seqs)) if seqs else (0, -1)


@dataclass
class _Heads:
    """The heads of one chain, by how long ago the job recorded them."""
    settled: tuple[int, str] | None = None  # (seq, when) of the newest head older than IN_FLIGHT_S
    in_flight: tuple[int, int] | None = None  # (seq, seconds ago) of the newest head younger than that
    newest: tuple[int, int] | None = None  # (seq, recorded_at in ms) of the newest head with a time
    settled_ms: int | None = None  # recorded_at of ``settled``, in ms

    def add(self, head: dict, now_ms: int) -> None:
        seq, at = head["seq"], signing.head_millis(head.get("recorded_at"))
        if at is not None and (self.newest is None or seq > self.newest[0]):
            self.newest = (seq, at)
        if at is not None and now_ms - at < IN_FLIGHT_S * 1000:
            if self.in_flight is None or seq > self.in_flight[0]:
                self.in_flight = (seq, max(0, (now_ms - at) // 1000))
        elif self.settled is None or seq > self.settled[0]:
            self.settled, self.settled_ms = (seq, when(at) if at is not None else "at an unknown time"), at


def _emptied(name: str, heads: _Heads | None, archived: dict | None, oldest_ms: int | None) -> Finding | None:
    """A chain the store holds none of, though a signed head older than IN_FLIGHT_S or the archive (whose
    files are committed after the store has the events) shows its links existed: a deletion unless the
    capped collection's trimming explains it. The cap removes the oldest documents first and never the
    newest, so it explains the loss only when every document the store still holds arrived after the
    chain's newest known link; an empty store, or an older document still there, means its links were
    deleted. Arrival is the Kafka time (``ingest.timestamp``), which orders the store's inserts only
    roughly across servers (each server's partition is read at its own pace), so a document counts as
    older only by more than IN_FLIGHT_S. ``archived``: the archive's newest link of the chain;
    ``oldest_ms``: when the store's oldest document arrived (its ``ingest.timestamp``), None for an
    empty store."""
    known = []  # (link, when it arrived or was recorded in ms, why it is known)
    if heads is not None and heads.settled is not None and heads.settled_ms is not None:
        known.append((heads.settled[0], heads.settled_ms - IN_FLIGHT_S * 1000,
                      f"the signed chain head recorded {heads.settled[1]} names link {heads.settled[0]}"))
    arrived = _plain((archived or {}).get("ingest", {}).get("timestamp")) if archived else None
    if isinstance(arrived, int):
        known.append((archived[SEQ], arrived - IN_FLIGHT_S * 1000,
                      f"the archive holds links up to {archived[SEQ]} (that one arrived at {when(arrived)})"))
    if not known:
        return None
    seq, at, why = max(known, key=lambda k: k[1])
    if oldest_ms is not None and oldest_ms >= at:
        return None
    still = ("the store holds no event at all" if oldest_ms is None
             else f"the store still holds events that arrived before it (the oldest at {when(oldest_ms)})")
    return Finding("deleted", name, None, None,
                   f"none of its links are in the store, though {why}, and {still}: deleted, not trimmed by the "
                   "capped collection", last_seq=seq)


def _oldest_arrival(events) -> int | None:
    """When the store's oldest event arrived (``ingest.timestamp`` in ms; a capped collection returns its
    documents in insertion order when no sort is asked for, on MongoDB and FerretDB), None for an empty
    store or one whose oldest document has no such time (0: judged as older than anything)."""
    for d in events.find({}, {"ingest.timestamp": 1}).limit(1):
        t = (d.get("ingest") or {}).get("timestamp") if isinstance(d.get("ingest"), dict) else None
        return _plain(t) if t is not None else 0
    return None


def _expected_end(heads: _Heads, other: int | None, other_name: str) -> tuple[int | None, str]:
    """The newest link a place must hold, and why: its settled heads, and the other place's newest link."""
    seq, why = None, ""
    if heads.settled is not None:
        seq, why = heads.settled[0], f"the chain head recorded {heads.settled[1]} names link {heads.settled[0]}"
    if other is not None and (seq is None or other > seq):
        seq, why = other, f"the {other_name} holds links up to {other}"
    return seq, why


def _last_link(docs: list[dict]) -> int | None:
    return max((d[SEQ] for d in docs if isinstance(d.get(SEQ), int) and isinstance(d.get(DIGEST), str)), default=None)


def verify(cfg: Config, servers: list[str] | None = None, since: datetime | None = None,
           until: datetime | None = None, store: bool = True, in_archive: bool = True,
           manifest_heads: bool | None = None, head_interval_s: float | None = None,
           after: Progress | None = None, share: float = 1.0,
           collector_gaps: dict[str, list[dict]] | None = None, max_ahead_s: float | None = None) -> Verification:
    """Every server's chain, or only those of ``servers``. ``manifest_heads`` (default: ``in_archive``):
    anchor with the heads of the archive's manifest too, also when its rows are not read.
    ``head_interval_s``: the job's chain.head-interval (stack/job_settings.head_interval_seconds), to
    tell heads that stopped (UNANCHORED); None: not judged. ``max_ahead_s``: the job's event-time.max-ahead
    (stack/job_settings.max_ahead_seconds), to name events timed further ahead than it trusts, unflagged
    (TIME_AHEAD), and judge the heads by the time the job judged each link by; None: not judged.

    ``after`` (the store alone, every server): only the events stored since an earlier verification
    (its ``progress``), each server's links going on from its anchor, which must still be there as
    it was. An edit or deletion of an event verified earlier is not seen so: a full verification
    (``after=Progress()``) reads everything and gives the progress to go on from; so does one whose
    marker or an anchor is gone, and then each server's anchor is a link known to exist (the newest
    ones deleted with their heads still show). The result's ``progress`` is where the next one goes on.

    ``share``: the part of the time the store's events are read in (``Pacer``); below 1 the reading
    pauses between batches, so that a pass beside a running pipeline leaves the store and the cores
    to it (the supervisor's watch); 1 for a person who waits for the answer.

    ``collector_gaps``: the gaps the local collector recorded, by server (stack's
    collector.recorded_gaps); those of a server with a source gap are shown beside it."""
    if after is not None and (servers or since or until or in_archive or not store):
        raise ValueError("verify(after=...) verifies the whole store alone")
    only = set(servers) if servers else None
    s = cfg.store
    db = mongo_client(cfg)[s["database"]]
    events = db[s["events_collection"]]
    root = cfg.archive_path
    result = Verification()

    def unreadable(e: reader.Unreadable, name: str | None) -> None:
        # evidence that cannot be read cannot be verified: a finding, never a crash and never a pass
        result.findings.append(("archive", Finding("unreadable", name or "?", None, None,
                                                          f"{e.reason}: its links cannot be checked")))

    with_manifest = in_archive if manifest_heads is None else manifest_heads
    manifest_heads = []
    if with_manifest:
        try:
            manifest_heads = (reader.chain_heads(root) if only is None
                              else [h for name in sorted(only) for h in reader.chain_heads(root, name)])
        except reader.Unreadable as e:
            unreadable(e, ", ".join(sorted(only)) if only else None)
    # by (server, chain): a server's live chain (None) and each chain of its imported history
    heads_by_chain: dict[tuple[str, str | None], dict[int, str]] = {}
    heads_by_age: dict[tuple[str, str | None], _Heads] = {}
    now_ms = _plain(datetime.now(timezone.utc))
    by_server = {} if only is None else {"server": {"$in": sorted(only)}}
    keys = _public_keys(cfg, result)
    link_keys = _link_keys(cfg, result)
    max_ahead_ms = None if max_ahead_s is None else int(max_ahead_s * 1000)
    present: dict[tuple[str, str, str | None], set[int]] = {}  # (where, server, chain) -> seqs of its heads
    signed_settled: dict[tuple[str, str, str | None], set[int]] = {}  # a place's signed heads older than IN_FLIGHT_S
    previous: dict[tuple[str, str, str | None], dict[int, int]] = {}  # a place's signed heads: seq -> previous_seq
    unsigned = 0
    for where, heads in (("chain_heads", list(db[s["chain_heads_collection"]].find(by_server))),
                         ("archive manifest", manifest_heads)):
        for h in heads:
            present.setdefault((where, h["server"], h.get(CHAIN)), set()).add(h["seq"])
            if keys is not None:
                check = signing.check(h, keys)
                if check.state == "unsigned":
                    unsigned += 1
                    continue
                if check.state != "signed":
                    result.findings.append((where, Finding("forged_head", h["server"], h["seq"], None,
                                                           f"a chain head the pipeline did not sign: {check.detail}")))
                    continue
                at = signing.head_millis(h.get("recorded_at"))
                if at is not None and now_ms - at >= IN_FLIGHT_S * 1000:
                    signed_settled.setdefault((where, h["server"], h.get(CHAIN)), set()).add(h["seq"])
                if isinstance(h.get("previous_seq"), int):
                    previous.setdefault((where, h["server"], h.get(CHAIN)), {})[h["seq"]] = h["previous_seq"]
            heads_by_age.setdefault((h["server"], h.get(CHAIN)), _Heads()).add(h, now_ms)
            known = heads_by_chain.setdefault((h["server"], h.get(CHAIN)), {})
            if h["seq"] in known and known[h["seq"]] != h["digest"]:
                result.findings.append((where, Finding("head_mismatch", h["server"], h["seq"], None,
                                                       "the chain-heads collection and the archive's manifest"
                                                       " disagree about this head: one of them was changed")))
            known.setdefault(h["seq"], h["digest"])
    if keys is not None:
        _removed_heads(result, present, signed_settled, previous)
        if unsigned:
            result.notes.append(f"{unsigned} chain head(s) carry no signature (written by a job without"
                                " chain.signing-key-file): not used as anchors")

    names = {server for server, _ in heads_by_chain}
    oldest: list[int | None] = []

    def oldest_arrival() -> int | None:
        if not oldest:
            oldest.append(_oldest_arrival(events))
        return oldest[0]

    anchors: dict[str, Anchor] = {}
    walk, late = Walk(), []
    if store:
        if after is None:
            stored = _stored_by_server(cfg, events, only, result, Pacer(share), walk)
        else:
            # an anchor gone (deleted, or trimmed by the cap with the rest of a quiet server's events):
            # the whole store is read and judged
            marker = after.marker if _anchors_present(cfg, events, after, result) else None
            stored, newest, reached = _stored_since(cfg, events, marker, result, Pacer(share), walk,
                                                    set(after.seen) if marker is not None else set())
            result.incremental = reached and marker is not None
            anchors = after.anchors if result.incremental else {}
            result.progress = Progress(newest if newest is not None else marker)
        names |= set(stored.docs) | set(anchors)
        late_until = time.monotonic() + LATE_WAIT_S
    if in_archive:
        names |= set(reader.servers(root))
    if only is not None:
        names &= only
    for name in sorted(names):
        heads = heads_by_chain.get((name, None), {})
        imported: dict[str, list[dict]] = {}
        digests: dict[str, dict[int, str]] = {}
        loaded: dict[str, tuple[list[dict], ServerReport]] = {}
        sources = []
        if store:
            refused = _refused_by_store(db[s["dead_letter_collection"]], s["events_collection"], name)
            anchor = anchors.get(name) if after is not None else None
            if anchor is not None:  # those verified earlier are not read again
                refused = [d for d in refused if not (isinstance(d.get(SEQ), int) and d[SEQ] <= anchor.seq)]
            for d in refused:
                stored.note(name, d)
            for d in _late_links(cfg, events, walk, name, stored.docs.get(name, []) + refused, anchor, late_until):
                stored.add(name, d)
                late.append(str(d["_id"]))
            stored.refresh(name, lambda ids: _stored_by_id(cfg, events, ids))
            docs = stored.docs.get(name, [])
            if refused:
                result.notes.append(f"{name}: {len(refused)} event(s) the store refused are links too; they are"
                                    " kept as dead letters of stage store, and verified from there")
            sources.append(("store", docs + refused))
        if in_archive:
            try:
                rows = reader.chain_rows(root, name)
            except reader.Unreadable as e:
                unreadable(e, name)
            else:
                for row in rows:
                    if row.get(CHAIN) is not None:
                        imported.setdefault(row[CHAIN], []).append(row)
                sources.append(("archive", [r for r in rows if r.get(CHAIN) is None]))
        if imported and not heads and not any(docs for _, docs in sources):
            sources = []  # a server known from imported history alone: no live chain to report
        ends = {where: _last_link(docs) for where, docs in sources}
        if store and after is not None and anchor is not None:
            ends["store"] = max(ends["store"] or 0, anchor.seq)
        for where, docs in sources:
            first, last = _seq_window(docs, since, until)
            other = "archive" if where == "store" else None  # the store holds what the archive holds, and newer
            expected, why = _expected_end(heads_by_age.get((name, None), _Heads()), ends.get(other), str(other))
            seen = after.anchors.get(name) if after is not None and where == "store" else None
            if seen is not None and (expected is None or seen.seq > expected):  # known outside the store
                expected, why = seen.seq, (f"the continuous verification found link {seen.seq} (event {seen.event_id}) "
                                           "in the store at its last pass")
            report = verify_links(name, docs, heads, first, last, expected if until is None else None, why,
                                  after=anchor if where == "store" and after is not None else None,
                                  link_keys=link_keys, max_ahead_ms=max_ahead_ms)
            if where == "store" and result.progress is not None:
                _advance(result.progress, name, stored.docs.get(name, []), anchor)
            archived = next((max((d for d in d_ if isinstance(d.get(SEQ), int)), key=lambda d: d[SEQ], default=None)
                             for w, d_ in sources if w == "archive"), None)
            emptied = (_emptied(name, heads_by_age.get((name, None)) if keys is not None else None, archived,
                                oldest_arrival())
                       if where == "store" and ends[where] is None and since is None and until is None else None)
            if emptied is not None:
                report.findings.append(emptied)
            else:
                _say_what_is_not_judged(result, name, where, ends[where], expected, heads_by_age.get((name, None)))
            if where == "store" and since is None and until is None and head_interval_s is not None:
                report.findings.extend(_heads_stopped(name, ends[where], heads_by_age.get((name, None)), now_ms,
                                                      head_interval_s, docs, max_ahead_ms))
            loaded[where] = (docs, report)
            result.reports.append((where, report))
            digests[where] = {d[SEQ]: d[DIGEST] for d in docs if isinstance(d.get(SEQ), int) and isinstance(d.get(DIGEST), str)}
        if "store" in loaded and "archive" in loaded:
            store_docs, store_report = loaded["store"]
            store_report.findings, explained = explain_repeats(store_report.findings, store_docs, loaded["archive"][0])
            result.notes.extend(explained)
        for where, (_, report) in loaded.items():
            result.findings.extend((where, f) for f in report.findings)
        if "store" in digests and "archive" in digests:
            result.findings.extend(("store/archive", f) for f in compare_copies(name, digests["store"], digests["archive"]))
        # imported history: a chain of its own per import run, in the archive only (docs/archive.md)
        for chain in sorted(set(imported) | {c for (server, c) in heads_by_chain if server == name and c is not None}
                            if in_archive else ()):
            docs = imported.get(chain, [])
            first, last = _seq_window(docs, since, until)
            expected, why = _expected_end(heads_by_age.get((name, chain), _Heads()), None, "")
            report = verify_links(f"{name} {chain}", docs, heads_by_chain.get((name, chain), {}), first, last,
                                  expected if until is None else None, why, link_keys=link_keys,
                                  max_ahead_ms=max_ahead_ms)
            _say_what_is_not_judged(result, f"{name} {chain}", "archive", _last_link(docs), expected,
                                    heads_by_age.get((name, chain)))
            result.reports.append(("archive", report))
            result.findings.extend(("archive", f) for f in report.findings)
    if late:
        result.notes.append(f"{len(late)} event(s) stored while the pass read the store, between links it had read"
                            " (a batch of the job's that landed after the one above it), are verified with them")
        if result.progress is not None:
            result.progress.seen = late
    if not names:
        result.notes.append("nothing to verify: no events in the store or the archive")
    if only is None and since is None and until is None and after is None:
        _add_decisions(result, reviews.verify_decisions(cfg, db, store=store, in_archive=in_archive))
    gaps = {"rule": contract.rule("record_gap"), **by_server}
    result.source_gaps = sorted(db[s["alerts_collection"]].find(gaps), key=lambda a: (a["server"], a["_id"]))
    if result.source_gaps and collector_gaps:
        result.collector_gaps = {k: v for k, v in collector_gaps.items()
                                 if k in {a["server"] for a in result.source_gaps}}
    return result


def verify_decisions(cfg: Config, store: bool = True, in_copy: bool = True) -> Verification:
    """The review decisions' chain alone (evidence/reviews.py), as a verification to report."""
    result = Verification()
    with mongo_client(cfg) as client:
        _add_decisions(result, reviews.verify_decisions(cfg, client[cfg.store["database"]], store=store,
                                                        in_archive=in_copy))
    if not result.reports:
        result.notes.append("no review decisions to verify")
    return result


def _add_decisions(result: Verification, decisions) -> None:
    """The decisions' chain's reports, findings and notes (reviews.DecisionsVerification) into ``result``."""
    result.reports.extend(decisions.reports)
    result.findings.extend(decisions.findings)
    result.notes.extend(decisions.notes)


def gap_class(alert: dict) -> str:
    """A record_gap alert's class; one without ``gap_class`` counts as unexplained, the class that assumes nothing."""
    return alert.get("gap_class") or "unexplained"


def _heads_stopped(name: str, last_link: int | None, heads: _Heads | None, now_ms: int,
                   interval_s: float, docs: list[dict] | None = None,
                   max_ahead_ms: int | None = None) -> list[Finding]:
    """Links stored after the newest head though the job writes a head within chain.head-interval of a
    link: its heads stopped (the job is down or stalled) or the newer heads were removed from every place.
    With ``docs`` (the links read), only a link whose event time is that long past is due a head: the job
    writes a head once its event time passes the link, so a record timed ahead of the clock (a simulator's
    compressed time, a server's clock ahead) has none yet, however old the head before it (after a
    quiet spell, the newest head is hours old when a burst arrives). A link's time is the one the job
    judged it by (chain.effective_ms): a record timed further ahead of its shipping than
    ``max_ahead_ms`` counts at its shipping time, as the job counts it, so a forged link timed far
    ahead does not put off the judgement."""
    if last_link is None or heads is None or heads.newest is None:
        return []
    seq, at = heads.newest
    age_s = (now_ms - at) / 1000
    if last_link <= seq or age_s < interval_s + IN_FLIGHT_S:
        return []
    if docs is not None:
        due_by = now_ms - (interval_s + IN_FLIGHT_S) * 1000
        if not any(isinstance(d.get(SEQ), int) and d[SEQ] > seq
                   and (t := effective_ms(d, max_ahead_ms)) is not None and t <= due_by for d in docs):
            return []
    return [Finding("unanchored", name, seq + 1, None,
                    f"links {seq + 1} to {last_link} are stored, but the newest chain head (link {seq}) was recorded "
                    f"{age_s / 60:.0f} min ago, and the job writes one within {interval_s:g} s of a link: its heads "
                    "stopped (the job is down or stalled) or the newer heads were removed", last_seq=last_link)]


class Pacer:
    """Keeps a reader to a ``share`` of the time: after every ``every`` documents it pauses for as long
    as makes the time since its last pause ``share`` reading and the rest waiting. Each pause lets the
    store and the cores go to what shares them (the pipeline's writes); a share of 1 never pauses."""

    def __init__(self, share: float = 1.0, every: int = READ_BATCH):
        if not 0 < share <= 1:
            raise ValueError(f"a share of the time is above 0 and at most 1, not {share}")
        self.share, self.every, self.count = share, every, 0
        self.since = time.monotonic()
        self.paused = 0.0

    def tick(self) -> None:
        self.count += 1
        if self.share >= 1 or self.count % self.every:
            return
        busy = time.monotonic() - self.since
        pause = busy * (1 - self.share) / self.share
        time.sleep(pause)
        self.paused += pause
        self.since = time.monotonic()


def _stored_since(cfg: Config, events, marker: str | None, result: Verification,
                  pacer: Pacer | None = None, walk: Walk | None = None,
                  seen: set[str] = frozenset()) -> tuple[Kept, str | None, bool]:
    """The events stored after the document ``marker`` (all of them for None), by server, read in the
    order they were inserted, which a capped collection keeps, but those of ``seen`` (verified at the
    pass that left the marker). Returns them, the newest document's id, and whether the marker was
    reached (when not, every stored event is returned).

    MongoDB reads newest first (``$natural`` -1) back to the marker: only what is new; so does the
    local FerretDB, from its SQLite file a page at a time (``_newest_first``). Another FerretDB 1.24
    sorts in memory for any sort, ``$natural`` too (its handler collects every document before it
    sorts), but returns a capped collection in insertion order when no sort is asked for: there it
    reads forward and skips what comes up to the marker without judging it again."""
    from auditpipe.store.client import is_ferretdb

    pacer = pacer or Pacer()
    by_server = Kept()
    if cfg.store_uses_local_ferretdb or not is_ferretdb(events.database):
        newest, reached = None, False
        for d in _newest_first(cfg, events, walk):
            pacer.tick()
            if newest is None:
                newest = d.get("_id")
            if marker is not None and d.get("_id") == marker:
                reached = True
                break
            if d.get("_id") not in seen:
                _by_server(d, by_server, result)
        return by_server, newest, reached
    newest, reached = None, marker is None
    for d in events.find({}).batch_size(READ_BATCH):
        pacer.tick()
        newest = d.get("_id")
        if reached:
            if newest not in seen:
                _by_server(d, by_server, result)
        elif newest == marker:
            reached = True
    if not reached:  # the marker is gone: everything, judged
        return _stored_since(cfg, events, None, result, pacer)[0], newest, False
    return by_server, newest, marker is not None


def _newest_first(cfg: Config, events, walk: Walk | None = None) -> Iterator[dict]:
    """The stored events newest first. The local FerretDB's are read from its SQLite file a page at a
    time (``capped_rows``: a walk through FerretDB would hold one SQLite snapshot for its whole length,
    minutes for a paced pass over a busy store, and the store's write-ahead log would grow all that
    time); newest first, so that the capped trim, which removes the oldest rows meanwhile, only ends
    the walk early and never leaves a hole in what it read; ``walk`` records where it began."""
    if not cfg.store_uses_local_ferretdb:
        yield from events.find({}).sort("$natural", -1).batch_size(READ_BATCH)
        return
    from auditpipe.store.ferretdb import capped_rows, from_sjson_document

    rows = capped_rows(cfg, events.name, newest_first=True, page=READ_BATCH)
    try:
        for record_id, doc in rows:
            if walk is not None and walk.top is None:
                walk.top = record_id
            yield from_sjson_document(doc)
    finally:
        rows.close()


def _anchors_present(cfg: Config, events, after: Progress, result: Verification) -> bool:
    """Whether each server's anchor is still stored (looked up by id: on the local FerretDB in its
    SQLite file by its `_id` index, where FerretDB would read the whole collection for each); one that
    is there but changed is an EDITED finding."""
    for server, anchor in sorted(after.anchors.items()):
        doc = _stored_by_id(cfg, events, [anchor.event_id]).get(anchor.event_id)
        if doc is None:
            return False
        if doc.get(SEQ) != anchor.seq or doc.get(DIGEST) != anchor.digest or doc.get("server") != server:
            detail = "its link is not the one verified earlier"
        elif anchor.previous is not None and link(anchor.previous, slim(doc)) != anchor.digest:
            detail = "its content does not give its digest any more"
        else:
            continue
        result.findings.append(("store", Finding("edited", server, anchor.seq, anchor.event_id,
                                                 f"event {anchor.event_id} was changed after it was verified: {detail}")))
    return True


def _advance(progress: Progress, server: str, docs: list[dict], anchor: Anchor | None) -> None:
    """Sets ``server``'s anchor in ``progress``: its newest link in the events collection (``docs``,
    read at this verification), else the anchor it had."""
    linked = {d[SEQ]: d for d in docs if isinstance(d.get(SEQ), int) and isinstance(d.get(DIGEST), str)
              and (anchor is None or d[SEQ] > anchor.seq)}
    if not linked:
        if anchor is not None:
            progress.anchors[server] = anchor
        return
    top = linked[max(linked)]
    before = linked.get(top[SEQ] - 1)
    previous = (before[DIGEST] if before is not None
                else anchor.digest if anchor is not None and top[SEQ] == anchor.seq + 1 else None)
    progress.anchors[server] = Anchor(top[SEQ], top[DIGEST], str(top["_id"]), previous)


def _by_server(d: dict, by_server: Kept, result: Verification) -> None:
    server = d.get("server")
    if isinstance(server, str):
        by_server.add(server, d)
    else:
        result.findings.append(("store", Finding("inserted", "?", None, str(d.get("_id")),
                                                 "a document without a server name: the job did not write it")))


def _stored_by_server(cfg: Config, events, only: set[str] | None, result: Verification,
                      pacer: Pacer | None = None, walk: Walk | None = None) -> Kept:
    """The stored events by server, read in one walk: on the local FerretDB newest first from its
    SQLite file (``_newest_first``), elsewhere in one query (another FerretDB reads the whole
    collection for any filtered query: one read, not one per server). A document without a server
    name is no event of the job's: an INSERTED finding."""
    pacer = pacer or Pacer()
    by_server = Kept()
    if cfg.store_uses_local_ferretdb:
        docs = (d for d in _newest_first(cfg, events, walk) if only is None or d.get("server") in only)
    else:
        docs = events.find({} if only is None else {"server": {"$in": sorted(only)}}).batch_size(READ_BATCH)
    for d in docs:
        pacer.tick()
        _by_server(d, by_server, result)
    return by_server


def _holes(seqs: set[int], anchor: Anchor | None) -> list[tuple[int, int]]:
    """The links missing between ``seqs`` (and between ``anchor`` and them), as (first, last) ranges."""
    order = sorted(s for s in seqs if anchor is None or s > anchor.seq)
    holes = [(anchor.seq + 1, order[0] - 1)] if anchor is not None and order and order[0] > anchor.seq + 1 else []
    return holes + [(a + 1, b - 1) for a, b in zip(order, order[1:]) if b > a + 1]


def _late_links(cfg: Config, events, walk: Walk, server: str, docs: list[dict], anchor: Anchor | None,
                until: float) -> list[dict]:
    """The documents of ``server``'s links missing between those a pass read (``docs``), stored after its
    walk had passed where they belong: a batch of the job's that landed after the newer one above it
    (``LATE_S``). On the local FerretDB they are looked for among the rows stored from ``LATE_S`` before
    the walk's first row, and looked for again until ``until`` (monotonic time) while the store is being
    written; elsewhere once, by link. A link still missing then is judged deleted."""
    holes = _holes({d[SEQ] for d in docs if isinstance(d.get(SEQ), int) and isinstance(d.get(DIGEST), str)}, anchor)
    if not holes:
        return []
    low, high = holes[0][0], holes[-1][1]
    wanted = {s for a, b in holes for s in range(a, b + 1)} if high - low < 100_000 else None
    found: dict[str, dict] = {}

    def take(candidates) -> bool:
        for d in candidates:
            seq = d.get(SEQ)
            if isinstance(seq, int) and (seq in wanted if wanted is not None else any(a <= seq <= b for a, b in holes)):
                found.setdefault(str(d.get("_id")), d)
        return wanted is not None and {d[SEQ] for d in found.values()} >= wanted

    if not (cfg.store_uses_local_ferretdb and walk.top is not None):
        take(events.find({"server": server, SEQ: {"$gte": low, "$lte": high}}))
        return list(found.values())
    from auditpipe.store.ferretdb import capped_links

    since, written, pause = max(0, walk.top - (LATE_S << 32)), walk.top, 0.5
    while True:
        docs_found, newest = capped_links(cfg, events.name, since, server, low, high)
        if take(docs_found) or newest is None or newest <= written or time.monotonic() + pause > until:
            return list(found.values())
        written = newest  # the store is being written: a batch in flight may land yet
        time.sleep(pause)
        pause *= 2


def _stored_by_id(cfg: Config, events, ids: list) -> dict:
    """The stored events of ``ids`` still in the store, by id (on the local FerretDB each from its
    SQLite file by its `_id` index, where FerretDB would read the whole collection for a query)."""
    found, asked = {}, []
    for i in ids:
        doc: dict | None | bool = False
        if cfg.store_uses_local_ferretdb and isinstance(i, str):
            from auditpipe.store.ferretdb import capped_document

            doc = capped_document(cfg, events.name, i)
        if doc is False:
            asked.append(i)
        elif doc is not None:
            found[i] = doc
    if asked:
        found.update((d["_id"], d) for d in events.find({"_id": {"$in": asked}}))
    return found


def _public_keys(cfg: Config, result: Verification) -> dict | None:
    """The public keys of config chain.public_key_file by id, or None (and a note) without the file."""
    return _keys(cfg.public_key_file, "chain.public_key_file", signing.load_public_keys, result,
                 "chain heads are not checked for signatures: no public key")


def _link_keys(cfg: Config, result: Verification) -> list[bytes] | None:
    """The keys of config chain.link_key_file, or None (and a note) without the file."""
    return _keys(cfg.link_key_file, "chain.link_key_file", signing.load_link_keys, result,
                 "links are not checked for their MAC: no link key")


def _keys(path, option: str, load, result: Verification, missing: str):
    if not path.exists():
        result.notes.append(f"{missing} at {path} (config {option}, docs/security.md)")
        return None
    try:
        return load(path)
    except (OSError, ValueError) as e:
        raise UserError(f"{option}: {e}") from None


def _removed_heads(result: Verification, present: dict, signed_settled: dict, previous: dict) -> None:
    """Heads a place lacks though a signed head says they were written: the head a signed head names
    as the one before it, and, in the chain-heads collection, a signed head older than IN_FLIGHT_S
    that the archive's manifest holds. Not the other way round: the job writes a head to the store
    as it makes it, to the manifest when the checkpoint after it completes, so a head made after the
    last checkpoint before a failure is in the store alone (the job then goes on from that
    checkpoint, its next head naming the one before as the previous). A place holding none of a
    chain's heads is not judged (the archive is off)."""
    def removed(where: str, name: str, missing: list[int], why: str) -> None:
        result.findings.append((where, Finding(
            "head_removed", name, missing[0], None,
            f"{len(missing)} chain head(s) missing here though {why} (links "
            f"{', '.join(map(str, missing[:5]))}{'...' if len(missing) > 5 else ''}): removed")))

    for (where, server, chain), have in sorted(present.items(), key=lambda x: (x[0][0], x[0][1], x[0][2] or "")):
        name = server if chain is None else f"{server} {chain}"
        named = sorted({p for p in previous.get((where, server, chain), {}).values() if p not in have})
        if named:
            removed(where, name, named, "the signed head after each names it")
        other = (sorted(seq for seq in signed_settled.get(("archive manifest", server, chain), set())
                        if seq not in have and seq not in named) if where == "chain_heads" else [])
        if other:
            removed(where, name, other, "the other place holds them, signed")


def _say_what_is_not_judged(result: Verification, name: str, where: str, last: int | None, expected: int | None,
                            heads: _Heads | None) -> None:
    """Notes for links a place lacks without that being a finding: those still on their way, and a place
    that holds none of a chain's links (the capped collection trimmed them all, or the archive's retention
    pruned them: verify cannot tell that from a deletion of them all)."""
    if last is None:
        if expected is not None:
            result.notes.append(f"{name}: the {where} holds none of its links though links up to {expected} exist "
                                f"(trimmed, or pruned by the retention, or deleted: not judged here)")
        return
    if heads is not None and heads.in_flight is not None and heads.in_flight[0] > max(last, expected or 0):
        seq, ago = heads.in_flight
        result.notes.append(f"{name}: links {max(last, expected or 0) + 1} to {seq} are not in the {where} yet: their "
                            f"head was recorded {ago} s ago, within the {IN_FLIGHT_S} s an event may take to arrive "
                            "(run verify again to judge them)")


def _refused_by_store(dead_letters, events_collection: str, server: str) -> list[dict]:
    """Events the store refused (FerretDB: '$' or '.' in a field name): their links are in the chain, their
    documents in dead letters of stage store (MongoBulkWriter.reject), as a document or as JSON text."""
    from bson import json_util

    prefix = f"store:{events_collection}:{server}/"
    out = []
    for d in dead_letters.find({"stage": "store"}):
        if not str(d.get("_id", "")).startswith(prefix):
            continue
        original = d.get("original") or {}
        doc = original.get("document")
        if doc is None and "text" in original and not original.get("truncated"):
            try:
                doc = json_util.loads(original["text"])
            except ValueError:
                doc = None
        if isinstance(doc, dict) and SEQ in doc:
            out.append(doc)
    return out


def format_report(v: Verification) -> str:
    lines = []
    for where, r in v.reports:
        if r.first_seq is None:
            lines.append(f"{where:<8} {r.server}: no links")
            continue
        decisions = r.server == reviews.CHAIN_NAME
        trimmed = ("" if r.first_seq == 1 else
                   f"; links 1 to {r.first_seq - 1} are not here (past store.evidence_retention_days): not judged"
                   if decisions else f"; links 1 to {r.first_seq - 1} are not here (trimmed by the capped collection,"
                   " or before this archive): not judged")
        anchor = ("" if decisions else
                  f", confirmed by {r.heads_checked} chain heads up to link {r.anchored_to}" if r.anchored_to
                  else (f", {r.heads_checked} chain heads" if r.heads_checked else ", no chain head yet"))
        state = "OK" if not r.findings else f"{len(r.findings)} finding(s)"
        if r.identical_copies:
            state += f" ({r.identical_copies} links present twice, identical: read during a compaction?)"
        lines.append(f"{where:<8} {r.server}: links {r.first_seq} to {r.last_seq} ({r.links} present){anchor}{trimmed}: {state}")
    for where, f in v.findings:
        lines.append(f.line(where))
    lines.extend(v.notes)
    if v.source_gaps:
        by_class = Counter(gap_class(a) for a in v.source_gaps)
        lines.append(f"Gaps in the servers' own record sequences ({len(v.source_gaps)}, alert record_gap: "
                     + ", ".join(f"{n} {c}" for c, n in sorted(by_class.items())) + "): records the server numbered "
                     "that never reached the pipeline, or its numbering started again. Not a change to what was "
                     "stored, so not a broken link; docs/alerts.md \"Record gaps, classified\".")
        for a in v.source_gaps:
            lines.append(f"  SOURCE GAP {a['server']} ({gap_class(a)}, {a['severity']}): {a['summary']}")
        for server, recorded in sorted(v.collector_gaps.items()):
            lines.append(f"  COLLECTOR GAP {server}: {len(recorded)} the collector recorded and could not close "
                         "(collector-gaps.log; a loss it reported to the job is a collector_loss gap above)"
                         + (", the last 3:" if len(recorded) > 3 else ":"))
            lines.extend(f"    {g.get('at', '?')}: {g.get('gap', '')}" for g in recorded[-3:])
    lines.append("RESULT: " + ("the chains verify: nothing edited, deleted, inserted or reordered" if v.clean
                               else f"TAMPERING OR LOSS DETECTED ({len(v.findings)} finding(s))"))
    return "\n".join(shown(line) for line in lines)  # ids and server names come from audit data
