"""What the Fluentd tests take from Fluentd's log as a problem (tests/helpers/fluentd.py ``Fluentd.problems``):
every error but the three that lose nothing."""

from __future__ import annotations

from helpers.fluentd import Fluentd

RESUMED = ('2026-12-04 17:57:04 +0000 [error]: #0 [kafka_audit_raw] found broken chunk file during resume. '
           'path="/s/buffer/buffer.b661.log" mode=:staged err_msg="{}"')


def problems(tmp_path, *lines: str) -> list[str]:
    f = Fluentd.__new__(Fluentd)  # only its log is read
    f.output = tmp_path / "fluentd.out"
    f.output.write_text("\n".join(lines) + "\n")
    return f.problems()


def test_an_empty_chunk_found_on_resume_is_no_problem_and_any_other_broken_one_is(tmp_path):
    assert problems(tmp_path, RESUMED.format("staged file chunk is empty")) == []
    assert problems(tmp_path, RESUMED.format("enqueued file chunk is empty")) == []
    broken = RESUMED.format("staged meta file is broken. unexpected end of file")
    assert problems(tmp_path, broken) == [broken]
    other = "2026-12-04 17:57:05 +0000 [error]: #0 [kafka_audit_raw] unexpected error while writing"
    assert problems(tmp_path, RESUMED.format("staged file chunk is empty"), other) == [other]


PURGE = ('2026-12-04 19:35:45 +0000 [error]: #0 [kafka_audit_raw] failed to purge buffer chunk chunk_id="661d" '
         'error_class=Errno::ENOENT error=#<Errno::ENOENT: No such file or directory @ apply2files - '
         '/s/buffer/buffer.b661d.log{}>')
BACKTRACE = ("  2026-12-04 19:35:45 +0000 [error]: #0 /f/lib/fluent/plugin/buffer/file_chunk.rb:161:in `purge'",
             "  2026-12-04 19:35:45 +0000 [error]: #0 /f/lib/fluent/plugin/buffer.rb:601:in `block in purge_chunk'")


def test_a_delivered_chunk_whose_missing_meta_file_cannot_be_removed_is_no_problem(tmp_path):
    assert problems(tmp_path, PURGE.format(".meta"), *BACKTRACE) == []
    # the chunk file itself missing, or another error after the backtrace, is
    chunk = PURGE.format("")
    assert problems(tmp_path, chunk) == [chunk]
    other = "2026-12-04 19:35:46 +0000 [error]: #0 [kafka_audit_raw] unexpected error while writing"
    assert problems(tmp_path, PURGE.format(".meta"), *BACKTRACE, other) == [other]
