"""SimGrid profiles (`<trace>`, `<trace_connect>`, `speed_file`, `bandwidth_file`,
`latency_file`): values that change a resource over time.

A profile is SimGrid 3.32's legacy text format (src/kernel/resource/profile/ProfileBuilder.cpp):
one `DATE VALUE` per line, dates absolute and non-decreasing; blank lines and lines starting
with `#` or `%` are skipped; `LOOPAFTER D` makes the pattern start over D seconds after its last
event, `PERIODICITY P` (or a `<trace periodicity="P">` > 0 on inline text) every P seconds. The
events are dated the way SimGrid dates them: each one at the previous event's date plus the
difference of the two dates as written (a float sum), a loop's first event at the last one's
date plus its own date plus the loop delay.

What a value means depends on where the profile is attached: a host's speed profile gives the
fraction of its speed available (SimGrid's `scale`), a link's bandwidth or latency profile the
absolute value. `batsim_py.sim.availability` applies them during the run. State profiles
(`state_file`, HOST_AVAIL, LINK_AVAIL) and stochastic profiles are refused: see its docstring.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from batsim_py.platform.units import strtod_prefix

KINDS = ("SPEED", "BANDWIDTH", "LATENCY")  # the kinds batsim-py applies


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    pattern: tuple[tuple[float, float], ...]  # (date minus the previous date, value)
    loop_delay: float  # -1: the pattern runs once

    def events(self) -> Iterator[tuple[float, float]]:
        """(date, value) of every event, in order (forever if the profile loops)."""
        if not self.pattern:
            return
        date = 0.0
        first = True
        while True:
            for k, (delta, value) in enumerate(self.pattern):
                if first:
                    date = delta
                    first = False
                elif k == 0:
                    date = date + (delta + self.loop_delay)
                else:
                    date = date + delta
                yield date, value
            if self.loop_delay < 0:
                return


@dataclass(frozen=True, slots=True)
class Attachment:
    """A profile attached to a host (SPEED) or a link (BANDWIDTH, LATENCY)."""

    kind: str
    element: str  # host or link name (a SPLITDUPLEX link name stands for both halves)
    profile: Profile


def _number(text: str) -> float | None:
    split = strtod_prefix(text)
    return None if split is None else split[0]


def parse_profile(name: str, text: str, periodicity: float = -1.0) -> Profile:
    """Read a profile's text; ValueError says what is wrong (line number included)."""
    loop = periodicity > 0
    loop_delay = 0.0
    pattern: list[tuple[float, float]] = []
    last = 0.0
    for number, raw in enumerate(text.replace("\r", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        words = line.split()
        if words[0] in ("PERIODICITY", "LOOPAFTER") and len(words) > 1:
            value = _number(words[1])
            if value is None:
                raise ValueError(f"line {number}: '{line}': {words[0]} needs a number")
            loop = True
            if words[0] == "PERIODICITY":
                periodicity = value
            else:
                loop_delay = value
            continue
        if words[0] in ("STOCHASTIC", "DET", "NORM", "NORMAL", "GAUSS", "GAUSSIAN", "UNIF",
                        "UNIFORM", "EXP", "EXPONENTIAL"):
            raise ValueError(f"line {number}: '{line}': stochastic profiles are not supported "
                             "by batsim-py (their runs would not be reproducible): write the "
                             "dates and values out")
        date = _number(words[0])
        value = _number(words[1]) if len(words) > 1 else None
        if date is None or value is None:
            raise ValueError(f"line {number}: '{line}' is not 'DATE VALUE' (two numbers)")
        if date < 0:
            raise ValueError(f"line {number}: date {date:g} is negative")
        if date < last:
            raise ValueError(f"line {number}: dates must be sorted, but {date:g} comes after "
                             f"{last:g}")
        if value < 0:
            raise ValueError(f"line {number}: value {value:g} is negative")
        pattern.append((date - last, value))
        last = date
    if periodicity > 0:
        if loop_delay != 0:
            raise ValueError("give PERIODICITY or LOOPAFTER, not both")
        loop_delay = periodicity - last
    if loop and loop_delay < 0:
        raise ValueError(f"the loop is not realizable: its period ({periodicity:g}) is shorter "
                         f"than its last date ({last:g})")
    if loop and pattern and all(delta == 0 for delta, _ in pattern) and loop_delay == 0:
        raise ValueError("the profile loops without time passing (all its dates are 0 and "
                         "the loop delay is 0)")
    return Profile(name, tuple(pattern), loop_delay if loop else -1.0)


def read_profile_file(path: str, platform_path: str) -> Profile:
    """A profile file, looked for as SimGrid does: from the working directory, then from the
    platform file's directory."""
    candidates = [path]
    if not os.path.isabs(path):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(platform_path)), path))
    for candidate in candidates:
        try:
            with open(candidate, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read profile file '{candidate}': {exc}") from None
        try:
            return parse_profile(path, text)
        except ValueError as exc:
            raise ValueError(f"profile file '{candidate}': {exc}") from None
    raise ValueError(f"profile file '{path}' not found (looked in the working directory and "
                     "next to the platform file)")
