"""Where things are: in the repository checkout this code sits in, or, for an installed wheel, in
the package's bundle (cli/auditpipe/bundle.py says what it carries)."""

import os
from pathlib import Path

from auditpipe import bundle
from auditpipe.errors import UserError

PACKAGE = Path(__file__).resolve().parent
BUNDLE = PACKAGE / "_bundle"
#: True when this code runs from a checkout (./auditpipe, an editable install); False for an
#: installed wheel, the only place a bundle is written (setup.py)
IN_CHECKOUT = not BUNDLE.is_dir()
#: the checkout; for an installed wheel, its bundle (which holds the same folders)
REPO = PACKAGE.parents[1] if IN_CHECKOUT else BUNDLE
SCHEMAS = REPO / "schemas"
COLLECTORS = REPO / "collectors"
DEPLOY_LOCAL = REPO / "deploy" / "local"
PIPELINES = REPO / "pipelines"
JOB_JAR = REPO / bundle.JOB_JAR if IN_CHECKOUT else BUNDLE / Path(bundle.JOB_JAR).name
# the job's benchmarks (pipelines/job-bench), run with the job's jar and the Flink runtime
BENCH_JAR = PIPELINES / "job-bench" / "target" / "auditpipe-job-bench.jar"
#: the configuration without --config or $AUDITPIPE_CONFIG: the checkout's auditpipe.yaml; for an
#: installed wheel, ./auditpipe.yaml where there is one, else the bundled defaults (default_home)
DEFAULT_CONFIG = REPO / "auditpipe.yaml"
#: how the user runs auditpipe, as messages tell them to: the checkout's launcher or the installed command
COMMAND = "./auditpipe" if IN_CHECKOUT else "auditpipe"


def default_home() -> Path:
    """Where an installed wheel's default configuration keeps its state and tools (its relative paths
    are read from here): $XDG_DATA_HOME/auditpipe, else ~/.local/share/auditpipe."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "auditpipe"


def cli_pythonpath() -> str:
    """PYTHONPATH for an `auditpipe` child process (`python -m auditpipe`): this checkout's code first,
    as the ./auditpipe launcher sets it; an installed wheel's environment as it is."""
    inherited = os.environ.get("PYTHONPATH", "")
    if not IN_CHECKOUT:
        return inherited
    return str(REPO / "cli") + (os.pathsep + inherited if inherited else "")


def require_checkout(what: str) -> None:
    """Refuses work that reads or writes the repository's own files (tests, bench, generated docs)."""
    if not IN_CHECKOUT:
        raise UserError(f"{what} works in a checkout of the auditpipe repository (git clone; ./auditpipe), "
                        "not from an installed wheel")
