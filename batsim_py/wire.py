"""How a time looks once it crossed the Batsim protocol: printed with `%.6f`, read back.

Schedulers only ever see Batsim's 6-decimal times, so the engine stamps events with them and
in-process schedulers get them too (they then decide exactly as over ZeroMQ).
"""

from __future__ import annotations


def wire_time(t: float) -> float:
    """The double a scheduler parses from Batsim's `%.6f` of `t`.

    `round(t, 6)` is that value: CPython rounds through the same correctly rounded decimal
    conversion as `%.6f` followed by `float()` (checked on millions of doubles, signed zeros
    included, by tests/protocol/test_wire.py), at a third of the cost.
    """
    return round(t, 6)
