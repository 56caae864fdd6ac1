"""SimGrid's value-with-unit syntax ("1Gf", "10GBps", "20us"), reproduced to the last bit.

SimGrid reads the longest numeric prefix like C `strtod`, then requires the rest to be exactly one
key of a case-sensitive unit table (simgrid-models §1.3). Multipliers are built by repeated
multiplication and applied with one double multiplication, so `100us` is `100 * 1e-6`
(9.999999999999999e-05), not 1e-4: timings must match SimGrid's to the bit.
"""

from __future__ import annotations

import logging
import math
import re
import sys
from collections.abc import Mapping

log = logging.getLogger(__name__)

_DECIMAL = "kMGTPEZY"
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")
_LONG = ("kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta")  # "zeta" (sic) as SimGrid


def _powers(base: float, count: int) -> list[float]:
    out, m = [], 1.0
    for _ in range(count):
        m *= base
        out.append(m)
    return out


def _table(
    bases: Mapping[str, float], *, decimal: bool = True, binary: bool = False, long: bool = False
) -> dict[str, float]:
    table: dict[str, float] = {}
    for unit, base in bases.items():
        table[unit] = base
        if decimal:
            for prefix, mult in zip(_DECIMAL, _powers(1000.0, 8), strict=True):
                table[prefix + unit] = mult * base
        if binary:
            for prefix, mult in zip(_BINARY, _powers(1024.0, 8), strict=True):
                table[prefix + unit] = mult * base
        if long:
            for prefix, mult in zip(_LONG, _powers(1000.0, 8), strict=True):
                table[prefix + unit] = mult * base
    return table


SPEED_UNITS = {**_table({"f": 1.0}), **_table({"flops": 1.0}, decimal=False, long=True)}
BANDWIDTH_UNITS = _table({"Bps": 1.0, "bps": 0.125}, binary=True)
SIZE_UNITS = _table({"B": 1.0, "b": 0.125}, binary=True)
TIME_UNITS = {
    "w": 604800.0,
    "d": 86400.0,
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}

_HINTS = {
    "speed": "units: f, kf, Mf, Gf, Tf, ... (lower-case k) or flops, kiloflops, megaflops, ...",
    "bandwidth": "units: Bps, kBps, MBps, GBps, ..., KiBps, MiBps, ..., bps, kbps, Mbps, Gbps, ...",
    "size": "units: B, kB, MB, GB, ..., KiB, MiB, ..., b, kb, Mb, ...",
    "time": "units: w, d, h, m, s, ms, us, ns, ps",
}

_DEC = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(
    r"[ \t\n\v\f\r]*[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
)
_SPECIAL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(infinity|inf|nan)", re.IGNORECASE)


def strtod_prefix(text: str) -> tuple[float, str] | None:
    """Split `text` like C strtod: (value, rest), or None when no number starts it."""
    m = _HEX.match(text)
    if m:
        body = m.group().strip()
        sign = -1.0 if body.startswith("-") else 1.0
        body = body.lstrip("+-")
        if "p" not in body.lower():
            body += "p0"
        try:
            value = float.fromhex(body)
        except OverflowError:  # strtod gives HUGE_VAL (and ERANGE)
            value = math.inf
        return sign * value, text[m.end() :]
    m = _DEC.match(text)
    if m:
        return float(m.group()), text[m.end() :]
    m = _SPECIAL.match(text)
    if m:
        value = math.inf if m.group(2).lower().startswith("inf") else math.nan
        return (-value if m.group(1) == "-" else value), text[m.end() :]
    return None


def out_of_range(number_text: str, value: float) -> bool:
    """Whether C strtod sets ERANGE on `number_text` (which gave `value`), as SimGrid's parser
    checks: a finite literal too large for a double, or one too small to be a normal double
    (glibc flags subnormal and underflowed results). "inf" and "nan" literals are in range."""
    body = number_text.strip().lstrip("+-").lower()
    if body.startswith(("inf", "nan")):
        return False
    if math.isinf(value) or 0 < abs(value) < sys.float_info.min:
        return True
    if value == 0:  # underflowed to zero, unless every digit of the mantissa is zero
        mantissa = body[2:].split("p")[0] if body.startswith("0x") else body.split("e")[0]
        return any(c not in "0." for c in mantissa)
    return False


def parse_value(text: str, units: Mapping[str, float], default_unit: str, quantity: str) -> float:
    """Value of `text` in the base unit of `units`; the ValueError says what is wrong and why."""
    split = strtod_prefix(text)
    if split is None:
        raise ValueError(
            f"'{text}' is not a valid {quantity} (it must start with a number; {_HINTS[quantity]})"
        )
    number, rest = split
    if out_of_range(text[: len(text) - len(rest)], number):
        raise ValueError(
            f"'{text}' is out of range (beyond what a double holds: SimGrid refuses it too; "
            "use a value between 2.3e-308 and 1.7e308 in magnitude, or 0)"
        )
    if rest == "":
        if number != 0:
            log.warning("unit-less %s '%s' is deprecated, read in %s", quantity, text, default_unit)
        return number * units[default_unit]
    multiplier = units.get(rest)
    if multiplier is None:
        why = "no space allowed" if rest != rest.strip() else f"unknown unit '{rest}'"
        raise ValueError(f"'{text}' is not a valid {quantity} ({why}; {_HINTS[quantity]})")
    return number * multiplier


def parse_speed(text: str) -> float:
    """flop/s."""
    return parse_value(text, SPEED_UNITS, "f", "speed")


def parse_bandwidth(text: str) -> float:
    """bytes/s."""
    return parse_value(text, BANDWIDTH_UNITS, "Bps", "bandwidth")


def parse_size(text: str) -> float:
    """bytes."""
    return parse_value(text, SIZE_UNITS, "B", "size")


def parse_time(text: str) -> float:
    """seconds."""
    return parse_value(text, TIME_UNITS, "s", "time")


def parse_speed_list(text: str) -> tuple[float, ...]:
    """One speed per pstate: items split on ',' and trimmed, as SimGrid does for host speeds."""
    return tuple(parse_speed(item.strip()) for item in text.split(","))


def parse_int_prefix(text: str) -> int:
    """Integer like C++ std::stoi: leading blanks, sign, digits; the rest is ignored."""
    m = re.match(r"[ \t\n\v\f\r]*[+-]?\d+", text)
    if m is None:
        raise ValueError(f"'{text}' is not an integer")
    return int(m.group())
