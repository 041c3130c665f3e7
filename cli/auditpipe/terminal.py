"""Text from audit data on a terminal: what a database user wrote (statements, names, ids) reaches the
table and line output of `query`, `alerts`, `verify` and `import`, and a control character in it
would be obeyed by the terminal (an escape sequence can move the cursor, rewrite lines already
printed, retitle the window). ``shown`` writes each control character as an escape instead."""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the bidirectional-text controls (which reorder what is shown around them)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def shown(text: object) -> str:
    """``text`` as a string with every control character written as \\xNN (\\uNNNN above 0xff)."""
    s = text if isinstance(text, str) else str(text)
    return _CONTROLS.sub(_escape, s)
