"""`auditpipe parse`: a file through the job's own parser, offline (io.auditpipe.flink.ParseFile)."""

import hashlib
import json
import subprocess
import sys

import jsonschema
import pytest

from auditpipe import paths
from auditpipe.tools.simulate import MALFORMED_LINES, simulate

FIXTURE = paths.PIPELINES / "audit-parser" / "src" / "test" / "resources" / "fixtures" / "mariadb-10.11-server_audit.log"
pytestmark = pytest.mark.skipif(not paths.JOB_JAR.exists(), reason="the job jar is not built (./auditpipe setup)")


def parse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditpipe", "parse", *args], capture_output=True, text=True,
                          cwd=paths.REPO, timeout=300)


def documents(stdout: str) -> list[dict]:
    def plain(v):  # the store's JSON view: dates as ISO-8601 strings
        if isinstance(v, dict):
            return v["$date"] if set(v) == {"$date"} else {k: plain(x) for k, x in v.items()}
        return v
    return [plain(json.loads(line)) for line in stdout.splitlines()]


def test_a_mariadb_log_parses_into_stored_events_that_follow_the_schema():
    r = parse(str(FIXTURE), "--format", "mariadb-audit", "--server", "mdb-01")
    assert r.returncode == 0, r.stderr
    docs = documents(r.stdout)
    assert len(docs) == len(FIXTURE.read_text().splitlines()) == 35
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc
    failed = [d for d in docs if d.get("auth_outcome") == "failure"]
    assert [(d["user"], d["status"]) for d in failed] == [("bob", 1045)]
    assert "35 events, 0 dead letters" in r.stderr


def test_bad_lines_are_reported_with_their_line_numbers_and_the_exit_code_says_so(tmp_path):
    log = tmp_path / "audit.log"
    m = simulate(log, rate=100, duration=5, speedup=1000, seed=5, rotate_on_size=0, malformed=len(MALFORMED_LINES))
    r = parse(str(log), "--server", "db-01")
    assert r.returncode == 1
    assert len(documents(r.stdout)) == m.records
    reported = [line for line in r.stderr.splitlines() if line.startswith("audit.log:")]
    assert len(reported) == m.malformed and any("invalid UTF-8" in line for line in reported)


def test_an_unknown_format_is_refused_with_the_known_ones():
    r = parse(str(FIXTURE), "--format", "oracle")
    assert r.returncode == 2 and "mariadb-audit" in r.stderr


def test_the_cli_the_config_and_the_parser_know_the_same_formats():
    from auditpipe import config
    from auditpipe.formats import FORMATS
    from auditpipe.stack.flink.job import FlinkJob

    schema = json.loads((paths.SCHEMAS / "config.schema.json").read_text())
    assert schema["properties"]["sources"]["items"]["properties"]["format"]["enum"] == FORMATS + ["auto"]
    runtime = FlinkJob(config.load(paths.DEFAULT_CONFIG)).runtime_lib
    r = subprocess.run(["java", "-cp", f"{paths.JOB_JAR}:{runtime}/*", "io.auditpipe.flink.ParseFile", str(FIXTURE),
                        "--format", "none"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and f"(known: {', '.join(FORMATS)})" in r.stderr, r.stderr
    assert f"must name the format: {'|'.join(FORMATS)}" in (paths.COLLECTORS / "fluentd" / "run").read_text(), \
        "the Fluentd collector's check"


def test_the_collectors_frame_records_with_the_parsers_own_patterns():
    """cli/auditpipe/formats.py (rsyslog, the catch-up, Fluentd's run) and io.auditpipe.parser.Framing
    (the parsers, `auditpipe parse`) hold the same patterns of a record's first and last line."""
    import re

    from auditpipe import config
    from auditpipe.formats import FRAMING
    from auditpipe.stack.flink.job import FlinkJob

    runtime = FlinkJob(config.load(paths.DEFAULT_CONFIG)).runtime_lib
    r = subprocess.run(["java", "-cp", f"{paths.JOB_JAR}:{runtime}/*", "io.auditpipe.flink.ParseFile", "--formats"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    java = {f["name"]: (f["start"], f["end"]) for f in map(json.loads, r.stdout.splitlines())}
    assert java == {name: (f.start, f.end) for name, f in FRAMING.items()}
    run = (paths.COLLECTORS / "fluentd" / "run").read_text()
    for name, f in FRAMING.items():
        if f.start:  # Fluentd frames by the first line
            case = re.search(rf"^  ([a-z|-]*\b{re.escape(name)}\b[a-z|-]*)\) firstline='([^']*)' ;;$", run, re.M)
            assert case and case.group(2) == f.start, f"collectors/fluentd/run frames {name} by {f.start}"


def test_the_cli_and_the_parsers_tell_formats_by_the_same_signatures():
    """cli/auditpipe/formats.py (`format: auto`, `parse` without --format) and io.auditpipe.parser.AuditFormats
    (the `syslog` format, per record) hold the same patterns of a format's line."""
    from auditpipe import config
    from auditpipe.formats import _SIGNATURES
    from auditpipe.stack.flink.job import FlinkJob

    runtime = FlinkJob(config.load(paths.DEFAULT_CONFIG)).runtime_lib
    r = subprocess.run(["java", "-cp", f"{paths.JOB_JAR}:{runtime}/*", "io.auditpipe.flink.ParseFile", "--formats"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    java = [(f["name"], f["signature"]) for f in sorted(map(json.loads, r.stdout.splitlines()), key=lambda f: f["tried"])
            if f["signature"]]  # in the order they are tried: the first match wins
    assert java == [(name, pattern.pattern.decode()) for name, pattern in _SIGNATURES]


SYSLOG_FIXTURE = FIXTURE.parent / "syslog-wrapped.log"


def test_records_in_a_syslog_envelope_are_detected_and_each_parses_in_its_own_format():
    """Every wrapping docs/formats.md names (the Java side's SyslogEnvelopeTest reads the same file):
    the file is detected as `syslog`, and each line's record as the format the Java side finds in it."""
    from auditpipe.formats import detect_enveloped, detect_file

    assert detect_file(SYSLOG_FIXTURE)[0] == "syslog"
    r = parse(str(SYSLOG_FIXTURE), "--server", "relay")
    assert r.returncode == 0, r.stderr
    assert "format syslog (line 1 of" in r.stderr and "holding mariadb-audit" in r.stderr
    docs = documents(r.stdout)
    assert [d["format"] for d in docs] == [detect_enveloped(line) for line in SYSLOG_FIXTURE.read_bytes().splitlines()]
    assert len(docs) == 10 and all(d["extra"]["syslog_tag"] for d in docs)
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc
    assert [d["original"] for d in docs] == SYSLOG_FIXTURE.read_text().splitlines(), "the line as received, header and all"


@pytest.mark.parametrize("style", ["xml-old", "xml-new", "csv", "enterprise-json", "enterprise-jsonl"])
def test_simulated_logs_of_each_style_parse_into_what_their_expected_records_say(tmp_path, style):
    """The simulator writes each record in the style and, beside it, as one JSON line (the Percona
    plugin's JSON, or for MySQL Enterprise the record itself); parsing the style must give, field by
    field, the document that line says (tests/helpers/stack.py, written without the job's parsers)."""
    from helpers.oracle import expected_document, expected_enterprise_document

    from auditpipe.tools.simulate import STYLES, expected_path

    log = tmp_path / "audit.log"
    m = simulate(log, rate=1000, duration=3, speedup=1000, seed=5, rotate_on_size=256 * 1024, rotations=20,
                 late_writes=2, failed_login_burst=5, style=style)
    assert m.rotations >= 2
    want = {}
    for line in expected_path(log).read_bytes().splitlines():
        expect = expected_enterprise_document if style.startswith("enterprise") else expected_document
        doc = expect("p", log, "auditpipe-parse", line)
        doc.update(format=STYLES[style], event_time=doc["event_time"].strftime("%Y-%m-%dT%H:%M:%SZ"))
        for k in ("line_sha256", "source_file", "original"):
            doc.pop(k)
        want[doc["record_id"]] = doc
    got = {}
    for f in sorted(tmp_path.glob("audit.log*")):
        r = parse(str(f), "--format", STYLES[style], "--server", "p")
        assert r.returncode == 0, r.stderr
        for doc in documents(r.stdout):
            assert hashlib.sha256(doc.pop("original").encode()).hexdigest() == doc.pop("line_sha256")
            for k in ("source_file", "ingest", "event_time_trusted"):
                doc.pop(k, None)
            got[doc["record_id"]] = doc
    assert len(got) == m.records
    assert got == want


def test_without_a_format_it_detects_one_and_says_which():
    r = parse(str(FIXTURE))
    assert r.returncode == 0, r.stderr
    assert "format mariadb-audit (line 1 of" in r.stderr
    assert len(documents(r.stdout)) == 35


def test_the_java_side_refuses_bad_arguments_with_a_message_not_a_stack_trace():
    from auditpipe import config
    from auditpipe.stack.flink.job import FlinkJob

    runtime = FlinkJob(config.load(paths.DEFAULT_CONFIG)).runtime_lib
    for args, message in ((["--format"], "--format needs a value"),
                          (["--timezone", "Mars/X"], "--timezone: 'Mars/X' is not a time zone")):
        r = subprocess.run(["java", "-cp", f"{paths.JOB_JAR}:{runtime}/*", "io.auditpipe.flink.ParseFile", str(FIXTURE),
                            *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and message in r.stderr and "Exception" not in r.stderr, r.stderr


FIXTURES = FIXTURE.parent


@pytest.mark.parametrize("name,fmt,events", [
    ("percona-8.0-old.xml", "percona-xml", 5), ("percona-8.0-new.xml", "percona-xml", 5),
    ("percona-8.0.csv", "percona-csv", 5), ("mysql-8.0-enterprise-new.xml", "mysql-enterprise-xml", 5),
    ("percona-8.0-audit_log_filter-old.xml", "mysql-enterprise-xml", 5),
    ("mysql-5.7-enterprise-pretty.json", "mysql-enterprise-json", 6),
    ("mysql-8.0-enterprise-compact.json", "mysql-enterprise-json", 6), ("mcafee-1.1-audit.json", "mcafee-json", 5)])
def test_every_formats_fixture_is_detected_and_parses_offline_into_schema_valid_documents(name, fmt, events):
    r = parse(str(FIXTURES / name))
    assert r.returncode == 0, r.stderr
    assert f"format {fmt} (line" in r.stderr, r.stderr
    docs = documents(r.stdout)
    assert len(docs) == events, r.stderr
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc
        assert doc["format"] == fmt
    # PCI DSS 10.2.2 on every record: user, type, date and time, outcome, origin (the failed login's)
    failed = [d for d in docs if d.get("outcome") == "failure"]
    assert [(d["user"], d["ip"]) for d in failed] == [("mallory", "203.0.113.9")], failed


def test_aurora_rows_downloaded_and_exported_are_the_same_stored_events():
    """Aurora's audit files and their CloudWatch Logs export, each detected by itself (no --format):
    the same documents but for the file they came from and where in it, valid against the event schema."""
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    got = {}
    for name in ("aurora-mysql-3-audit.log", "aurora-mysql-3-cloudwatch-export.log"):
        r = parse(str(FIXTURE.parent / name), "--server", "aurora-1")
        assert r.returncode == 0, r.stderr
        assert "5 events, 0 dead letters" in r.stderr and "(aurora-audit)" in r.stderr, r.stderr
        docs = documents(r.stdout)
        for doc in docs:
            assert not list(validator.iter_errors(doc)), doc
        got[name] = {d["_id"]: {k: v for k, v in d.items() if k not in ("source_file", "original", "line_sha256", "ingest")}
                     for d in docs}
    assert got["aurora-mysql-3-audit.log"] == got["aurora-mysql-3-cloudwatch-export.log"]


def test_a_cloud_sql_export_is_detected_and_its_split_entry_read_whole(tmp_path):
    """Cloud Logging's Data Access entries of Cloud SQL for MySQL, detected by themselves: the entry
    Cloud Logging split in two (its parts apart in the file) is one event with the whole statement;
    a part whose partner is not in the file is a dead letter naming its split, exit code 1."""
    validator = jsonschema.Draft202012Validator(json.loads((paths.SCHEMAS / "audit-event.schema.json").read_text()))
    export = FIXTURE.parent / "cloudsql-mysql-8.0-data-access.json"
    r = parse(str(export), "--server", "cloudsql-1")
    assert r.returncode == 0, r.stderr
    assert "5 events, 0 dead letters, 6 lines (cloudsql-mysql-audit)" in r.stderr, r.stderr
    docs = documents(r.stdout)
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc
    inserts = [d for d in docs if d.get("command_class") == "insert"]
    assert len(inserts) == 1 and inserts[0]["sqltext"].startswith("INSERT INTO shop.orders") \
        and inserts[0]["sqltext"].endswith("(40, 'order 40')"), inserts
    assert [(d["user"], d["status"]) for d in docs if d.get("auth_outcome") == "failure"] == [("root", 1045)]

    lines = export.read_text().splitlines()
    alone = tmp_path / "part.json"
    alone.write_text("\n".join(lines[:3]) + "\n")  # part 2 of 2, without part 1
    r = parse(str(alone), "--server", "cloudsql-1", "--format", "cloudsql-mysql-audit")
    assert r.returncode == 1
    assert "part.json:3: part 2 of 2 of a Cloud Logging entry split in 2 (split.uid 1764064803500000-7f3a)" in r.stderr, r.stderr
    assert "2 events, 1 dead letters" in r.stderr
