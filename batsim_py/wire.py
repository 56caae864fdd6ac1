"""How a number looks once it crossed the Batsim protocol.

Batsim to scheduler: times printed with `%.6f`, read back (`wire_time`). Schedulers only ever
see Batsim's 6-decimal times, so the engine stamps events with them and in-process schedulers
get them too (they then decide exactly as over ZeroMQ). Scheduler to Batsim: numbers printed
with Python's repr, read by RapidJSON (`read_back`), the one conversion every in-process peer
applies to the times of a reply, so that in-process and ZeroMQ runs give the same outputs.
"""

from __future__ import annotations

import math
from typing import Any, Final

from batsim_py.rapidjson_number import rapidjson_double

# The last time converted, and its wire value (events come in bursts). (Final: compiled, a
# C static rather than a look-up in the module's dict at every call; its items change.)
_last: Final = [1.0, 1.0]
_LIMIT: Final = 1125899906842624.0  # 2^50: |t x 1e6| below it, round6's integers are exact
_ULP: Final = 2.220446049250313e-16  # 2^-52: t x 1e6 is within |y| x ULP / 2 of its value
# Below it in magnitude, a double with at most 6 decimals reads back as itself (`read_back`):
# its repr has at most 16 significant digits, an integer significand below 2^53 (9e9 x 1e6).
EXACT_READ_LIMIT: Final = 9e9


# (`Any`: an int stays an int; mypyc would turn an int given for a `float | int` into a float)
def wire_time(t: Any) -> Any:
    """The double a scheduler parses from Batsim's `%.6f` of `t`.

    `round(t, 6)` is that value: CPython rounds through the same correctly rounded decimal
    conversion as `%.6f` followed by `float()` (checked on millions of doubles, signed zeros
    included, by tests/protocol/test_wire.py); `round6` computes it without the decimal
    conversion. The last conversion is remembered (not for zeros, whose sign `==` does not
    tell; only for floats, since an int equal to the last float would otherwise get the
    float's value, and the reverse). An int stays an int (a pybatsim peer prints it so).
    """
    if type(t) is not float:
        return round(t, 6)
    x: float = t
    last = _last
    if x == last[0] and x:
        return last[1]
    value = round6(x)
    last[0] = x
    last[1] = value
    return value


def round6(t: float) -> float:
    """`round(t, 6)` (= `float("%.6f" % t)`) of a double, without a decimal conversion.

    `%.6f` prints the integer R nearest to the exact t x 10^6 over 10^6, and reading that back
    gives the double nearest to R / 10^6, which is `R / 1e6` (an exact integer below 2^53
    divided by an exact 1e6, correctly rounded). y = t * 1e6 is within half an ulp of the
    exact product, so the integer nearest to y is R unless the exact product is that close
    to a half: y's distance to the nearest half is checked against twice that error, and the
    rare undecided values (and huge ones, NaN, infinities) take `round` itself."""
    y = t * 1e6
    if -_LIMIT < y < _LIMIT:
        r = float(int(y))  # (truncated: exact, as is a double's fractional part y - r)
        if y - r > 0.5:
            r += 1.0
        elif y - r < -0.5:
            r -= 1.0
        if abs(0.5 - abs(y - r)) > abs(y) * _ULP:  # (y - r is exact: Sterbenz)
            if r == 0.0:
                return math.copysign(0.0, t)  # -0.000000 reads back as -0.0
            return r / 1e6
    return round(t, 6)


# ------------------------------------------------------------------- a scheduler's numbers

# The last number read back (an int or a float), and the value read (replies repeat now).
_last_read: Final[list[Any]] = [1.0, 1.0]


def read_back(x: Any) -> Any:  # (an int stays an int, as in wire_time)
    """The double Batsim reads when a scheduler prints `x` with Python's repr (as pybatsim's
    `json.dumps` does) and RapidJSON parses it (`rapidjson_number`).

    Every path that hands Batsim a scheduler's number (the ZeroMQ peer reads the text, the
    in-process peers call this) gives the same double. A float with at most 6 decimals below
    `EXACT_READ_LIMIT` (any time taken from a Batsim message; simulations pass 1e9 s) is
    returned at once: its repr (the shortest that reads back) has at most as many digits as
    its `%.6f`, so RapidJSON's fast path holds an integer significand below 2^53, exact as a
    double, and divides it once by an exact power of ten, correctly rounded: back to the float.
    (An int is returned at once below 1e9, where RapidJSON keeps it an integer.) Any other
    value (a scheduler's own sum such as `now + 100 / 3`, 17-digit reprs, huge or tiny
    numbers) goes through the conversion itself, which may land an ulp or more away.
    """
    if type(x) is float:
        if -EXACT_READ_LIMIT < x < EXACT_READ_LIMIT and round6(x) == x:
            return x
    elif -1e9 < x < 1e9:
        return x  # (an int has no decimals)
    last = _last_read
    if x != last[0] or x == 0.0:  # (a zero's sign is not told by ==)
        last[0] = x
        last[1] = rapidjson_double(repr(float(x))) if math.isfinite(x) else x
    return last[1]
