"""Argument types and the options several commands share, written once."""

from __future__ import annotations

import argparse


def positive(text: str) -> float:
    """argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def at_least_one(text: str) -> int:
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


TIMES = "15m, 2h, 7d before now, or an ISO-8601 time (UTC)"


def add_time_range(p: argparse.ArgumentParser, what: str, default_from: str, default_to: str) -> None:
    """--from/--to (--since/--until as other names): the same two options on every command that takes a period."""
    p.add_argument("--from", "--since", dest="since", metavar="TIME",
                   help=f"start of {what}: {TIMES} (default: {default_from})")
    p.add_argument("--to", "--until", dest="until", metavar="TIME", help=f"end of {what}, same forms (default: {default_to})")


def add_servers(p: argparse.ArgumentParser, what: str = "records") -> None:
    """--server, repeatable, on every command that can be narrowed to servers."""
    p.add_argument("--server", action="append", dest="servers", metavar="SERVER",
                   help=f"only this server's {what} (repeat for several; default: every server)")


def example(*lines: str) -> str:
    """A subcommand's help epilog: examples of it."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


class HelpFormatter(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal, examples kept line by line."""

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def command(sub, name: str, help: str | None, description: str, examples: tuple[str, ...],
            func) -> argparse.ArgumentParser:
    """A subcommand with its description and examples; ``help`` None keeps it out of the command list."""
    kwargs = {"help": help} if help is not None else {}
    p = sub.add_parser(name, description=description, epilog=example(*examples), formatter_class=HelpFormatter,
                       **kwargs)
    p.set_defaults(func=func)
    return p


def documented(sub, doc: str | None, examples: tuple[str, ...], func) -> argparse.ArgumentParser:
    """A subcommand whose module docstring is its help, written once: "`auditpipe NAME`: HELP." on the first
    line, the description in the paragraphs after it."""
    if not doc:
        raise RuntimeError("a command's help is its module docstring, which `python -OO` leaves out: run without -OO")
    first, _, description = doc.strip().partition("\n\n")
    head, _, help = first.partition(": ")
    name = head.strip("`").removeprefix("auditpipe ")
    return command(sub, name, help.removesuffix("."), description, examples, func)
