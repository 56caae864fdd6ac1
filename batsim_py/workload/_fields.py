"""Typed accessors for fields of workload JSON objects.

Batsim distinguishes JSON integers from floating numbers (`res`, `ret` and `repeat` must be
integers) and every violation must become a one-line `WorkloadError` naming the file, the
object and the fix, so the checks live here once instead of being repeated per profile type.
`where` is the message prefix, e.g. "workload.json: profile 'p1'".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from batsim_py.errors import WorkloadError

_MISSING = object()


def type_name(value: Any) -> str:
    """JSON vocabulary, because users wrote JSON, not Python."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def show(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_number(value: Any) -> bool:
    # bool is an int subclass in Python but not a JSON number.
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite(value: int | float) -> bool:
    """math.isfinite, also for integers too large for a double (10**400 is not finite)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def require_object(where: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WorkloadError(f"{where}: must be a JSON object, got {type_name(value)}")
    return value


def number(
    where: str,
    obj: Mapping[str, Any],
    key: str,
    *,
    default: Any = _MISSING,
    minimum: float | None = None,
    strict: bool = False,
) -> float:
    """A finite JSON number, optionally bounded below (strictly when `strict`)."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise WorkloadError(f"{where}: missing mandatory field '{key}' (a number)")
        return default
    if not is_number(value):
        raise WorkloadError(
            f"{where}: field '{key}' must be a number, got {type_name(value)} {show(value)}"
        )
    if not is_finite(value):
        raise WorkloadError(f"{where}: field '{key}' must be finite, got {show(value)}")
    if minimum is not None:
        if strict and not value > minimum:
            raise WorkloadError(f"{where}: field '{key}' must be > {minimum:g}, got {value}")
        if not strict and not value >= minimum:
            raise WorkloadError(f"{where}: field '{key}' must be >= {minimum:g}, got {value}")
    return float(value)


def integer(
    where: str,
    obj: Mapping[str, Any],
    key: str,
    *,
    default: Any = _MISSING,
    minimum: int | None = None,
) -> int:
    """A JSON integer: 2.0 is refused, as Batsim refuses it."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise WorkloadError(f"{where}: missing mandatory field '{key}' (an integer)")
        return default
    if not is_integer(value):
        raise WorkloadError(
            f"{where}: field '{key}' must be a JSON integer (no decimal point), "
            f"got {type_name(value)} {show(value)}"
        )
    if minimum is not None and value < minimum:
        raise WorkloadError(f"{where}: field '{key}' must be >= {minimum}, got {value}")
    return value


def string(
    where: str,
    obj: Mapping[str, Any],
    key: str,
    *,
    default: Any = _MISSING,
    nonempty: bool = False,
) -> str:
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise WorkloadError(f"{where}: missing mandatory field '{key}' (a string)")
        return default
    if not isinstance(value, str):
        raise WorkloadError(
            f"{where}: field '{key}' must be a string, got {type_name(value)} {show(value)}"
        )
    if nonempty and not value:
        raise WorkloadError(f"{where}: field '{key}' must not be empty")
    return value


def number_array(
    where: str, obj: Mapping[str, Any], key: str, *, minimum: float = 0.0
) -> tuple[float, ...]:
    """A mandatory array of finite numbers >= minimum."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise WorkloadError(f"{where}: missing mandatory field '{key}' (an array of numbers)")
    if not isinstance(value, list | tuple):
        raise WorkloadError(
            f"{where}: field '{key}' must be an array of numbers, got {type_name(value)}"
        )
    out = []
    for i, item in enumerate(value):
        if not is_number(item) or not is_finite(item):
            raise WorkloadError(
                f"{where}: field '{key}'[{i}] must be a finite number, "
                f"got {type_name(item)} {show(item)}"
            )
        if item < minimum:
            raise WorkloadError(f"{where}: field '{key}'[{i}] must be >= {minimum:g}, got {item}")
        out.append(float(item))
    return tuple(out)
