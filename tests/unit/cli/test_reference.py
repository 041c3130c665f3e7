"""docs/cli.md is every command's --help as the commands print it now (auditpipe.cli.reference)."""

from __future__ import annotations

import re

import pytest

from auditpipe import paths
from auditpipe.cli import build_parser, reference


def test_the_committed_command_reference_is_current():
    committed = (paths.REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    made_with = re.search(r"\((Python \d+\.\d+)'s argparse\)", committed)
    if made_with and made_with.group(1) != reference.python():
        pytest.skip(f"docs/cli.md was generated with {made_with.group(1)}'s argparse, this is {reference.python()}")
    assert committed == reference.markdown(build_parser()), "write it anew: ./auditpipe config docs --write"


def test_the_reference_holds_every_command():
    text = reference.markdown(build_parser())
    for name in ("setup", "demo", "query", "report", "review decide", "archive prune", "config docs", "bench"):
        assert f"\n## auditpipe {name}\n" in text, name
    assert "examples:" in text
