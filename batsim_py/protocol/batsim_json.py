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
    _write(value, parts.append, 0)
    return "".join(parts)


def as_parsed(value: Any) -> Any:
    """What `json.loads(dumps(value))` returns, without the text: floats rounded as `%.6f`
    then read back (`round(x, 6)` is that value, see `wire.wire_time`), sequences as lists,
    keys as strings. In-process pybatsim gets its messages this way. Very deep values and
    non-finite floats take the text route, so the result is the wire's in every case."""
    try:
        return _parsed(value, 0)
    except _TextRoute:
        import json

        return json.loads(dumps(value))


class _TextRoute(Exception):
    """A value `_parsed` leaves to the real writer and reader."""


def _parsed(value: Any, depth: int) -> Any:
    cls = type(value)
    if cls is str or cls is int or value is None or cls is bool:
        return value
    if cls is float:
        if value - value != 0.0:  # nan or inf
            raise _TextRoute
        return round(value, 6)
    if depth > _DEEP:
        raise _TextRoute
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            t = type(item)  # leaves inline: most values of a message are strings and ints
            out[key if type(key) is str else str(key)] = (
                item if t is str or t is int else _parsed(item, depth + 1))
        return out
    if isinstance(value, str | int | float):  # subclasses (enums...): as `_write` writes them
        raise _TextRoute
    if isinstance(value, Sequence):
        return [_parsed(v, depth + 1) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} as Batsim JSON")


_DEEP = 100  # nesting level from which the writer switches to its explicit stack


def _write(value: Any, out: Any, depth: int) -> None:
    """Recursive (the fast path); below `_DEEP` levels it hands over to `_write_deep`."""
    if depth > _DEEP:
        _write_deep(value, out)
    # bool before int: bool is an int subclass in Python.
    elif value is True:
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
            _write(item, out, depth + 1)
        out("}")
    elif isinstance(value, Sequence):
        out("[")
        for i, item in enumerate(value):
            if i:
                out(",")
            _write(item, out, depth + 1)
        out("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as Batsim JSON")


class _Token(str):
    """Literal text already in JSON form (punctuation, keys), told apart from string values."""


_OPEN_OBJ, _CLOSE_OBJ, _OPEN_ARR, _CLOSE_ARR, _COMMA = (
    _Token("{"), _Token("}"), _Token("["), _Token("]"), _Token(","))


def _write_deep(value: Any, out: Any) -> None:
    """Write `value` with an explicit stack, not by recursion: a job's progress tree nests as
    deep as its composed profiles, thousands of levels."""
    stack: list[Any] = [value]
    pop, push = stack.pop, stack.append
    while stack:
        value = pop()
        if type(value) is _Token:
            out(value)
        elif isinstance(value, str) or not isinstance(value, (Mapping, Sequence)):
            _write(value, out, 0)  # a scalar (or a type JSON lacks): the recursive path's rules
        elif isinstance(value, Mapping):
            push(_CLOSE_OBJ)
            items = list(value.items())
            for i in range(len(items) - 1, -1, -1):
                key, item = items[i]
                push(item)
                push(_Token(("," if i else "") + string(str(key)) + ":"))
            out("{")
        else:
            push(_CLOSE_ARR)
            for i in range(len(value) - 1, -1, -1):
                push(value[i])
                if i:
                    push(_COMMA)
            out("[")
