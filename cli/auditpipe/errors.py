"""Errors a user can act on. The CLI prints their message (no traceback) and exits non-zero."""


class UserError(Exception):
    """Bad input or configuration, or a missing prerequisite; the message says what to do."""

    exit_code = 2


class ComponentError(UserError):
    """A component failed to install, start or answer; the message names it and its log."""

    exit_code = 1
