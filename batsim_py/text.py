"""User text (ids, names, file contents) made safe for the places it ends up in.

Job ids, profile and host names come from the user's files and the scheduler's replies, so they
may hold anything JSON or XML can carry: a newline would split a one-line error in two, an escape
sequence would drive the user's terminal, and a lone UTF-16 surrogate (`"\\ud800"` in JSON) is
not a character at all and cannot be written to any UTF-8 file. This module says what is
unprintable and how it is shown; the readers refuse lone surrogates with `lone_surrogate`.
"""

from __future__ import annotations

import logging
import re

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, and lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character escaped (`\\n`, `\\x1b`, `\\u2028`...): what reaches
    the terminal stays on one line and cannot drive it. Idempotent (backslashes are kept)."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_escape, text)


# A JSON escape of a high surrogate not followed by a low one, or of a low one alone.
_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_CANDIDATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str, decoded: object) -> str | None:
    """The first `\\uD8xx`-like escape of JSON `text` that decoded into a lone surrogate in
    `decoded` (the parsed value), or None. The text is searched first (fast, no false
    negative); the decoded value is then checked, so an escaped backslash before `u` is no
    false positive."""
    if "\\u" not in text or _CANDIDATE.search(text) is None:  # fast scans of big files
        return None
    if not _holds_surrogate(decoded):
        return None
    match = _LONE_ESCAPE.search(text) or _CANDIDATE.search(text)
    assert match is not None
    return match.group()


def _holds_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def line_of(text: str, escape: str) -> int:
    """1-based line of the first occurrence of `escape` in `text`."""
    return text.count("\n", 0, max(0, text.find(escape))) + 1


class OneLineFormatter(logging.Formatter):
    """Log records with their user text escaped like error messages (one line each)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return printable(super().formatMessage(record))  # a traceback keeps its lines
