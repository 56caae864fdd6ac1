"""How a number looks once it crossed the Batsim protocol.

Batsim to scheduler: times printed with `%.6f`, read back (`wire_time`). Schedulers only ever
see Batsim's 6-decimal times, so the engine stamps events with them and in-process schedulers
get them too (they then decide exactly as over ZeroMQ). Scheduler to Batsim: numbers printed
with Python's repr, read by RapidJSON (`read_back`), the one conversion every in-process peer
applies to the times of a reply, so that in-process and ZeroMQ runs give the same outputs.
"""

from __future__ import annotations

import math

from batsim_py.rapidjson_number import rapidjson_double

_last = [1.0, 1.0]  # the last time converted, and its wire value (events come in bursts)


def wire_time(t: float) -> float:
    """The double a scheduler parses from Batsim's `%.6f` of `t`.

    `round(t, 6)` is that value: CPython rounds through the same correctly rounded decimal
    conversion as `%.6f` followed by `float()` (checked on millions of doubles, signed zeros
    included, by tests/protocol/test_wire.py), at a third of the cost. The last conversion
    is remembered (not for zeros, whose sign `==` does not tell; only for floats, since an
    int equal to the last float would otherwise get the float's value, and the reverse).
    """
    if type(t) is not float:
        return round(t, 6)
    last = _last
    if t == last[0] and t:
        return last[1]
    value = round(t, 6)
    last[0] = t
    last[1] = value
    return value


# ------------------------------------------------------------------- a scheduler's numbers

_last_read = [1.0, 1.0]  # the last number read back, and the value read (replies repeat now)


def read_back(x: float) -> float:
    """The double Batsim reads when a scheduler prints `x` with Python's repr (as pybatsim's
    `json.dumps` does) and RapidJSON parses it (`rapidjson_number`).

    Every path that hands Batsim a scheduler's number (the ZeroMQ peer reads the text, the
    in-process peers call this) gives the same double. A value with at most 6 decimals below
    1e9 (any time taken from a Batsim message) has at most 15 significant digits, which
    RapidJSON's fast path converts exactly: it is returned at once. Any other value (a
    scheduler's own sum such as `now + 100 / 3`, 17-digit reprs, huge or tiny numbers) goes
    through the conversion itself, which may land an ulp or more away.
    """
    if -1e9 < x < 1e9 and round(x, 6) == x:
        return x
    last = _last_read
    if x != last[0] or x == 0.0:  # (a zero's sign is not told by ==)
        last[0] = x
        last[1] = rapidjson_double(repr(float(x))) if math.isfinite(x) else x
    return last[1]
