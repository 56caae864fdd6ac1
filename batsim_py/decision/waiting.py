"""What batsim-py says while it waits for an external scheduler, and when.

Why: Batsim (and the `batsim` command, which imitates it) waits for its scheduler forever, to
connect and to answer. A silent infinite wait cannot be told from a hang, so while waiting
batsim-py says, on stderr, what it waits for, where (the endpoint or socket path) and how the
wait is bounded (or how to bound it: batsim-py's own flag): a first notice soon (1 s for a
connection, 10 s for a reply, or after `every()` seconds if that is shorter), then again every
`every()` seconds (60 by default; `BATSIM_PY_WAIT_NOTICE_EVERY` changes it, e.g. for tests,
which then need not wait 10 s for the first notice). A bounded wait speaks at INFO
(shown by default, hidden by -q); an unbounded one at WARNING.
"""

from __future__ import annotations

import logging
import math
import os

log = logging.getLogger("batsim_py.waiting")

EVERY = 60.0
"""Seconds between notices after the first."""


def every() -> float:
    text = os.environ.get("BATSIM_PY_WAIT_NOTICE_EVERY")
    try:
        value = float(text) if text else EVERY
    except ValueError:
        return EVERY
    return value if value > 0 and math.isfinite(value) else EVERY


def bound(timeout: float, flag: str) -> str:
    """How the wait ends: `giving up after 30 s (--scheduler-connect-timeout)`, or, with no
    limit, how to set one."""
    if math.isinf(timeout):
        return f"waiting forever, as Batsim does (bound the wait with {flag} SECONDS)"
    return f"giving up after {timeout:g} s ({flag})"


class Notices:
    """The notices of one wait that began at `start` (time.monotonic()): the first `first`
    seconds in (or `every()` seconds, if shorter), then every `every()` seconds."""

    def __init__(self, start: float, first: float, timeout: float) -> None:
        self.start = start
        self.every = every()
        self.next = start + min(first, self.every)
        self.level = logging.WARNING if math.isinf(timeout) else logging.INFO

    def due(self, now: float) -> bool:
        """Whether a notice is due at `now` (then the next one is scheduled)."""
        if now < self.next:
            return False
        self.next = now + self.every
        return True

    def say(self, now: float, text: str) -> None:
        """One notice: `text` and how long we have waited."""
        log.log(self.level, "%s; %s so far", text, _elapsed(now - self.start))


def _elapsed(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
