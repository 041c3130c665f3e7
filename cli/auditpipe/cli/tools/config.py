"""`auditpipe config`: check the configuration file, or print its reference."""

from __future__ import annotations

from auditpipe import config, paths
from auditpipe.cli.application import Application
from auditpipe.cli.arguments import command


def cmd_config_check(app: Application) -> int:
    app.out(f"{app.config.file}: valid")
    return 0


def cmd_config_docs(app: Application) -> int:
    from auditpipe.cli import reference

    text = config.docs_markdown()
    if app.args.write:
        paths.require_checkout("config docs --write")
        (paths.REPO / "docs" / "configuration.md").write_text(text)
        (paths.REPO / "docs" / "cli.md").write_text(reference.markdown(app.parser))
    else:
        print(text, end="")
    return 0


def register(sub) -> None:
    p = sub.add_parser("config", help="check the configuration file, or print its reference",
                       description="The configuration file (schemas/config.schema.json, docs/configuration.md).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    command(actions, "check", "validate the configuration file; errors name the bad key",
            "Validates the file against schemas/config.schema.json and what the schema cannot say (ports, "
            "sources, time zones, Kafka security); every error names the bad key.",
            ("./auditpipe config check", "./auditpipe --config /etc/auditpipe.yaml config check"), cmd_config_check)
    s = command(actions, "docs", "print docs/configuration.md as generated from the schema",
                "Prints docs/configuration.md as generated from schemas/config.schema.json; --write writes it, "
                "and docs/cli.md, every command's --help.",
                ("./auditpipe config docs --write",), cmd_config_docs)
    s.add_argument("--write", action="store_true", help="write docs/configuration.md and docs/cli.md")
