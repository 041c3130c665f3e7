"""`auditpipe import`'s checks before anything runs (cli/auditpipe/archive/history.py): each bad
argument is refused with a message that names it; the format and time zone default to the
configured source's, else to what the files' first lines say."""

import gzip
import json

import pytest

from auditpipe import config
from auditpipe.archive import history
from auditpipe.errors import UserError

JSON_LINE = ('{"audit_record":{"name":"Query","record":"1_2026-11-25T10:00:00","timestamp":"2026-11-25T10:00:00 UTC",'
             '"command_class":"select","connection_id":"1","status":0,"sqltext":"select 1","user":"app[app] @ h [10.0.0.1]",'
             '"host":"h","os_user":"","ip":"10.0.0.1","db":"shop"}}\n')


@pytest.fixture
def cfg(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text("sources:\n  - {path: /var/lib/mysql/audit.log, server: db-xml, format: percona-xml, "
                 "timezone: Europe/Berlin}\n")
    return config.load(f)


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "audit.log.1"
    p.write_text(JSON_LINE)
    return p


def refused(cfg, files, server="db-01", fmt=None, tz=None) -> str:
    with pytest.raises(UserError) as e:
        history.check_arguments(cfg, files, server, fmt, tz)
    return str(e.value)


def test_the_format_is_detected_from_plain_and_gzip_files(cfg, log, tmp_path):
    assert history.check_arguments(cfg, [log], "db-01", None, None) == ("percona-json", "UTC")
    gz = tmp_path / "audit.log.2.gz"
    with gzip.open(gz, "wt") as f:
        f.write(JSON_LINE)
    assert history.check_arguments(cfg, [gz], "db-01", None, None) == ("percona-json", "UTC")


def test_a_configured_server_brings_its_format_and_time_zone(cfg, log):
    assert history.check_arguments(cfg, [log], "db-xml", None, None) == ("percona-xml", "Europe/Berlin")
    assert "is shipped as percona-xml" in refused(cfg, [log], "db-xml", "percona-json")


def test_bad_arguments_are_named(cfg, log, tmp_path):
    assert "is not a file" in refused(cfg, [tmp_path / "missing.log"])
    assert "is not a server name" in refused(cfg, [log], "db 01")
    assert "not an IANA time zone" in refused(cfg, [log], tz="Mars/Base")
    unknown = tmp_path / "notes.txt"
    unknown.write_text("nothing an audit plugin writes\n")
    assert "cannot tell the format" in refused(cfg, [unknown])


def test_each_server_gets_its_own_files(tmp_path, log):
    other = tmp_path / "audit.log.2"
    other.write_text(JSON_LINE)
    assert history.server_groups([["db-01"]], [str(log), str(other)]) == [("db-01", [log, other])]
    assert history.server_groups([["db-01", str(log)], ["db-02", str(other)]], []) == [("db-01", [log]), ("db-02", [other])]


@pytest.mark.parametrize("servers, files, says", [
    ([["db-01"], ["db-02"]], ["a.log"], "belong to a single --server"),
    ([["db-01", "b.log"]], ["a.log"], "belong to a single --server"),
    ([["db-01"]], [], "--server db-01: no files"),
    ([["db-01", "a.log"], ["db-01", "b.log"]], [], "--server db-01 is given twice"),
])
def test_bad_server_groups_are_named(servers, files, says):
    with pytest.raises(UserError) as e:
        history.server_groups(servers, files)
    assert says in str(e.value)


def test_a_file_of_two_servers_is_refused(log):
    with pytest.raises(UserError) as e:
        history.server_groups([["db-01", str(log)], ["db-02", str(log)]], [])
    assert "named twice" in str(e.value)
    with pytest.raises(UserError):
        history.server_groups([["db-01"]], [str(log), str(log)])


def test_an_archive_turned_off_is_refused(tmp_path, log):
    f = tmp_path / "off.yaml"
    f.write_text("archive: {enabled: false}\n")
    assert "archive.enabled is false" in refused(config.load(f), [log])


def test_chain_names_sort_by_time():
    from datetime import datetime, timezone

    names = [history.chain_name(datetime(2026, 1, d, 3, 4, 5, tzinfo=timezone.utc)) for d in (2, 10, 11)]
    assert names == sorted(names) and names[0] == "import-20260102T030405Z"


def test_a_store_that_does_not_answer_is_named(tmp_path):
    f = tmp_path / "nostore.yaml"
    f.write_text(f"state_dir: {tmp_path / 'state'}\nstore: {{port: 1}}\n")  # nothing listens on port 1
    with pytest.raises(UserError, match="does not answer.*auditpipe up"):
        history.require_store(config.load(f))


def test_a_known_id_is_one_line_whatever_it_holds():
    """The known-ids file holds one JSON string per line (the job's KnownIds reads them back; its test
    reads these same escapes): an id with a line break stays one line and comes back whole."""
    for event_id in ["db-01/7_2026", "db-01/8\n_x", "db-01/9\r_y", "db-01/10_é\u2028"]:
        line = history.known_id_line(event_id)
        assert line.endswith("\n") and line.count("\n") == 1 and "\r" not in line and line.isascii()
        assert json.loads(line) == event_id
    assert history.known_id_line("db-01/8\n_x") == '"db-01/8\\n_x"\n'
