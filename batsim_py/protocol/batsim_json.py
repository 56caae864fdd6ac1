"""Batsim's own JSON text form, so that schedulers see byte-for-byte what real Batsim sends.

Batsim 4 writes messages with RapidJSON plus a custom number writer: compact (no spaces), every
floating-point number as C `"%.6f"` (so `1e9` becomes `1000000000.000000`, `0.5` `0.500000`),
integers as integers, strings escaped the RapidJSON way (only `"`, `\\` and control characters;
non-ASCII characters are written as raw UTF-8; control characters without a short form are
`\\u00XX` with upper-case hex). Python's `json.dumps` differs on all three points, hence
this writer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_ESCAPES = {chr(i): f"\\u{i:04X}" for i in range(0x20)}
_ESCAPES.update(_SHORT_ESCAPES)
_TABLE = str.maketrans(_ESCAPES)


def string(text: str) -> str:
    """A JSON string literal escaped as RapidJSON's Writer does."""
    return '"' + text.translate(_TABLE) + '"'


def number(value: float) -> str:
    """Batsim's float form: always six decimals, whatever the magnitude."""
    if math.isnan(value) or math.isinf(value):
        # RapidJSON would refuse; "%f" gives nan/inf, which is what Batsim's writer would print.
        return f"{value:f}"
    return f"{value:.6f}"


def dumps(value: Any) -> str:
    """Serialise a JSON-like value (dicts keep their order) in Batsim's format."""
    parts: list[str] = []
    _write(value, parts.append)
    return "".join(parts)


def _write(value: Any, out: Any) -> None:
    # bool before int: bool is an int subclass in Python.
    if value is True:
        out("true")
    elif value is False:
        out("false")
    elif value is None:
        out("null")
    elif isinstance(value, str):
        out(string(value))
    elif isinstance(value, int):
        out(str(value))
    elif isinstance(value, float):
        out(number(value))
    elif isinstance(value, Mapping):
        out("{")
        first = True
        for key, item in value.items():
            if not first:
                out(",")
            first = False
            out(string(str(key)))
            out(":")
            _write(item, out)
        out("}")
    elif isinstance(value, Sequence):
        out("[")
        for i, item in enumerate(value):
            if i:
                out(",")
            _write(item, out)
        out("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as Batsim JSON")
