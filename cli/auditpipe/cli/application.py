"""The application object every command gets: the configuration (loaded once, when first asked
for) and the output (results on stdout; progress and notes on stderr, silenced by --quiet)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from auditpipe import config, progress
from auditpipe.config import Config


class Application:
    def __init__(self, args: argparse.Namespace, parser: argparse.ArgumentParser | None = None):
        self.args = args
        self.parser = parser  # the whole command line's, for what describes every command (docs/cli.md)
        self._config: Config | None = None
        progress.QUIET = bool(getattr(args, "quiet", False))

    @property
    def config(self) -> Config:
        """The configuration: --config FILE, else $AUDITPIPE_CONFIG, else auditpipe.yaml of the repository."""
        if self._config is None:
            self._config = config.load(self.args.config)
            self._config.make_state_dir()
        return self._config

    def out(self, text: str = "") -> None:
        """A result line, on stdout."""
        print(text)

    def info(self, text: str) -> None:
        """Progress or a note, on stderr (not with --quiet)."""
        progress.info(text)

    def until_stopped(self, doing: str, work: Callable[[], object]) -> int:
        """Says what a command that runs until stopped does, then does it; Ctrl-C is the way to stop it, so
        it ends the command with status 0."""
        self.out(f"{doing} Stop with Ctrl-C.")
        try:
            work()
        except KeyboardInterrupt:
            pass
        return 0
