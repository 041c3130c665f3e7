"""The `auditpipe` command: one entry point, its commands in four groups, each registering its own.

- the local stack (auditpipe.cli.stack): setup, up, down, status, init, demo
- queries and evidence (auditpipe.cli.evidence): query, report, alerts, verify, dashboards
- the archive (auditpipe.cli.archive): archive status | compact | prune
- tools (auditpipe.cli.tools): parse, simulate, config check | docs, test, bench
"""

from __future__ import annotations

import argparse
import os
import sys

from auditpipe import paths
from auditpipe.cli import archive, evidence, stack, tools
from auditpipe.cli.application import Application
from auditpipe.errors import UserError

EPILOG = """\
The configuration file is --config FILE, else $AUDITPIPE_CONFIG, else auditpipe.yaml in the
repository (installed from a wheel: ./auditpipe.yaml, else the defaults, with state and tools in
~/.local/share/auditpipe). Every key is documented in docs/configuration.md. `auditpipe COMMAND --help` shows a
command's options and examples.

examples:
  ./auditpipe demo
  ./auditpipe status
  ./auditpipe query failed-logins --from 1h
  ./auditpipe report pci --from 7d
"""


class _Version(argparse.Action):
    """--version: the release and the commit, asked of git only when the option is given."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from auditpipe import version
        print(version.describe())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="auditpipe", description="MySQL-family audit logs -> Kafka -> Flink -> "
                                "MongoDB, as compliance evidence. Runs the local stack on 127.0.0.1.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", help="configuration file (default: $AUDITPIPE_CONFIG or auditpipe.yaml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("--version", action=_Version, help="show the release and the commit of this code, and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for group in (stack, evidence, archive, tools):
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    app = Application(args, parser)
    try:
        return args.func(app)
    except UserError as e:
        print(f"auditpipe: {e}", file=sys.stderr)
        return e.exit_code
    except Exception as e:  # noqa: BLE001 - the one failure every store command shares, said plainly
        if type(e).__name__ != "ServerSelectionTimeoutError":
            raise
        print(f"auditpipe: the store does not answer ({app.config.store_uri_for_display}): start the local stack "
              f"with `{paths.COMMAND} up`, or check store.uri (`{paths.COMMAND} status` shows each part)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("auditpipe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
