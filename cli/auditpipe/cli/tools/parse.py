"""`auditpipe parse`: parse an audit log file offline: one stored-event JSON per line.

Runs FILE through the job's own reader, as the pipeline would: records are framed as the collector
frames them (one per line, or several lines each for XML, CSV and pretty-printed JSON); each record
that becomes an event is printed as the document the store would hold (JSON, one per line); each
that would be a dead letter is reported on stderr with the number of its first line and the reason,
and the exit code is then 1. Check a log before pointing the pipeline at it. Card numbers and the
config's masking patterns are masked as the job masks them. Formats: docs/formats.md; enrichment:
docs/compliance.md.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from auditpipe import formats, paths, prereqs
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented
from auditpipe.errors import UserError


def run(app: Application) -> int:
    """An audit log through the job's own reader, offline (io.auditpipe.flink.ParseFile)."""
    import tempfile
    from zoneinfo import available_timezones

    from auditpipe.stack.flink import job_settings
    from auditpipe.stack.flink.job import FlinkJob

    a = app.args
    path = Path(a.file)
    if not path.is_file():
        raise UserError(f"{path} is not a file")
    if a.timezone not in available_timezones():
        raise UserError(f"--timezone: '{a.timezone}' is not an IANA time zone name (e.g. UTC, Europe/Berlin)")
    fmt = a.format
    if fmt is None:
        fmt, how = formats.detect_file(path)
        if fmt is None:
            raise UserError(f"cannot tell the format: {how}; give --format")
        app.info(f"parse: format {fmt} ({how}; --format to choose)")
    cfg = app.config
    job = FlinkJob(cfg)
    job.install()  # the job jar holds the parsers
    java = prereqs.require_java17()
    with tempfile.NamedTemporaryFile("w", suffix=".properties", encoding="utf-8") as props:
        props.write(job_settings.properties_text(job_settings.compliance_properties(cfg)))
        props.flush()
        return subprocess.run([java, "-Xmx1g", "-cp", f"{paths.JOB_JAR}:{job.runtime_lib}/*",
                               "io.auditpipe.flink.ParseFile", str(path), "--format", fmt, "--server", a.server,
                               "--timezone", a.timezone, "--compliance", props.name,
                               *(["--enrich"] if a.enrich else [])]).returncode


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe parse /var/lib/mysql/audit.log", "./auditpipe parse audit.log --format percona-xml --enrich",
                   "./auditpipe parse server_audit.log --timezone Europe/Berlin --server db-01 > events.jsonl"), run)
    s.add_argument("file", metavar="FILE", help="the audit log file")
    s.add_argument("--format", choices=formats.FORMATS, help="its format (default: detected from its first lines, "
                   "and said)")
    s.add_argument("--server", default="parsed", help="the server name the event ids are made with, as a source's "
                   "`server` makes them (default: the word 'parsed')")
    s.add_argument("--timezone", default="UTC", help="the server's time zone, for times written without a zone "
                   "(mariadb-audit; audit_log_filter's XML and JSON); default UTC")
    s.add_argument("--enrich", action="store_true", help="also show what enrichment makes of each event, with the "
                   "config's compliance settings: category, action, tables, data classes, principal class, access "
                   "violations, the controls it evidences")
