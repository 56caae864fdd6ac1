"""How a time looks once it crossed the Batsim protocol: printed with `%.6f`, read back.

Schedulers only ever see Batsim's 6-decimal times, so the engine stamps events with them and
in-process schedulers get them too (they then decide exactly as over ZeroMQ).
"""

from __future__ import annotations

_last = [1.0, 1.0]  # the last time converted, and its wire value (events come in bursts)


def wire_time(t: float) -> float:
    """The double a scheduler parses from Batsim's `%.6f` of `t`.

    `round(t, 6)` is that value: CPython rounds through the same correctly rounded decimal
    conversion as `%.6f` followed by `float()` (checked on millions of doubles, signed zeros
    included, by tests/protocol/test_wire.py), at a third of the cost. The last conversion
    is remembered (not for zeros, whose sign `==` does not tell).
    """
    last = _last
    if t == last[0] and t:
        return last[1]
    value = round(t, 6)
    last[0] = t
    last[1] = value
    return value
