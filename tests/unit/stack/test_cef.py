"""CEF messages of alerts (stack/alerts/cef.py), read back by tests/helpers/cef_reader.py (written from CEF's rules): every
value comes back as it was (control characters as U+FFFD, a long one cut and ending in "…"), no value
adds a key, and no message with its syslog header passes MAX_MESSAGE_BYTES."""

from __future__ import annotations

from datetime import datetime, timezone

from helpers.cef_reader import parse
from hypothesis import given, settings
from hypothesis import strategies as st

from auditpipe import __version__, contract
from auditpipe.stack.alerts import cef

NOW = datetime(2026, 11, 29, 9, 30, 5, 123000, tzinfo=timezone.utc)


def alert(**over) -> dict:
    a = {"_id": "brute_force/db-01/app/1795944540000", "rule": "brute_force", "severity": "high", "server": "db-01",
         "subject": "app", "summary": "5 failed logins for account 'app' on db-01 within 40s",
         "first_event_time": datetime(2026, 11, 29, 9, 29, tzinfo=timezone.utc),
         "last_event_time": datetime(2026, 11, 29, 9, 29, 40, tzinfo=timezone.utc),
         "evidence": ["e1", "e2"], "evidence_count": 5, "controls": ["PCI-DSS-10.2.1.4"],
         "frameworks": {"pci-dss-v4": ["10.2.1.4"], "mitre-attack": ["T1110.001"]}, "raised_at": NOW}
    a.update(over)
    return a


def test_an_alert_reads_back_field_for_field():
    head, ext = parse(cef.message(alert()))
    assert head == ["auditpipe", "auditpipe", __version__, "brute_force",
                    "Failed logins of one account within a window reach a threshold", "8"]
    assert ext == {
        "externalId": "brute_force/db-01/app/1795944540000", "rt": "1795944605123", "start": "1795944540000",
        "end": "1795944580000", "dhost": "db-01", "duser": "app", "cnt": "5",
        "cs1": "PCI-DSS-10.2.1.4", "cs1Label": "Controls", "cs2": "mitre-attack:T1110.001;pci-dss-v4:10.2.1.4",
        "cs2Label": "Frameworks", "cs4": "e1,e2", "cs4Label": "Evidence",
        "msg": "5 failed logins for account 'app' on db-01 within 40s"}


def test_every_rule_of_the_job_has_its_subject_mapped_and_its_name():
    assert set(cef.SUBJECT) == set(contract.alert_rules())
    for rule in contract.alert_rules():
        assert cef.description(rule) != rule


def test_origins_and_other_subjects():
    assert parse(cef.message(alert(rule="password_spray", subject="10.0.0.9")))[1]["src"] == "10.0.0.9"
    ext = parse(cef.message(alert(rule="password_spray", subject="2001:db8::7")))[1]
    assert (ext["c6a2"], ext["c6a2Label"]) == ("2001:db8::7", "Source IPv6 Address")
    assert parse(cef.message(alert(rule="password_spray", subject="app-7.example")))[1]["shost"] == "app-7.example"
    ext = parse(cef.message(alert(rule="record_gap", subject="2026-11-29T09:00:00", gap_class="unexplained")))[1]
    assert (ext["cs5"], ext["cs5Label"], ext["cs3"]) == ("2026-11-29T09:00:00", "Subject", "unexplained")
    assert "duser" not in ext
    assert "cs5" not in parse(cef.message(alert(rule="integrity", subject=None)))[1]


def test_severities_in_the_header_and_the_syslog_priority():
    for severity, number in (("low", 3), ("medium", 6), ("high", 8), ("critical", 10)):
        assert parse(cef.message(alert(severity=severity)))[0][5] == str(number)
    frame = cef.Syslog("rfc5424", 13, "fwd-1").frame("CEF:0|x", "critical", NOW)
    count, rest = frame.split(b" ", 1)
    assert int(count) == len(rest) and rest.startswith(b"<106>1 2026-11-29T09:30:05.123Z fwd-1 auditpipe - alert - ")
    line = cef.Syslog("rfc3164", 16, "fwd-1").frame("CEF:0|x", "low", datetime(2026, 11, 2, 9, 3, 4, tzinfo=timezone.utc))
    assert line == b"<133>Nov  2 09:03:04 fwd-1 CEF:0|x\n"


def test_a_hostile_account_cannot_add_a_key_or_break_the_header():
    evil = "x dhost=forged msg=owned\\ cs1=| CEF:0|a|b\nline2\r\x00"
    head, ext = parse(cef.message(alert(subject=evil, server="db|01\\", summary=evil)))
    assert ext["duser"] == ext["msg"] == "x dhost=forged msg=owned\\ cs1=| CEF:0|a|b\nline2\r\ufffd"
    assert ext["dhost"] == "db|01\\"
    assert head[3] == "brute_force" and len(head) == 6


texts = st.text(st.characters(codec="utf-8"), max_size=3000)


@settings(max_examples=300, deadline=None)
@given(subject=texts, summary=texts, server=texts, rule=st.sampled_from(sorted(cef.SUBJECT)),
       evidence=st.lists(st.text(max_size=80), max_size=50), framing=st.sampled_from(["rfc5424", "rfc3164"]))
def test_any_text_reads_back_whole_or_cut_and_the_message_stays_bounded(subject, summary, server, rule, evidence,
                                                                        framing):
    a = alert(rule=rule, subject=subject or None, summary=summary, server=server, evidence=evidence,
              controls=["C" * 300] * 20)
    message = cef.message(a)
    frame = cef.Syslog(framing, 13, "h" * 255).frame(message, "high", NOW)
    assert len(frame) <= cef.MAX_MESSAGE_BYTES
    assert b"\n" not in frame.rstrip(b"\n"), "one line: LF framing stays whole"
    _, ext = parse(message)
    for key, text in (("msg", summary), ("dhost", server)):
        if key == "dhost" and not server:
            assert key not in ext
            continue
        want = cef._CONTROL.sub("\ufffd", text)
        got = ext[key]
        assert got == want or (got.endswith(cef.CUT) and want.startswith(got[:-1])), (key, got[:80], want[:80])


def test_the_docs_show_this_mapping_and_a_message_it_makes():
    from auditpipe import paths

    doc = (paths.REPO / "docs" / "alerts.md").read_text(encoding="utf-8")
    section = doc[doc.index("## CEF over syslog"):]
    section = section[:section.index("\n## ", 1)]
    rows = [tuple(c.strip() for c in line.strip("|").split("|")) for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| alert (")]
    assert rows == [tuple(r) for r in cef.MAPPING]
    example = cef.Syslog("rfc5424", 13, "fwd-1").frame(cef.message(alert()), "high", NOW).split(b" ", 1)[1].decode()
    assert example in section


class _Message:
    """A consumed message's data as the forwarder reads it (value, partition, offset)."""

    def __init__(self, value: bytes, partition: int = 0, offset: int = 7):
        self._value, self._partition, self._offset = value, partition, offset

    def value(self) -> bytes:
        return self._value

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


def test_a_message_of_the_alerts_topic_that_is_no_alert_is_sent_saying_where_it_was():
    from auditpipe.stack.alerts import forwarder

    t = forwarder.Target("tcp", "siem", 514, "rfc3164", 13, "fwd-1", 5.0)
    for bad in (b"not json", b'{"rule": "brute_force"}', b"[1, 2]", b"\xff\xfe"):
        frame, where = forwarder.frame_of(t, "audit.alerts", _Message(bad))
        assert where == "audit.alerts/0/7"
        head, ext = parse(frame.decode()[frame.decode().index("CEF:0|"):].rstrip("\n"))
        assert head[3] == "unreadable_alert" and ext["externalId"] == "audit.alerts/0/7", ext
        assert ext["msg"].startswith("audit.alerts partition 0 offset 7: ")
    from bson import json_util

    good = json_util.dumps(alert(), json_options=json_util.RELAXED_JSON_OPTIONS).encode()
    frame, where = forwarder.frame_of(t, "audit.alerts", _Message(good))
    assert where == alert()["_id"] and frame.decode().endswith(cef.message(alert()) + "\n")
    assert frame.startswith(b"<107>Nov 29 09:30:05 fwd-1 CEF:0|")
