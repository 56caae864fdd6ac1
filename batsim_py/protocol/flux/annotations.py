"""RFC 27's annotation dictionary update rules, as flux-core's job manager applies them.

RFC 27: for each key of an update, both values objects -> apply recursively; a new JSON null
deletes the key; otherwise the value is set. flux-core (`jpath_update` then
`jpath_clear_null`, src/common/libutil/jpath.c) makes that precise: an object update merges
into the old value (an old non-object becomes an object first), then every null and every
object left empty is removed from the whole dictionary. Annotations are volatile until the
alloc SUCCESS and dropped when the allocation fails (the job manager's business).
"""

from __future__ import annotations

import copy
from typing import Any


def merge(current: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Apply `update` to `current` in place and return it."""
    _update(current, update)
    _clear_null(current)
    return current


def _update(orig: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict):
            if not isinstance(orig.get(key), dict):
                orig[key] = {}
            _update(orig[key], value)
        else:
            orig[key] = copy.deepcopy(value)


def _clear_null(obj: dict[str, Any]) -> None:
    for key in list(obj):
        value = obj[key]
        if isinstance(value, dict):
            _clear_null(value)
            if not value:
                del obj[key]
        elif value is None:
            del obj[key]
