"""`auditpipe review`: what awaits review (each day's exceptions, the alerts); record a reviewer's decision."""

from __future__ import annotations

from pathlib import Path

from auditpipe.cli.application import Application
from auditpipe.cli.arguments import add_time_range, at_least_one, command
from auditpipe.errors import UserError


def cmd_review_list(app: Application) -> int:
    from datetime import datetime, timedelta, timezone

    from auditpipe.evidence import query, reviews

    a = app.args
    now = datetime.now(timezone.utc)
    until = query.parse_time(a.until, now) if a.until else now
    since = query.parse_time(a.since, until - timedelta(days=30)) if a.since else until - timedelta(days=30)
    if until <= since:
        raise UserError("--to must be after --from")
    app.out(reviews.format_awaiting(reviews.awaiting(app.config, since, until, now), since, until))
    return 0


def cmd_review_decide(app: Application) -> int:
    from auditpipe.evidence import reviews

    a = app.args
    note = a.note
    if a.key == "-" and a.note_file == "-":
        raise UserError("the key and the note cannot both come from standard input; nothing was recorded")
    if a.note_file is not None:
        if note is not None:
            raise UserError("give --note or --note-file, not both; nothing was recorded")
        try:
            note = Path(a.note_file).read_text(encoding="utf-8") if a.note_file != "-" else __import__("sys").stdin.read()
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"could not read the note from {a.note_file}: {e}; nothing was recorded") from None
    written = reviews.decide(app.config, a.items, a.outcome, note or "", Path(a.key).expanduser() if a.key else None)
    for d in written:
        app.out(f"recorded {d['_id']}: {d['reviewer']} decided {d['item']}: {d['outcome']}")
    path = reviews.ledger_path(app.config)
    if path is not None:
        app.out(f"  kept in {app.config.store['reviews_collection']} and, line for line, in {path}")
    return 0


def cmd_review_enroll(app: Application) -> int:
    from auditpipe.evidence import reviewer_keys

    a = app.args
    key_file = Path(a.key).expanduser() if a.key else reviewer_keys.default_key_file()
    reviewers_file = Path(a.reviewers_file).expanduser() if a.reviewers_file else app.config.reviewers_file
    enrolled, made = reviewer_keys.enroll(None if a.print else reviewers_file, a.name, key_file)
    app.out(f"{'made' if made else 'took'} {enrolled.name}'s key {enrolled.key_id} in {key_file}: keep it where only "
            f"{enrolled.name} can read it")
    if a.print:
        app.out(f"not enrolled: whoever keeps {reviewers_file} adds this line to it:")
        app.out(reviewer_keys.line(enrolled))
    else:
        app.out(f"enrolled in {reviewers_file}: decisions signed with it count as {enrolled.name}'s")
    return 0


def cmd_review_log(app: Application) -> int:
    from auditpipe.evidence import query, reviews

    a = app.args
    since = query.parse_time(a.since, None) if a.since else None
    until = query.parse_time(a.until, None) if a.until else None
    rows = reviews.list_decisions(app.config, since, until, a.limit)
    app.out(query.format_json(rows) if a.json else reviews.format_decisions(rows))
    return 0


def register(sub) -> None:
    from auditpipe.evidence.reviewer_keys import KEY_ENV
    from auditpipe.evidence.reviews import outcomes

    p = sub.add_parser("review", help="what awaits review (each day's exceptions, the alerts); record a reviewer's decision",
                       description="The daily review an assessor asks for (PCI DSS 10.4.1, 10.4.3; docs/reviews.md): "
                                   "`review list` shows the days (of the regimes in review.regimes) and the alerts no "
                                   "decision names yet, `review decide` records a reviewer's decision, which is never "
                                   "changed (a link of a hash chain that verify recomputes), `review log` lists them. "
                                   "Without an action: `review list`.")
    p.set_defaults(func=cmd_review_list, since=None, until=None)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    s = command(actions, "list", "the days and alerts awaiting a decision",
                "Each ended UTC day of each regime in review.regimes, from the first day the store holds evidence of, "
                "that no decision names, with its deadline (review.deadline after the day) and the report to read; "
                "then the alerts of the period no decision names.",
                ("./auditpipe review list", "./auditpipe review list --from 90d"), cmd_review_list)
    add_time_range(s, "the period", "30 days before --to", "now")
    s = command(actions, "decide", "record a reviewer's decision about a day or an alert",
                "Records one decision per ITEM, signed with the reviewer's own key (--key, else "
                f"${KEY_ENV}, else ~/.config/auditpipe/reviewer.key): the reviewer is the name that key is enrolled "
                "under (review.reviewers_file), with the time, the outcome and the note, in the store's reviews "
                "collection and the second copy (review.ledger_file). A decision is never changed: a reviewer decides "
                "an item once, another reviewer may add theirs. Every item is checked before any is written: an "
                "unknown item, a day not over, a second decision by the same reviewer, a key not enrolled or a note "
                "with control characters writes nothing (exit 2).",
                ("./auditpipe review decide day:pci:2026-11-28 --outcome expected",
                 "./auditpipe review decide alert:brute_force/db-01/app/1795860000000 --key ~/keys/bob.key "
                 "--outcome escalated --note 'ticket SEC-101: password reset, source blocked'"), cmd_review_decide)
    s.add_argument("items", nargs="+", metavar="ITEM", help="day:REGIME:YYYY-MM-DD or alert:ALERT_ID (as `review list` shows)")
    s.add_argument("--outcome", required=True, choices=outcomes(), help="what the review found")
    s.add_argument("--note", help="what was looked at, found or done (required unless the outcome is expected)")
    s.add_argument("--note-file", metavar="FILE", help="the note from a file (- for standard input)")
    s.add_argument("--key", metavar="FILE", help=f"the reviewer's private key, - for standard input (default: "
                   f"${KEY_ENV}, else ~/.config/auditpipe/reviewer.key)")
    s = command(actions, "enroll", "make a reviewer's own signing key and enroll it under their name",
                "Makes an Ed25519 key in FILE (mode 0600; an existing key there is taken as it is) and adds its "
                "public half under NAME to review.reviewers_file: decisions signed with it are NAME's. Run it as "
                "the reviewer, so that the private key never leaves their account. Whoever can write the reviewers "
                "file can enroll any key under any name: where reviewers may not, --print gives the line for the "
                "file's keeper to add. A key enrolled already is refused.",
                ("./auditpipe review enroll alice",
                 "./auditpipe review enroll bob --print",
                 "./auditpipe review enroll carol --key ~/keys/carol.key --reviewers-file deploy/compose/reviewers"),
                cmd_review_enroll)
    s.add_argument("name", metavar="NAME", help="the reviewer's name (letters, digits and . _ @ + -), as decisions show it")
    s.add_argument("--key", metavar="FILE", help=f"where the private key is made or read (default: ${KEY_ENV}, else "
                   "~/.config/auditpipe/reviewer.key)")
    s.add_argument("--reviewers-file", metavar="FILE", help="the reviewers file to add to (default: review.reviewers_file)")
    s.add_argument("--print", action="store_true", help="make or read the key and print the reviewers file's line, "
                   "enrolling nothing")
    s = command(actions, "log", "the decisions recorded, in order",
                "The decisions in the order they were recorded (their links), with reviewer, outcome and note.",
                ("./auditpipe review log", "./auditpipe review log --from 7d --json"), cmd_review_log)
    add_time_range(s, "when the decisions were recorded", "the beginning", "now and later")
    s.add_argument("--limit", type=at_least_one, default=100, help="the newest this many (default 100)")
    s.add_argument("--json", action="store_true", help="JSON with every field")
