"""External event files (`--events`): one JSON object per line (batsim-semantics §8).

`machine_unavailable` / `machine_available` change machines' availability; any other type is an
error unless `--forward-unknown-events`, which forwards it to the scheduler as is. Events are
ordered by (timestamp, type) as Batsim does: available before unavailable before generic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from batsim_py import intervalset
from batsim_py.errors import WorkloadError
from batsim_py.rapidjson_number import rapidjson_double
from batsim_py.text import lone_surrogate

ORDER = {"machine_available": 0, "machine_unavailable": 1, "generic": 2}


@dataclass(frozen=True, slots=True)
class ExternalEvent:
    timestamp: float
    type: str  # "machine_available", "machine_unavailable" or "generic"
    resources: tuple[int, ...] = ()
    description: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class EventList:
    name: str  # "we0", "we1", ...
    path: str
    events: tuple[ExternalEvent, ...]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; use a finite number")


def load_events(path: str, name: str, forward_unknown: bool = False) -> EventList:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise WorkloadError(f"{path}: events file not found (check the --events path)") from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read the events file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise WorkloadError(
            f"{path}: not UTF-8 text at byte {exc.start}; save the events file as UTF-8 JSON lines"
        ) from None
    events = []
    for n, line in enumerate(lines, start=1):
        if not line:
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line, parse_float=rapidjson_double, parse_constant=_refuse_constant)
        except ValueError as exc:
            raise WorkloadError(f"{where}: not a JSON object ({exc})") from None
        except RecursionError:
            raise WorkloadError(f"{where}: not a JSON object (nesting too deep)") from None
        escape = lone_surrogate(line, obj)
        if escape is not None:
            raise WorkloadError(f"{where}: the escape {escape} is half of a UTF-16 surrogate "
                                "pair, not a character; fix or remove it")
        if not isinstance(obj, dict):
            raise WorkloadError(f"{where}: an event must be a JSON object")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise WorkloadError(f"{where}: an event needs a string 'type'")
        ts = obj.get("timestamp")
        if isinstance(ts, bool) or not isinstance(ts, (int, float)):
            raise WorkloadError(f"{where}: an event needs a numeric 'timestamp'")
        if ts < 0:
            raise WorkloadError(f"{where}: the timestamp must be >= 0, got {ts}")
        if ts >= 2**1023:  # beyond a double (JSON integers have no limit)
            raise WorkloadError(f"{where}: the timestamp is too large (use a finite number "
                                "of seconds)")
        if kind in ("machine_available", "machine_unavailable"):
            text = obj.get("resources")
            if not isinstance(text, str):
                raise WorkloadError(
                    f"{where}: a {kind} event needs 'resources', an interval set like \"0-3 7\""
                )
            try:
                ids = intervalset.parse(text)
            except ValueError as exc:
                raise WorkloadError(f"{where}: 'resources' {text!r}: {exc}") from None
            events.append(ExternalEvent(float(ts), kind, ids, obj))
        elif forward_unknown:
            events.append(ExternalEvent(float(ts), "generic", (), obj))
        else:
            raise WorkloadError(
                f"{where}: unknown event type '{kind}' (known: machine_available, "
                "machine_unavailable; use --forward-unknown-events to forward others)"
            )
    events.sort(key=lambda e: (e.timestamp, ORDER[e.type]))
    return EventList(name, path, tuple(events))


