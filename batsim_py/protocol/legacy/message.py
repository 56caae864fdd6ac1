"""Messages of the legacy protocol: `VERSION:TIME_MSG|DATE:STAMP[:CONTENT]|...`.

Writing: every time is C's `%f` (6 decimals), events keep the order they were recorded in.
Reading follows Batsim's reader (`src/network.cpp`, 2016) to the letter, except that every
abort becomes a `ProtocolError` naming the event:
- the message is split on `|` and each event on `:`, runs of separators counting as one
  (boost's `token_compress_on`: `10::N` is `10:N`, but a trailing `|` leaves an empty event);
- part 0 (the version digit and `TIME_MSG`) is ignored: clients sent `0:` or `1:` anyway;
- each event needs a date and a one-character stamp; dates never decrease, starting from the
  request's own `%f` time (a decision dated before the request is refused).
Dates are read strictly as decimal numbers (C's `stod` took a prefix: `15abc` was 15).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from batsim_py.errors import ProtocolError
from batsim_py.text import printable

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_BARS = re.compile(r"\|+")
_COLONS = re.compile(r":+")


@dataclass(frozen=True, slots=True)
class LegacyEvent:
    """One event of a message: its date, stamp, content (None when absent) and its text."""

    date: float
    stamp: str
    content: str | None
    text: str


def format_time(t: float) -> str:
    """C's `%f`, as Batsim printed every time."""
    return "%f" % t


def format_message(version: int, now: float, events: Sequence[tuple[float, str, str | None]]
                   ) -> str:
    """`VERSION:NOW|DATE:STAMP[:CONTENT]|...` (events: (date, stamp, content or None))."""
    parts = [f"{version}:{format_time(now)}"]
    for date, stamp, content in events:
        parts.append(f"{format_time(date)}:{stamp}" if content is None
                     else f"{format_time(date)}:{stamp}:{content}")
    return "|".join(parts)


def parse_number(text: str, what: str) -> float:
    """A decimal number (a date, a `n` time); a ProtocolError naming `what` otherwise."""
    if not _NUMBER.match(text):
        raise ProtocolError(f"{what}: '{printable(text)}' is not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(f"{what}: '{printable(text)}' is too large")
    return value


def parse_message(text: str, request_time: float) -> list[LegacyEvent]:
    """The events of a scheduler's reply, checked as Batsim checked them.

    `request_time`: the time of the message this replies to, as the scheduler read it (its
    `%f` value): no event may be dated before it.
    """
    parts = _BARS.split(text)
    if len(parts) < 2:
        raise ProtocolError(
            f"invalid message '{_short(text)}': it needs a header and at least one event "
            "separated by '|' (e.g. '0:10.000000|10.000000:N')")
    previous = request_time
    events = []
    for part in parts[1:]:
        fields = _COLONS.split(part)
        where = f"event '{_short(part)}' of message '{_short(text)}'"
        if len(fields) < 2:
            raise ProtocolError(f"invalid {where}: it needs DATE:STAMP[:CONTENT]")
        if len(fields) > 3:
            raise ProtocolError(f"invalid {where}: too many ':' (DATE:STAMP[:CONTENT], and a "
                                "content never holds ':')")
        if len(fields[1]) != 1:
            raise ProtocolError(f"invalid {where}: the stamp '{printable(fields[1])}' must be "
                                "one character")
        date = parse_number(fields[0], f"invalid {where}: its date")
        if date < previous:
            before = ("the request's time" if not events else "the previous event's date")
            raise ProtocolError(
                f"invalid {where}: it is dated {date:f}, before {before} ({previous:f}); "
                "events are applied in order at their dates, which cannot be in the past")
        previous = date
        events.append(LegacyEvent(date, fields[1], fields[2] if len(fields) == 3 else None,
                                  part))
    return events


def _short(text: str, limit: int = 120) -> str:
    text = printable(text)
    return text if len(text) <= limit else text[:limit] + "..."
