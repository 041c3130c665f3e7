"""Each release's archive, read and verified by this code: the Parquet files a release's job wrote of a
fixed input (pipelines/flink-job/src/test/resources/release-state/<version>/archive, made by that
release's ReleaseStateITCase.writeThisReleasesState, docs/releasing.md) hold each record once, and
every server's chain in them verifies with this verify; the aggregation the saved queries run reads
their columns."""

from __future__ import annotations

import pytest

from auditpipe import paths
from auditpipe.archive import mongo_sql, reader
from auditpipe.evidence import chain

RELEASES = paths.PIPELINES / "flink-job" / "src" / "test" / "resources" / "release-state"
ARCHIVES = sorted(d / "archive" for d in RELEASES.iterdir() if (d / "archive").is_dir())
# ReleaseInput: 600 lines a server; db-01's first 20 lines sent again in place of 20 others
EVENTS = {"db-01": 580, "db-02": 600}


def test_there_is_a_release_archive():
    assert ARCHIVES, f"no release's archive under {RELEASES}"


@pytest.mark.parametrize("root", ARCHIVES, ids=lambda p: p.parent.name)
def test_each_releases_archive_holds_each_record_once_and_its_chains_verify(root):
    assert reader.servers(root) == sorted(EVENTS)
    for server, events in EVENTS.items():
        rows = reader.chain_rows(root, server)
        assert len(rows) == events and len({r["_id"] for r in rows}) == events, server
        heads = {h["seq"]: h["digest"] for h in reader.chain_heads(root, server)}
        report = chain.verify_links(server, rows, heads)
        assert report.findings == [], report.findings
        assert (report.first_seq, report.last_seq, report.links) == (1, events, events), report


@pytest.mark.parametrize("root", ARCHIVES, ids=lambda p: p.parent.name)
def test_each_releases_archive_answers_an_aggregation_by_its_columns(root):
    sql, params = mongo_sql.to_sql(
        [{"$match": {"event_name": "Connect"}},
         {"$group": {"_id": {"server": "$server", "outcome": "$auth_outcome"}, "n": {"$sum": 1}}}],
        reader.parquet_source(reader.files_for(root)))
    rows = reader.connect().execute(sql, params).fetchall()
    assert len(rows) == 4 and sum(r[-1] for r in rows) == 58 + 60, rows  # a login in ten lines, some failed
