"""A CEF reader written from CEF's rules, independently of stack/alerts/cef.py: the header's seven fields end at
unescaped pipes (escapes there: backslash and pipe), the extension's keys are the words before unescaped
equals signs (escapes: backslash, equals sign, \\n, \\r). A value that adds a key, a bad escape or a key
given twice fails the read."""

from __future__ import annotations

import re


def parse(message: str) -> tuple[list[str], dict[str, str]]:
    """The 7 header fields after CEF:0 and the extension, unescaped."""
    assert message.startswith("CEF:0|")
    fields, cur, i = [], "", len("CEF:")
    while len(fields) < 7:
        c = message[i]
        if c == "\\":
            assert message[i + 1] in "\\|", f"bad header escape at {i}"
            cur += message[i + 1]
            i += 2
        elif c == "|":
            fields.append(cur)
            cur, i = "", i + 1
        else:
            cur += c
            i += 1
    ext = message[i:]
    # a key is a word before an unescaped '=' (one after an even number of backslashes), after a space or at the start
    keys = [m for m in re.finditer(r"(?:^| )([A-Za-z0-9]+)=", ext) if _unescaped(ext, m.end() - 1)]
    out = {}
    for n, m in enumerate(keys):
        end = keys[n + 1].start() if n + 1 < len(keys) else len(ext)
        assert m.group(1) not in out, f"key {m.group(1)} twice"
        out[m.group(1)] = _unescape(ext[m.end():end])
    return fields[1:], out


def _unescaped(text: str, at: int) -> bool:
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 0


def _unescape(value: str) -> str:
    out, i = "", 0
    while i < len(value):
        if value[i] == "\\":
            nxt = value[i + 1]
            assert nxt in "\\=nr", f"bad extension escape \\{nxt}"
            out += {"n": "\n", "r": "\r"}.get(nxt, nxt)
            i += 2
        else:
            assert value[i] != "=", "an unescaped = inside a value"
            out += value[i]
            i += 1
    return out
