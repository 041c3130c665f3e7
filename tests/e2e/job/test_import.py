"""`auditpipe import` (docs/archive.md "Imported history") against the real stack: three days of a
server's rotated history, gzip files and malformed lines among them, go through the job's own graph
into the archive, the evidence collection, the hourly counts and the rollups, each event once, in a chain
of its own that verify checks; a file whose clock steps back is counted whole; importing again, or
importing what was shipped live, adds nothing; several servers import in one run; bad arguments are
refused with the reason."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import datetime, timedelta, timezone

import pytest

from auditpipe.archive import history, reader
from auditpipe.evidence import tiers
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

SERVER = "e2e-history"  # no configured source: known only from its imported history
LIVE = "e2e-import-live"  # a configured source: shipped live first, then its files imported
MALFORMED = 4


def imported_summary(out: str) -> tuple[int, int]:
    """(events imported, records already present) from import's output."""
    events = int(re.search(r"imported ([\d,]+) events", out).group(1).replace(",", ""))
    present = int(re.search(r"([\d,]+)  already present", out).group(1).replace(",", ""))
    return events, present


@pytest.fixture(scope="module")
def history_files(stack, tmp_path_factory):
    folder = tmp_path_factory.mktemp("history")
    start = (datetime.now(timezone.utc) - timedelta(days=3)).replace(minute=0, second=0, microsecond=0)
    span = 3 * 86400
    m = simulate(folder / "audit.log", rate=9000 / span, duration=span, speedup=span / 20, seed=41,
                 rotate_on_size=512 * 1024, rotations=9, failed_login_burst=6, incidents=True,
                 malformed=MALFORMED, start_time=start)
    files = sorted(folder.glob("audit.log*"))
    assert len(files) >= 4, files
    for f in files[1::2]:  # every other rotated file compressed, as logrotate leaves them
        with open(f, "rb") as src, gzip.open(f.with_name(f.name + ".gz"), "wb") as dst:
            shutil.copyfileobj(src, dst)
        f.unlink()
    return m, start, sorted(folder.glob("audit.log*"))


def test_import_brings_history_in_once_and_verifiably(stack, history_files):
    m, start, files = history_files
    first = stack.cli("import", *map(str, files), "--server", SERVER, check=False)
    assert first.returncode == 3, f"imported with dead letters:\n{first.stdout}\n{first.stderr}"
    events, present = imported_summary(first.stdout)
    assert (events, present) == (m.records, 0), first.stdout
    assert "% of" in first.stderr and "records (" in first.stderr, "progress with the rate"

    rows = stack.archived(SERVER)
    assert len(rows) == m.records and len({r["_id"] for r in rows}) == m.records, "each event archived once"
    chains = {r.get("chain") for r in rows}
    assert len(chains) == 1 and next(iter(chains)).startswith("import-"), chains
    hours = list(stack.db()[stack.cfg.store["stats_hourly_collection"]].find({"server": SERVER}))
    assert sum(h["count"] for h in hours) == m.records, "the hours count every imported event once"
    assert all(h["_id"].endswith("|" + h["chain"]) and h["chain"] in chains for h in hours)
    per_hour: dict[int, int] = {}
    for r in rows:  # event_time in milliseconds
        per_hour[r["event_time"] // 3_600_000 * 3_600_000] = per_hour.get(r["event_time"] // 3_600_000 * 3_600_000, 0) + 1
    assert {int(h["window_start"].replace(tzinfo=timezone.utc).timestamp() * 1000): h["count"] for h in hours} == per_hour, \
        "each hour its events"
    assert stack.stats_total(SERVER) == 0, "history spread over days writes no one-minute counts"
    dead = stack.dead_letters(SERVER)
    assert len(dead) == MALFORMED and all(d["reason"] and d["kafka"]["topic"].startswith("import:") for d in dead)
    assert stack.count(SERVER) == 0, "history does not go into the capped collection"

    # the catalog's answers over the period, from the archive, equal what was written
    since, until = (start - timedelta(hours=1)).isoformat(), datetime.now(timezone.utc).isoformat()
    by_name: dict[str, int] = {}
    for r in tiers.run_saved(stack.cfg, "events-by-name", since, until, [SERVER], {}):
        by_name[r["_id"]["event_name"]] = by_name.get(r["_id"]["event_name"], 0) + r["events"]
    assert by_name == m.events_by_name
    failed = tiers.run_saved(stack.cfg, "failed-logins", since, until, [SERVER], {})
    assert sum(r["attempts"] for r in failed) == m.failed_logins
    # the rollups count what the job counts in them, from the imported events alone
    db = stack.db()
    rolled = sum(d["events"] for d in db[stack.cfg.store["rollups_collection"]].find({"server": SERVER}))
    counted = sum(1 for r in rows if r.get("controls") or r.get("principal_class") == "administrator")
    assert rolled == counted > 0
    evidence = {d["_id"] for d in db[stack.cfg.store["evidence_collection"]].find({"server": SERVER}, {"_id": 1})}
    kinds = {r["_id"] for r in rows if r.get("auth_outcome") == "failure" or r.get("data_classes")
             or r.get("category") in ("account_management", "audit_system")}  # the contract's evidence_kinds
    assert evidence == kinds and len(evidence) >= m.failed_logins

    verified = stack.cli("verify", "--server", SERVER)
    assert re.search(rf"archive\s+{SERVER} import-\S+: links 1 to {m.records} \({m.records} present\), confirmed by",
                     verified.stdout), verified.stdout
    assert "RESULT: the chains verify" in verified.stdout

    again = stack.cli("import", *map(str, files), "--server", SERVER, check=False)
    assert again.returncode == 3, again.stderr  # the malformed lines are dead letters again (the same ids)
    assert imported_summary(again.stdout) == (0, m.records), again.stdout
    assert len(stack.archived(SERVER)) == m.records and len(stack.dead_letters(SERVER)) == MALFORMED


def clock_stepped_back(path, records: int, seed: int) -> tuple:
    """A Percona log of ``records`` records over an hour whose clock steps back an hour halfway (the
    second half's times an hour earlier than written: an NTP correction, a restored VM), two of its lines
    malformed; (manifest, the first record's time)."""
    from auditpipe.tools.simulate import PERCONA_TIME

    start = (datetime.now(timezone.utc) - timedelta(days=2)).replace(minute=0, second=0, microsecond=0)
    written = path.with_name("written.log")
    m = simulate(written, rate=records / 3600, duration=3600, speedup=1e6, seed=seed, rotate_on_size=0,
                 failed_login_burst=8, malformed=2, start_time=start)
    lines = written.read_bytes().splitlines(keepends=True)

    def back(line: bytes) -> bytes:
        def earlier(t: re.Match) -> bytes:
            moved = datetime.strptime(t.group(1).decode(), PERCONA_TIME) - timedelta(hours=1)
            return b'"timestamp":"' + moved.strftime(PERCONA_TIME).encode() + b'"'
        return re.sub(rb'"timestamp":"([^"]+ UTC)"', earlier, line)

    half = len(lines) // 2
    path.write_bytes(b"".join(lines[:half] + [back(x) for x in lines[half:]]))
    written.unlink()
    return m, start


def test_a_clock_stepped_back_is_counted_whole_and_every_dead_letter_said(stack, tmp_path):
    """Every record of a bounded input counts in its minute, hour and day, whatever the order of its
    times (the watermark follows the earliest time still to come in the files: TimeFloors); the
    summary names exactly the dead letters the store holds for the import, by stage."""
    server = "e2e-clock-back"
    m, start = clock_stepped_back(tmp_path / "audit.log", 12_000, seed=53)
    r = stack.cli("import", str(tmp_path / "audit.log"), "--server", server, check=False)
    assert r.returncode == 3, f"imported, with the malformed lines as dead letters:\n{r.stdout}\n{r.stderr}"
    assert imported_summary(r.stdout) == (m.records, 0), r.stdout
    dead = stack.dead_letters(server)
    stages: dict[str, int] = {}
    for d in dead:
        stages[d["stage"]] = stages.get(d["stage"], 0) + 1
    assert stages == {"parse": 2}, stages
    said = re.search(r"([\d,]+)  dead letters \(kept in the store's dead-letter collection, with the reason\), by stage: "
                     r"(.*)", r.stdout)
    assert said and (int(said.group(1)), said.group(2)) == (len(dead), "parse 2"), r.stdout

    rows = stack.archived(server)
    assert len(rows) == m.records
    assert min(r["event_time"] for r in rows) < int(start.timestamp() * 1000) <= max(r["event_time"] for r in rows), \
        "the file's times step back across the hour it began in"
    hours = list(stack.db()[stack.cfg.store["stats_hourly_collection"]].find({"server": server}))
    per_hour: dict[int, int] = {}
    for row in rows:
        hour = row["event_time"] // 3_600_000 * 3_600_000
        per_hour[hour] = per_hour.get(hour, 0) + 1
    assert {int(h["window_start"].replace(tzinfo=timezone.utc).timestamp() * 1000): h["count"] for h in hours} == per_hour, \
        "each hour counts every one of its events, those read after later ones too"
    rolled = sum(d["events"] for d in stack.db()[stack.cfg.store["rollups_collection"]].find({"server": server}))
    assert rolled == sum(1 for row in rows if row.get("controls") or row.get("principal_class") == "administrator")

    since, until = (start - timedelta(hours=2)).isoformat(), (start + timedelta(hours=2)).isoformat()
    q = stack.cli("query", "failed-logins", "--from", since, "--to", until, "--server", server, "--json")
    assert sum(x["attempts"] for x in json.loads(q.stdout)) == m.failed_logins > 0, q.stdout

    # the report counts them too, and says that no alert rule ran over imported history
    page = tmp_path / "pci.html"
    stack.cli("report", "pci", "--from", since, "--to", until, "--server", server, "--out", str(page))
    html = page.read_text(encoding="utf-8")
    evidence = json.loads(re.search(r'id="evidence">(.*?)</script>', html, re.S).group(1))
    assert sum(x["attempts"] for x in evidence["sections"]["failed-logins"]) == m.failed_logins
    assert evidence["imported_history"] == {server: m.records}
    for section in ("login-alerts", "audit-trail", "alerts"):
        assert f'data-figure="not-evaluated:{section}">Not evaluated' in html, section


def test_an_imported_event_cannot_change_chains_unseen(stack, history_files):
    """The link covers the chain's name: an imported event passed off as the live chain's (its chain
    field removed) no longer matches its link."""
    from auditpipe.evidence.chain import verify_links

    rows = stack.archived(SERVER)
    assert rows, "the import test ran first"
    chain = rows[0]["chain"]
    assert not verify_links(f"{SERVER} {chain}", rows, {}).findings
    moved = [{k: v for k, v in r.items() if k != "chain"} if r["chain_seq"] == 7 else r for r in rows]
    report = verify_links(f"{SERVER} {chain}", moved, {})
    assert [(f.kind, f.seq) for f in report.findings] == [("edited", 7)], [f.line("archive") for f in report.findings]


def test_importing_what_was_shipped_live_adds_nothing(stack, tmp_path):
    m = simulate(stack.log_path(LIVE), rate=200, duration=20, speedup=20, seed=43, rotate_on_size=256 * 1024, rotations=9)
    stack.stored_documents(LIVE, m.records)
    stack.assert_archived_exactly(LIVE)
    files = sorted(stack.log_path(LIVE).parent.glob(stack.log_path(LIVE).name + "*"))
    r = stack.cli("import", *map(str, files), "--server", LIVE)
    assert imported_summary(r.stdout) == (0, m.records), r.stdout
    assert len(stack.archived(LIVE)) == m.records
    assert "RESULT: the chains verify" in stack.cli("verify", "--server", LIVE).stdout


def test_several_servers_import_in_one_run(stack, history_files, tmp_path):
    """--server NAME FILE... repeated: each server's files in a job of their own, one after another in
    one JVM, each with its own summary; the run's total after them."""
    m, _, files = history_files
    servers = {"e2e-fleet-a": [], "e2e-fleet-b": []}
    for name, copies in servers.items():  # the same history under other names: other ids, all imported
        (tmp_path / name).mkdir()
        for f in files:
            copies.append(tmp_path / name / f.name)
            shutil.copyfile(f, copies[-1])
    args = [x for name, fs in servers.items() for x in ("--server", name, *map(str, fs))]
    r = stack.cli("import", *args, check=False)
    assert r.returncode == 3, f"imported with dead letters:\n{r.stdout}\n{r.stderr}"
    assert [int(n.replace(",", "")) for n in re.findall(r"imported ([\d,]+) events of server", r.stdout)] == [m.records] * 2
    assert f"{2 * m.records:,} events of 2 of 2 servers in" in r.stdout, r.stdout
    assert f"; {2 * MALFORMED} dead letters (parse {2 * MALFORMED})" in r.stdout, "the run's dead letters, by stage"
    for name in servers:
        assert f"import {name}: 100% of" in r.stderr, r.stderr
        rows = stack.archived(name)
        assert len(rows) == m.records and len({r["chain"] for r in rows}) == 1
        assert len(stack.dead_letters(name)) == MALFORMED
    assert {r["chain"] for name in servers for r in stack.archived(name)} == {stack.archived("e2e-fleet-a")[0]["chain"]}, \
        "one run, one chain name"


def test_managed_services_files_import_each_detected_by_itself(stack):
    """The managed services' files as users download or export them (docs/formats.md), each format
    told by the file: Aurora's downloaded audit file and its CloudWatch Logs export hold the same
    rows (the export adds nothing), Azure's Event Hubs records, and Cloud SQL's Cloud Logging export
    with a statement split in two entries, which comes in as one event holding the whole statement."""
    from auditpipe import paths

    fixtures = paths.PIPELINES / "audit-parser" / "src" / "test" / "resources" / "fixtures"
    for server, name, fmt, expected in (
            ("e2e-aurora", "aurora-mysql-3-audit.log", "aurora-audit", (5, 0)),
            ("e2e-aurora", "aurora-mysql-3-cloudwatch-export.log", "aurora-audit", (0, 5)),
            ("e2e-azure", "azure-mysql-flexible-eventhubs.json", "azure-mysql-audit", (5, 0)),
            ("e2e-cloudsql", "cloudsql-mysql-8.0-data-access.json", "cloudsql-mysql-audit", (5, 0))):
        r = stack.cli("import", str(fixtures / name), "--server", server)
        assert f"as {fmt}" in r.stdout + r.stderr, (name, r.stdout, r.stderr)
        assert imported_summary(r.stdout) == expected, (name, r.stdout)
    for server in ("e2e-aurora", "e2e-azure", "e2e-cloudsql"):
        rows = stack.archived(server)
        assert len(rows) == len({r["_id"] for r in rows}) == 5, server
        assert not stack.dead_letters(server), server
    statements = [r["sqltext"] for r in stack.archived("e2e-cloudsql") if r.get("command_class") == "insert"]
    assert len(statements) == 1 and statements[0].startswith("INSERT INTO shop.orders") \
        and statements[0].endswith("(40, 'order 40')"), statements
    assert "RESULT: the chains verify" in stack.cli("verify", "--server", "e2e-cloudsql").stdout


def test_bad_arguments_are_refused_with_the_reason(stack, history_files, tmp_path):
    _, _, files = history_files
    cases = [
        (["import", str(tmp_path / "missing.log"), "--server", SERVER], "is not a file"),
        (["import", str(files[0]), "--server", "bad name"], "is not a server name"),
        (["import", str(files[0]), str(files[0]), "--server", SERVER], "named twice"),
        (["import", "--server", SERVER, str(files[0]), "--server", "e2e-other", str(files[0])], "named twice"),
        (["import", str(files[0]), "--server", SERVER, "--server", "e2e-other"], "belong to a single --server"),
        (["import", str(files[0]), "--server", SERVER, "--format", "percona-xml"], "none of its first"),
        (["import", str(files[0]), "--server", "e2e-xml-old", "--format", "percona-json"], "is shipped as percona-xml"),
        (["import", str(files[0]), "--server", SERVER, "--timezone", "Mars/Base"], "not an IANA time zone"),
    ]
    not_gzip = tmp_path / "audit.log.1.gz"
    not_gzip.write_text("plain text, not gzip\n")
    cases.append((["import", str(not_gzip), "--server", SERVER, "--format", "percona-json"], "cannot read"))
    before = len(stack.archived(SERVER))
    for args, says in cases:
        r = stack.cli(*args, check=False)
        assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
        assert says in r.stderr, (args, r.stderr)
    assert len(stack.archived(SERVER)) == before
    assert not list((stack.cfg.state_dir / "import").glob("*/checkpoints")), "a refused import leaves nothing behind"


def test_import_summary_is_json_for_scripts(stack):
    """Each run leaves each server's summary beside its log (state_dir/import/<chain>/<n>/summary.json)."""
    summaries = [json.loads(p.read_text()) for p in (stack.cfg.state_dir / "import").glob("*/*/summary.json")]
    assert summaries and all({"records", "dead_letters", "already_present", "chain"} <= set(s) for s in summaries)
    assert history.chain_name(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)) == "import-20260102T030405Z"
    assert reader.newest_live_links(stack.cfg.archive_path, [SERVER]) == {}, "imported chains are not the live one"
