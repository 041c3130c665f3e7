"""Reviews (docs/reviews.md): what awaits a person's review, and the decisions, kept as evidence.

Two kinds of item await review: each ended UTC day of each regime in ``review.regimes`` (that day's
exceptions, as the regime's report shows them), from the first day the store holds evidence of,
and each alert. A decision (schemas/review-decision.schema.json) names one item, its reviewer (the name
their signing key is enrolled under, evidence/reviewer_keys.py), an outcome and a note, under the
reviewer's signature. Decisions are only ever appended: each is a link of one hash chain, computed
as an event's link (evidence/chain.py), in the store's reviews collection and, line for line, in a
second copy (``review.ledger_file``, by default the archive's ``reviews/decisions.jsonl``);
`auditpipe verify` recomputes both and names a decision edited, removed or added outside this module,
forged (its reviewer's key did not sign it) or backdated.

Two reviewers deciding at once: a decision's ``_id`` is its link number, so of two decisions
computed from the same last link the store takes one, and the other is computed again after it;
both are kept, in the order the store took them.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path

from auditpipe import paths
from auditpipe.config import Config, duration_seconds
from auditpipe.errors import UserError
from auditpipe.evidence.chain import DIGEST, SEQ, Finding, ServerReport, _id, _plain, compare_copies, link, verify_links, when
from auditpipe.evidence.regimes import REGIMES
from auditpipe.terminal import shown

SCHEMA_FILE = paths.SCHEMAS / "review-decision.schema.json"
#: the decisions' chain, as verify names it in its reports
CHAIN_NAME = "review decisions"
#: tries at taking the next link when other reviewers keep taking it first
APPEND_TRIES = 50
#: a listing shows at most this many awaiting alerts (it counts them all)
ALERTS_SHOWN = 50
# characters a reviewer's name or note may not hold: controls other than a note's line breaks and tabs,
# the bidirectional-text controls (they reorder what a terminal or a report shows around them), surrogates
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())


def outcomes() -> tuple[str, ...]:
    """The outcomes a decision may have, in the schema's order."""
    return tuple(schema()["properties"]["outcome"]["enum"])


def note_max() -> int:
    return schema()["properties"]["note"]["maxLength"]


def regimes() -> tuple[str, ...]:
    """The regimes a day can be reviewed for: the reports' keys."""
    return tuple(REGIMES)


def collection(cfg: Config, client):
    return client[cfg.store["database"]][cfg.store["reviews_collection"]]


def ledger_path(cfg: Config) -> Path | None:
    """The decisions' second copy (review.ledger_file, else in the archive); None with neither."""
    return cfg.review_ledger_file


# --- items ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    """What a decision is about: ``day:<regime>:<YYYY-MM-DD>`` or ``alert:<alert id>``."""
    kind: str
    regime: str | None = None
    day: date | None = None
    alert_id: str | None = None

    @property
    def key(self) -> str:
        return f"day:{self.regime}:{self.day.isoformat()}" if self.kind == "day" else f"alert:{self.alert_id}"

    @staticmethod
    def day_of(regime: str, day: date) -> Item:
        return Item("day", regime=regime, day=day)


def day_start(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)


def parse_item(text: str, cfg: Config) -> Item:
    """An item as written on the command line; UserError naming what is wrong."""
    if text.startswith("alert:") and len(text) > len("alert:"):
        return Item("alert", alert_id=text[len("alert:"):])
    m = re.fullmatch(r"day:([a-z0-9]+):(\d{4}-\d{2}-\d{2})", text)
    if not m:
        raise UserError(f"'{shown(text)}' is not an item: write day:REGIME:YYYY-MM-DD (a UTC day of a regime's "
                        "review) or alert:ALERT_ID (an id from `auditpipe alerts --json` or `auditpipe review`)")
    regime, day_text = m.groups()
    if regime not in cfg.data["review"]["regimes"]:
        raise UserError(f"'{regime}' is not a regime reviewed day by day here: review.regimes is "
                        f"{', '.join(cfg.data['review']['regimes']) or 'empty'} (one of {', '.join(regimes())})")
    try:
        day = date.fromisoformat(day_text)
    except ValueError:
        raise UserError(f"'{day_text}' is not a date (YYYY-MM-DD)") from None
    return Item.day_of(regime, day)


# --- what awaits review ---------------------------------------------------------------------------

def first_evidence_day(cfg: Config, db) -> date | None:
    """The first UTC day the store counts events of (the hourly stats, which live shipping and
    `auditpipe import` both write): the days before it have nothing to review."""
    first = next(iter(db[cfg.store["stats_hourly_collection"]].find({}, {"window_start": 1})
                      .sort("window_start", 1).limit(1)), None)
    return _utc(first["window_start"]).date() if first else None


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def ended_days(since: datetime, until: datetime, now: datetime, first: date | None) -> list[date]:
    """The UTC days that overlap [since, until), have ended by ``now`` and are not before ``first``
    (None: no evidence at all, so no day)."""
    if first is None:
        return []
    day = max(_utc(since).date(), first)
    out = []
    while day_start(day) < _utc(until) and day_start(day) + timedelta(days=1) <= now:
        out.append(day)
        day += timedelta(days=1)
    return out


@dataclass
class Awaiting:
    days: list[dict] = field(default_factory=list)  # regime, day, item, overdue, alerts
    alerts: list[dict] = field(default_factory=list)  # the alerts awaiting, oldest first (at most ALERTS_SHOWN)
    alerts_total: int = 0
    decided_days: int = 0
    decided_alerts: int = 0
    first_day: date | None = None
    since: datetime | None = None


def awaiting(cfg: Config, since: datetime, until: datetime, now: datetime | None = None,
             with_alerts: bool = True) -> Awaiting:
    """The days and alerts (unless not ``with_alerts``) of [since, until) no decision names yet."""
    from auditpipe.store.client import mongo_client

    now = now or datetime.now(timezone.utc)
    deadline = timedelta(seconds=duration_seconds(cfg.data["review"]["deadline"]))
    out = Awaiting(since=since)
    with mongo_client(cfg) as client:
        db = client[cfg.store["database"]]
        decided = {d["item"] for d in collection(cfg, client).find({}, {"item": 1})}
        out.first_day = first_evidence_day(cfg, db)
        days = ended_days(since, until, now, out.first_day)
        alerts = [] if not with_alerts else list(db[cfg.store["alerts_collection"]].find(
            {"first_event_time": {"$gte": since, "$lt": until}},
            {"rule": 1, "severity": 1, "server": 1, "subject": 1, "summary": 1, "first_event_time": 1}))
    alerts.sort(key=lambda a: (_utc(a["first_event_time"]), str(a["_id"])))
    per_day: dict[date, int] = {}
    for a in alerts:
        per_day[_utc(a["first_event_time"]).date()] = per_day.get(_utc(a["first_event_time"]).date(), 0) + 1
    for regime in cfg.data["review"]["regimes"]:
        for day in days:
            item = Item.day_of(regime, day)
            if item.key in decided:
                out.decided_days += 1
                continue
            due = day_start(day) + timedelta(days=1) + deadline
            out.days.append({"item": item.key, "regime": regime, "day": day, "due": due, "overdue": now > due,
                             "alerts": per_day.get(day, 0)})
    for a in alerts:
        if alert_decided(a, decided):
            out.decided_alerts += 1
            continue
        out.alerts_total += 1
        if len(out.alerts) < ALERTS_SHOWN:
            out.alerts.append(a)
    return out


def alert_decided(alert: dict, decided: set[str]) -> bool:
    """Whether a decision names the alert, or, for a review_overdue alert, the day it is about (a day signed
    off late answers its overdue alert too)."""
    return f"alert:{alert['_id']}" in decided or (alert.get("rule") == overdue_rule() and alert.get("subject") in decided)


def overdue_rule() -> str:
    from auditpipe import contract

    return contract.rule("review_overdue")


#: days back the deadline check looks: an older day awaiting review was alerted when its deadline passed
OVERDUE_LOOKBACK_DAYS = 7
#: the deadline alert's server: a day's review covers every server
ALL_SERVERS = "*"


def overdue_alerts(a: Awaiting, deadline: str, now: datetime) -> list[dict]:
    """The review_overdue alert (schemas/alert.schema.json) of each day of ``a`` past its deadline; its id
    names the regime and the day, so a day stays one alert however often the check runs."""
    from auditpipe.evidence import frameworks

    rule = overdue_rule()
    out = []
    for d in a.days:
        if not d["overdue"]:
            continue
        start = day_start(d["day"])
        out.append({
            "_id": f"{rule}/{d['regime']}/{d['day'].isoformat()}", "rule": rule, "severity": "medium",
            "server": ALL_SERVERS, "subject": d["item"],
            "summary": f"{d['item']}: no reviewer has decided the {d['regime']} review of {d['day'].isoformat()}, due "
                       f"{d['due']:%Y-%m-%d %H:%M} UTC (review.deadline {deadline} after the day): "
                       f"{paths.COMMAND} review decide {d['item']} --outcome ...",
            "first_event_time": start, "last_event_time": start + timedelta(days=1) - timedelta(milliseconds=1),
            "evidence": [], "evidence_count": 0, "controls": [], "frameworks": frameworks.of_subject(rule),
            "raised_at": now.replace(microsecond=0)})
    return out


def check_deadlines(cfg: Config, now: datetime | None = None) -> list[dict]:
    """What the supervisor (and `verify --watch`) runs after each verification pass: the days of the
    last OVERDUE_LOOKBACK_DAYS awaiting review refresh the review queue (the dashboards' panel); returns
    the review_overdue alert of each one past its deadline, for stack/verification.py to raise (once
    each: alerts collection, alerts topic, webhook)."""
    now = now or datetime.now(timezone.utc)
    a = awaiting(cfg, now - timedelta(days=OVERDUE_LOOKBACK_DAYS), now, now, with_alerts=False)
    refresh_queue(cfg, a, now)
    return overdue_alerts(a, cfg.data["review"]["deadline"], now)


def refresh_queue(cfg: Config, a: Awaiting, now: datetime) -> None:
    """The review queue (store.review_queue_collection): one document per day of ``a`` awaiting review, the
    days decided since removed. What the dashboards' "Days awaiting review" panel reads; a view the
    deadline check, `review list` and `review decide` keep current, not evidence (the decisions are)."""
    from pymongo import ReplaceOne

    from auditpipe.store.client import mongo_client

    docs = [{"_id": d["item"], "regime": d["regime"], "day": day_start(d["day"]), "due": d["due"],
             "overdue": d["overdue"], "alerts": d["alerts"], "checked_at": now.replace(microsecond=0)} for d in a.days]
    with mongo_client(cfg) as client:
        queue = client[cfg.store["database"]][cfg.store["review_queue_collection"]]
        if docs:
            queue.bulk_write([ReplaceOne({"_id": d["_id"]}, d, upsert=True) for d in docs], ordered=False)
        if a.first_day is not None or not docs:
            queue.delete_many({"_id": {"$nin": [d["_id"] for d in docs]}, "day": {"$gte": a.since}})


def _short(text: str, most: int = 100) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def format_awaiting(a: Awaiting, since: datetime, until: datetime) -> str:
    lines = []
    span = f"{_utc(since):%Y-%m-%d %H:%M} to {_utc(until):%Y-%m-%d %H:%M} UTC"
    if a.first_day is None:
        lines.append(f"no evidence in the store yet: no day awaits review ({span})")
    if a.days:
        lines.append(f"days awaiting review ({len(a.days)}; {a.decided_days} decided in {span}):")
        for d in a.days:
            report = (f"{paths.COMMAND} report {d['regime']} --from {d['day'].isoformat()} "
                      f"--to {(d['day'] + timedelta(days=1)).isoformat()}")
            state = f"OVERDUE since {d['due']:%Y-%m-%d %H:%M} UTC" if d["overdue"] else f"due {d['due']:%Y-%m-%d %H:%M} UTC"
            lines.append(f"  {d['item']:<24} {state}; {d['alerts']} alert(s) that day; read it: {report}")
    elif a.first_day is not None:
        lines.append(f"no day awaits review ({a.decided_days} decided in {span})")
    if a.alerts_total:
        lines.append(f"alerts awaiting review ({a.alerts_total}; {a.decided_alerts} decided)"
                     + (f", the oldest {len(a.alerts)}:" if a.alerts_total > len(a.alerts) else ":"))
        for al in a.alerts:
            lines.append(f"  alert:{shown(al['_id'])}  {_utc(al['first_event_time']):%Y-%m-%d %H:%M:%S}  "
                         f"{shown(al['severity'])}  {shown(al.get('server'))}  {_short(shown(al.get('summary')))}")
    else:
        lines.append(f"no alert awaits review ({a.decided_alerts} decided)")
    if a.days or a.alerts_total:
        lines.append(f"decide: {paths.COMMAND} review decide ITEM --outcome " + "|".join(outcomes())
                     + " --note TEXT [--key FILE]")
    return "\n".join(lines)


# --- deciding -------------------------------------------------------------------------------------

def reviewer_identity(cfg: Config, key_file: Path | None, environ=os.environ) -> tuple[str, dict, object]:
    """The reviewer: the enrolled name of the key in ``key_file`` (else $AUDITPIPE_REVIEWER_KEY, else the user's
    reviewer.key; evidence/reviewer_keys.py), the identity block recorded with it, and the private key."""
    from auditpipe.evidence import reviewer_keys

    path = key_file or reviewer_keys.default_key_file(environ)
    key = reviewer_keys.load_private_key(path)
    kid = reviewer_keys.key_id(key.public_key())
    enrolled = reviewer_keys.load_reviewers(cfg.reviewers_file).get(kid)
    if enrolled is None:
        raise UserError(f"the key in {path} ({kid}) is not an enrolled reviewer's ({cfg.reviewers_file}): "
                        f"`auditpipe review enroll NAME --key {path}` enrolls it; nothing was recorded")
    try:
        os_user = getpass.getuser()
    except (KeyError, OSError):  # no login name (a container's numeric user)
        os_user = None
    return enrolled.name, {"source": "key", reviewer_keys.KEY_ID: kid, "os_user": os_user,
                           "host": socket.gethostname()}, key


def check_note(note: str, outcome: str) -> None:
    if len(note) > note_max():
        raise UserError(f"the note is {len(note)} characters, more than {note_max()}; nothing was recorded")
    bad = _FORBIDDEN.search(note)
    if bad:
        raise UserError(f"the note holds a control character ({shown(bad.group())} at character {bad.start() + 1}): "
                        "only printable text, line breaks and tabs; nothing was recorded")
    if outcome != "expected" and not note.strip():
        raise UserError(f"an outcome of {outcome} needs a note saying what was found or done (--note); "
                        "nothing was recorded")


def _resolve(cfg: Config, db, item: Item, now: datetime) -> dict:
    """The fields a decision about ``item`` records of it; UserError when there is no such item."""
    if item.kind == "alert":
        alert = db[cfg.store["alerts_collection"]].find_one({"_id": item.alert_id},
                                                            {"first_event_time": 1, "server": 1})
        if alert is None:
            raise UserError(f"no alert {shown(item.alert_id)} in {cfg.store['alerts_collection']} (`auditpipe review` "
                            "lists those awaiting review); nothing was recorded")
        return {"regime": None, "server": alert.get("server"), "item_time": _utc(alert["first_event_time"])}
    start = day_start(item.day)
    if start + timedelta(days=1) > now:
        raise UserError(f"{item.key}: the day has not ended (a day is reviewed once it is over, "
                        f"{start + timedelta(days=1):%Y-%m-%d %H:%M} UTC); nothing was recorded")
    first = first_evidence_day(cfg, db)
    if first is None or item.day < first:
        since = f"the first is {first.isoformat()}" if first else "it holds none yet"
        raise UserError(f"{item.key}: the store holds no evidence of that day ({since}); nothing was recorded")
    return {"regime": item.regime, "server": None, "item_time": start}


def _millis(t: datetime) -> datetime:
    """``t`` to the millisecond, as the store keeps a date: the digest covers what is stored."""
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def decide(cfg: Config, items: list[str], outcome: str, note: str, key_file: Path | None = None,
           now: datetime | None = None, environ=os.environ) -> list[dict]:
    """Records one decision per item (all checked before any is written: a bad one writes nothing);
    returns the decisions as stored. The second copy follows (``sync_ledger``)."""
    from pymongo.errors import DuplicateKeyError

    from auditpipe.store.client import mongo_client

    if outcome not in outcomes():
        raise UserError(f"'{shown(outcome)}' is not an outcome: one of {', '.join(outcomes())}; nothing was recorded")
    check_note(note, outcome)
    from auditpipe.evidence import reviewer_keys

    name, identity, key = reviewer_identity(cfg, key_file, environ)
    parsed = [parse_item(text, cfg) for text in items]
    if len({p.key for p in parsed}) < len(parsed):
        raise UserError("an item is named twice; nothing was recorded")
    written = []
    with mongo_client(cfg) as client:
        db = client[cfg.store["database"]]
        coll = collection(cfg, client)
        now = now or datetime.now(timezone.utc)
        resolved = [(p, _resolve(cfg, db, p, now)) for p in parsed]
        _refuse_repeats(coll, [p.key for p in parsed], name)
        for p, fields in resolved:
            for _ in range(APPEND_TRIES):
                last = next(iter(coll.find({}, {SEQ: 1, DIGEST: 1}).sort(SEQ, -1).limit(1)), None)
                _refuse_repeats(coll, [p.key], name)  # another call by the same reviewer may have taken it meanwhile
                seq = (last or {}).get(SEQ, 0) + 1
                doc = {"_id": f"decision/{seq}", "item": p.key, "kind": p.kind, **fields, "reviewer": name,
                       "identity": identity, "decided_at": _millis(datetime.now(timezone.utc)), "outcome": outcome,
                       "note": note}
                doc[SEQ] = seq
                doc[reviewer_keys.SIGNATURE] = reviewer_keys.sign(key, doc)
                doc[DIGEST] = link((last or {}).get(DIGEST, ""), doc)
                try:
                    coll.insert_one(doc)
                except DuplicateKeyError:
                    continue  # another reviewer took this link: compute the decision after theirs
                written.append(doc)
                break
            else:
                raise UserError(f"{p.key}: other decisions kept taking the next link ({APPEND_TRIES} tries); "
                                f"{len(written)} of {len(parsed)} recorded, try the rest again")
        sync_ledger(cfg, coll)
        days = [p.key for p in parsed if p.kind == "day"]
        if days:  # off the dashboards' queue at once, not at the next deadline check
            db[cfg.store["review_queue_collection"]].delete_many({"_id": {"$in": days}})
    return written


def _refuse_repeats(coll, keys: list[str], reviewer: str) -> None:
    taken = next(iter(coll.find({"item": {"$in": keys}, "reviewer": reviewer}, {"item": 1, "_id": 1, "decided_at": 1})
                      .limit(1)), None)
    if taken is not None:
        raise UserError(f"{shown(reviewer)} already decided {shown(taken['item'])} ({taken['_id']}, "
                        f"{_utc(taken['decided_at']):%Y-%m-%d %H:%M:%S} UTC): a decision is never changed; "
                        "another reviewer may add theirs. Nothing was recorded")


def sync_ledger(cfg: Config, coll) -> int:
    """Appends to the second copy the decisions the store holds after its last line, in link order (under a
    lock: two reviewers may append at once), each only once checked (``_takes``): it follows the copy's
    last link, its digest is right and its reviewer's key signed it. A decision that fails stops the copy
    there, with the reason (verify names it too). Returns how many were appended; nothing without a copy."""
    import fcntl

    from auditpipe.evidence import reviewer_keys

    path = ledger_path(cfg)
    if path is None:
        return 0
    reviewers = reviewer_keys.load_reviewers(cfg.reviewers_file)
    refused = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            last: dict = {}
            for line in f:
                try:
                    doc = json.loads(line)
                    if int(doc.get(SEQ) or 0) > int(last.get(SEQ) or 0):
                        last = doc
                except (ValueError, AttributeError, TypeError):
                    continue  # verify names a line that is not a decision
            new = sorted(coll.find({SEQ: {"$gt": int(last.get(SEQ) or 0)}}), key=lambda d: d[SEQ])
            taken = 0
            for d in new:
                refused = _takes(last, d, reviewers)
                if refused:
                    break
                f.write(ledger_line(d) + "\n")
                last, taken = d, taken + 1
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise UserError(f"the decision is in the store, but its second copy ({path}) could not be written: {e}. "
                        "`auditpipe review decide` adds what the copy lacks next time; until then verify says so") from e
    if refused:
        raise UserError(f"the second copy ({path}) takes no decision after link {last.get(SEQ) or 0}: {refused}. "
                        "`auditpipe verify` names it; the decisions after it are in the store only")
    return taken


def _takes(last: dict, doc: dict, reviewers: dict) -> str | None:
    """Why the copy, whose last decision is ``last`` ({} for none), must not take ``doc`` next (None: it may)."""
    from auditpipe.evidence import reviewer_keys

    seq = doc.get(SEQ)
    if last and seq != last.get(SEQ) + 1:
        return f"the store's next decision is link {seq}, not {last.get(SEQ) + 1}"
    if (last or seq == 1) and doc.get(DIGEST) != link(last.get(DIGEST, ""), doc):
        return f"link {seq} ({doc.get('_id')}) does not follow from the one before it: changed or forged in the store"
    forged = reviewer_keys.check(doc, reviewers)
    return f"link {seq} ({doc.get('_id')}): {forged}" if forged else None


def ledger_line(doc: dict) -> str:
    """A decision as a line of the second copy: its fields as the canonical form sees them (times as
    epoch milliseconds), so the copy gives the same digests."""
    return json.dumps(_plain(doc), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_ledger(path: Path) -> tuple[list[dict], list[str]]:
    """The copy's decisions and a note for each line that is not one."""
    docs, bad = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            bad.append(f"{path} line {n}: not JSON")
            continue
        if not isinstance(doc, dict):
            bad.append(f"{path} line {n}: not a decision")
            continue
        docs.append(doc)
    return docs, bad


# --- listing and verifying decisions --------------------------------------------------------------

def list_decisions(cfg: Config, since: datetime | None = None, until: datetime | None = None,
                   limit: int = 100) -> list[dict]:
    """Decisions recorded in [since, until), in link order (the newest ``limit``)."""
    from auditpipe.store.client import mongo_client

    query: dict = {}
    if since or until:
        query["decided_at"] = {**({"$gte": since} if since else {}), **({"$lt": until} if until else {})}
    with mongo_client(cfg) as client:
        rows = sorted(collection(cfg, client).find(query), key=lambda d: d.get(SEQ) or 0)
    return rows[-limit:]


def format_decisions(rows: list[dict]) -> str:
    if not rows:
        return "(no decisions)"
    lines = []
    for d in rows:
        note = shown(d.get("note", "")).replace("\\x0a", " / ")
        lines.append(f"{d['_id']:<14} {_utc(d['decided_at']):%Y-%m-%d %H:%M:%S}  {shown(d['reviewer'])}  "
                     f"{d['outcome']:<14} {shown(d['item'])}" + (f"  \"{note}\"" if note else ""))
    return "\n".join(lines)


@dataclass
class DecisionsVerification:
    reports: list[tuple[str, ServerReport]] = field(default_factory=list)
    findings: list[tuple[str, Finding]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def verify_decisions(cfg: Config, db, store: bool = True, in_archive: bool = True,
                     now: datetime | None = None) -> DecisionsVerification:
    """Recomputes the decisions' chain in the store and in the second copy, and compares the two:
    an edited decision breaks its link, a removed one leaves its number missing (the newest: the other
    place holds it; all of them: the other place holds some, which retention does not explain), an added
    one has no link or a second document at one. A decision its reviewer's enrolled key did not sign as it
    is now is FORGED; one whose time is before what the store had already taken (``backdated``) BACKDATED."""
    from auditpipe.evidence import reviewer_keys

    out = DecisionsVerification()
    places: dict[str, list[dict]] = {}
    if store:
        places["store"] = list(db[cfg.store["reviews_collection"]].find())
    path = ledger_path(cfg)
    if in_archive and path is not None and path.exists():
        docs, bad = read_ledger(path)
        out.findings.extend(("copy", Finding("inserted", CHAIN_NAME, None, None, b)) for b in bad)
        places["copy"] = docs
    elif in_archive and path is not None and places.get("store"):
        out.findings.append(("copy", Finding("deleted", CHAIN_NAME, None, None,
                                                f"the second copy {path} is missing, though the store holds "
                                                f"{len(places['store'])} decision(s)")))
    if path is None and store:
        out.notes.append(f"{CHAIN_NAME}: no second copy (the archive is off and review.ledger_file is not set): "
                         "the newest decisions removed from the store would not be seen")
    if not any(places.values()):
        return out
    ends = {where: max((d[SEQ] for d in docs if isinstance(d.get(SEQ), int)), default=None)
            for where, docs in places.items()}
    reviewers = reviewer_keys.load_reviewers(cfg.reviewers_file)
    for where, docs in places.items():
        other = "copy" if where == "store" else "store"
        expected = ends.get(other)
        report = verify_links(CHAIN_NAME, docs, {}, expected_last=expected,
                              why=f"the {other} holds decisions up to link {expected}")
        out.reports.append((where, report))
        out.findings.extend((where, f) for f in report.findings)
        emptied = _emptied(cfg, where, docs, places.get(other), now or datetime.now(timezone.utc))
        if emptied:
            out.findings.append((where, emptied))
        out.findings.extend((where, f) for f in _forged(docs, reviewers, cfg.reviewers_file))
    if "store" in places:
        out.findings.extend(("store", f) for f in backdated(places["store"], _overdue_found(cfg, db, places["store"])))
    if len(places) == 2:
        digests = {where: {d[SEQ]: d[DIGEST] for d in docs if isinstance(d.get(SEQ), int) and isinstance(d.get(DIGEST), str)}
                   for where, docs in places.items()}
        out.findings.extend(("store/copy", f) for f in compare_copies(CHAIN_NAME, digests["store"], digests["copy"]))
    return out


def _emptied(cfg: Config, where: str, docs: list[dict], other: list[dict] | None, now: datetime) -> Finding | None:
    """A place that holds no decision while the other holds some: DELETED, unless retention explains it (the
    store keeps a decision store.evidence_retention_days after it was made; the copy keeps them all)."""
    if docs or not other:
        return None
    seqs = [d[SEQ] for d in other if isinstance(d.get(SEQ), int)]
    if not seqs:
        return None
    newest = max((_plain(d.get("decided_at")) for d in other if isinstance(_plain(d.get("decided_at")), int)),
                 default=None)
    kept_from = _plain(now) - cfg.store["evidence_retention_days"] * 86_400_000
    if where == "store" and newest is not None and newest < kept_from:
        return None
    held = "copy" if where == "store" else "store"
    return Finding("deleted", CHAIN_NAME, min(seqs), None,
                   f"the {where} holds no decision, the {held} holds links {min(seqs)} to {max(seqs)}"
                   + ("" if where == "copy" else ", the newest within store.evidence_retention_days"),
                   last_seq=max(seqs))


def _forged(docs: list[dict], reviewers: dict, reviewers_file: Path) -> list[Finding]:
    """A FORGED finding for each decision its reviewer's enrolled key does not verify (evidence/reviewer_keys.py)."""
    from auditpipe.evidence import reviewer_keys

    out = []
    for d in sorted(docs, key=lambda d: d.get(SEQ) if isinstance(d.get(SEQ), int) else 0):
        why = reviewer_keys.check(d, reviewers)
        if why is not None:
            if not reviewers:
                why += f" (no reviewer is enrolled in {reviewers_file})"
            out.append(Finding("forged", CHAIN_NAME, d.get(SEQ) if isinstance(d.get(SEQ), int) else None,
                               _id(d), f"a decision of {shown(d.get('reviewer'))}: {why}"))
    return out


#: how far apart two reviewers' clocks (or a reviewer's and the verifier's) may be
CLOCK_SKEW_S = 300


def _overdue_found(cfg: Config, db, docs: list[dict]) -> dict[str, int]:
    """When each day the decisions name was found undecided past its deadline: its review_overdue alert's
    ``raised_at`` (epoch ms), by item: the deadline check raises it only while no decision names the day."""
    days = sorted({d.get("item") for d in docs if d.get("kind") == "day" and isinstance(d.get("item"), str)})
    if not days:
        return {}
    found = db[cfg.store["alerts_collection"]].find({"rule": overdue_rule(), "subject": {"$in": days}},
                                                    {"subject": 1, "raised_at": 1})
    return {a["subject"]: _plain(a["raised_at"]) for a in found if isinstance(_plain(a.get("raised_at")), int)}


def backdated(docs: list[dict], overdue: dict[str, int]) -> list[Finding]:
    """Decisions whose time is earlier (by more than CLOCK_SKEW_S) than the store's own record says they can
    be: than the link before them (the store takes links in order, so that decision came first), or than
    the moment the deadline check found their day still undecided (its review_overdue alert, ``overdue``)."""
    out = []
    skew = CLOCK_SKEW_S * 1000
    previous = None
    for d in sorted((d for d in docs if isinstance(d.get(SEQ), int)), key=lambda d: d[SEQ]):
        t = _plain(d.get("decided_at"))
        if not isinstance(t, int):
            continue
        why = None
        if previous is not None and previous[1] - t > skew:
            why = f"link {previous[0]}, which the store took before it, was decided at {when(previous[1])}"
        elif overdue.get(d.get("item"), t) - t > skew:
            why = f"the deadline check found {d.get('item')} undecided at {when(overdue[d['item']])} (its review_overdue alert)"
        if why:
            out.append(Finding("backdated", CHAIN_NAME, d[SEQ], _id(d),
                               f"{shown(d.get('reviewer'))}'s decision says {when(t)}, but {why}"))
        if previous is None or t > previous[1]:
            previous = (d[SEQ], t)
    return out


def witness_file(cfg: Config) -> Path:
    return cfg.state_dir / "verification" / "decisions-seen.json"


def witness(cfg: Config, now: datetime | None = None) -> list[Finding]:
    """What the verifier (the supervisor, `verify --watch`) runs after each pass: it notes the decisions' last
    link the store holds at ``now`` (taken before reading) in its own state, where no reviewer writes; a
    decision after the link noted last time, dated more than CLOCK_SKEW_S before that time, was not in the
    store when it says it was made: BACKDATED. A decision's time is so bounded by the verifier's clock
    within a pass interval, whatever the reviewer's clock said."""
    from auditpipe.store.client import mongo_client

    now = now or datetime.now(timezone.utc)
    path = witness_file(cfg)
    try:
        seen = json.loads(path.read_text())
        last, at = int(seen["seq"]), int(seen["at_ms"])
    except (OSError, ValueError, KeyError, TypeError):
        last, at = None, None
    with mongo_client(cfg) as client:
        new = sorted(collection(cfg, client).find({SEQ: {"$gt": last or 0}}, {SEQ: 1, "decided_at": 1, "reviewer": 1}),
                     key=lambda d: d[SEQ])
    out = []
    if at is not None:
        for d in new:
            t = _plain(d.get("decided_at"))
            if isinstance(t, int) and at - t > CLOCK_SKEW_S * 1000:
                out.append(Finding("backdated", CHAIN_NAME, d[SEQ], _id(d),
                                   f"{shown(d.get('reviewer'))}'s decision says {when(t)}, but at {when(at)} the "
                                   f"verifier found the decisions' chain ending at link {last}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"seq": max([d[SEQ] for d in new], default=last or 0), "at_ms": _plain(now)}))
    tmp.replace(path)
    return out


# --- a report's review section --------------------------------------------------------------------

#: the requirements a regime's report counts reviews against: (control, requirement, what is counted)
REVIEW_REQUIREMENTS = {
    "pci": (("PCI-DSS-10.4.1", "10.4.1 Audit logs and security events reviewed at least once daily", "days"),
            ("PCI-DSS-10.4.3", "10.4.3 Exceptions and anomalies identified during the review are addressed",
             "alerts")),
}


def unverified(cfg: Config, db, ids: list) -> dict[str, str]:
    """Of the decisions ``ids``, those their reviewer's enrolled key does not verify as they are stored, with
    why (evidence/reviewer_keys.check): a report counts none of them."""
    from auditpipe.evidence import reviewer_keys

    if not ids:
        return {}
    reviewers = reviewer_keys.load_reviewers(cfg.reviewers_file)
    out = {}
    for d in db[cfg.store["reviews_collection"]].find({"_id": {"$in": list(ids)}}):
        why = reviewer_keys.check(d, reviewers)
        if why:
            out[str(d["_id"])] = why
    return out


def review_section(cfg: Config, regime: str, since: datetime, until: datetime, now: datetime,
                   decisions: list[dict], alerts: list[dict], first: date | None,
                   refused: dict[str, str] | None = None) -> dict:
    """What a report of ``regime`` over [since, until) says of its review: the ended days of the period
    from ``first`` (the first day with evidence, ``first_evidence_day``) and whether a decision names
    each, the period's ``alerts`` (the report's alerts-list rows) and their decisions, every decision
    about them (``decisions``: the review-decisions query's rows for the period), escalations, and the
    open items. A decision in ``refused`` (``unverified``: its reviewer's key does not verify it) counts for
    nothing; the section lists it apart, with why."""
    refused = refused or {}
    not_counted = [{"_id": str(d.get("_id")), "reviewer": d.get("reviewer"), "item": d.get("item"),
                    "why": refused[str(d.get("_id"))]} for d in decisions if str(d.get("_id")) in refused]
    decisions = [d for d in decisions if str(d.get("_id")) not in refused]
    daily = regime in cfg.data["review"]["regimes"]
    days = ended_days(since, until, now, first) if daily else []
    alert_ids = {f"alert:{a['_id']}" for a in alerts}
    day_keys = {Item.day_of(regime, d).key: d for d in days}
    mine = [d for d in decisions if d.get("item") in day_keys or d.get("item") in alert_ids]
    by_item: dict[str, list[dict]] = {}
    for d in mine:
        by_item.setdefault(d["item"], []).append(d)
    day_rows = [{"day": d.isoformat(), "item": key, "reviewed": key in by_item,
                 "decisions": [f"{x['reviewer']}: {x['outcome']}" for x in by_item.get(key, [])]}
                for key, d in day_keys.items()]
    every = {d.get("item") for d in decisions}
    decided_ids = {f"alert:{a['_id']}" for a in alerts if alert_decided(a, every)}
    decided_alerts = len(decided_ids)
    return {
        "daily": daily,
        "days": day_rows,
        "days_total": len(day_rows),
        "days_reviewed": sum(1 for r in day_rows if r["reviewed"]),
        "open_days": [r["item"] for r in day_rows if not r["reviewed"]],
        "alerts_total": len(alert_ids),
        "alerts_decided": decided_alerts,
        "open_alerts": sorted(alert_ids - decided_ids),
        "escalations": sum(1 for d in mine if d.get("outcome") == "escalated"),
        "decisions": [{k: d.get(k) for k in ("_id", "decided_at", "reviewer", "item", "outcome", "note")} for d in mine],
        "not_counted": not_counted,
    }


def requirement_rows(regime: str, section: dict) -> list[dict]:
    """The controls-table rows of ``regime``'s review requirements: what was reviewed of what there was."""
    rows = []
    for control, text, what in REVIEW_REQUIREMENTS.get(regime, ()):
        if what == "days":
            rows.append({"control": control, "requirement": text, "events": section["days_reviewed"],
                         "of": section["days_total"], "unit": "days reviewed"})
        else:
            rows.append({"control": control, "requirement": text, "events": section["alerts_decided"],
                         "of": section["alerts_total"], "unit": "alerts decided"})
    return rows
