"""`auditpipe test`: install what is needed, then run the JVM and Python test suites.

mvn test (parser and job unit tests), then pytest tests/ (unit tests and end-to-end tests on a real
local stack of their own ports and state).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from auditpipe import paths, prereqs
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import documented


def run(app: Application) -> int:
    """Installs what the tests need, then runs the JVM unit tests and the pytest suite."""
    from auditpipe.stack import lifecycle

    paths.require_checkout("test")
    a = app.args
    if not a.no_setup:
        cfg = app.config
        lifecycle.setup(cfg)
        # a real database server for the formats' end-to-end test (it skips, saying why, without them)
        missing = prereqs.install_debian_packages({"mariadbd": "mariadb-server", "mariadb": "mariadb-client",
                                                   "sysbench": "sysbench"}, "for the MariaDB end-to-end test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            app.info(f"  ! not installed: {', '.join(missing)}; the MariaDB end-to-end test will skip")
        # a real browser for the evidence report's test (it skips, saying why, without it)
        missing = prereqs.install_debian_packages({"chromium": "chromium"}, "for the evidence report's browser test",
                                                  cfg.tools_dir / "install.log")
        if missing:
            app.info("  ! not installed: chromium; the evidence report's browser test will skip")
    app.info("test: JVM unit tests (mvn test)")
    mvn = subprocess.run(["mvn", "-q", "-B", "-f", str(paths.PIPELINES / "pom.xml"), "test"])
    if mvn.returncode != 0:
        app.info("test: JVM unit tests failed")
        return mvn.returncode
    app.info("test: pytest (tests/: end to end and fault tests on real stacks, then unit tests)")
    return subprocess.run([sys.executable, "-m", "pytest", "-ra", "--durations=25", *pytest_arguments(a.pytest_args)],
                          cwd=paths.REPO).returncode


def pytest_arguments(given: list[str]) -> list[str]:
    """What `test` passes to pytest: ``given`` without a leading ``--`` (argparse keeps it), and the
    whole suite (tests/) unless ``given`` names a test path (a file, folder or node id under the repository)."""
    args = given[1:] if given[:1] == ["--"] else list(given)
    names_a_path = any(not x.startswith("-") and (paths.REPO / x.split("::")[0]).exists() for x in args)
    return args if names_a_path else [str(paths.REPO / "tests"), *args]


def register(sub) -> None:
    s = documented(sub, __doc__,
                   ("./auditpipe test", "./auditpipe test --no-setup tests/unit -k chain",
                   "./auditpipe test --no-setup -- --durations=0 -x"), run)
    s.add_argument("--no-setup", action="store_true", help="skip the install step")
    s.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed to pytest")
