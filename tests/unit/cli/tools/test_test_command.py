"""`auditpipe test`: what it passes to pytest."""

from auditpipe import paths


def test_the_test_command_passes_pytest_its_options_and_the_whole_suite_unless_a_path_is_named():
    from auditpipe.cli.tools.test import pytest_arguments

    suite = str(paths.REPO / "tests")
    assert pytest_arguments([]) == [suite]
    assert pytest_arguments(["--", "--durations=0", "-x"]) == [suite, "--durations=0", "-x"]
    assert pytest_arguments(["tests/unit", "-k", "chain"]) == ["tests/unit", "-k", "chain"]
    assert pytest_arguments(["--", "tests/unit/test_config.py::test_x"]) == ["tests/unit/test_config.py::test_x"]
