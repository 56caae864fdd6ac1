"""wire_time must be exactly what a scheduler reads back from Batsim's "%.6f"."""

from __future__ import annotations

import math
import random
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py.wire import round6, wire_time


def _samples(n: int):
    rng = random.Random(7)
    for _ in range(n):
        r = rng.random()
        if r < 0.25:
            yield rng.uniform(0, 1e6)
        elif r < 0.5:  # near the 6th-decimal rounding boundaries
            yield rng.randint(0, 10**9) / 1e6 + rng.choice([0, 5e-7, -5e-7, 1e-12, -1e-12])
        elif r < 0.75:  # any bit pattern
            x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
            if math.isfinite(x) and abs(x) < 1e300:
                yield x
        else:
            yield rng.uniform(-1, 1) * 10 ** rng.randint(-12, 15)
    yield from (0.0, -0.0, -1e-9, 4.9999995e-7, 0.0000005, 1.0000005, 2.5e-7, -2.5e-7,
                0.0078125, -0.0078125, 3 / 128, 2.0**50 / 1e6, -(2.0**50) / 1e6, 1e300)


def test_wire_time_is_the_printed_value_read_back() -> None:
    for x in _samples(200_000):
        expected = float("%.6f" % x)
        got = wire_time(x)
        assert got == expected and math.copysign(1, got) == math.copysign(1, expected), x


def test_repeated_and_zero_times_keep_their_value_and_sign() -> None:
    for x in (3.0000005, 3.0000005, -1e-9, 0.0, -0.0, 0.0, -1e-9, -1e-9, 2.5e-7, 2.5e-7):
        expected = float("%.6f" % x)
        got = wire_time(x)
        assert got == expected and math.copysign(1, got) == math.copysign(1, expected), x


def test_wire_time_keeps_ints_and_floats_apart() -> None:
    """An int equal to the last float converted (or the reverse) gets its own type back, not
    the remembered value's."""
    assert type(wire_time(3.0)) is float
    assert type(wire_time(3)) is int
    assert type(wire_time(3.0)) is float
    assert wire_time(1) == 1 and type(wire_time(1.0)) is float


@settings(max_examples=300, deadline=None)
@given(st.floats() | st.floats(0, 1e9) | st.floats(0, 1e4)
       | st.integers(0, 10**15).map(lambda k: (k + 0.5) / 1e6))
def test_round6_is_round(x) -> None:
    """`round6` (wire_time's rounding, also of the dates handed to pybatsim) is
    `round(x, 6)`, sign and NaN included. (300 examples: hypothesis' special values and
    shrinking; the bulk, 80,000 doubles, is the test below, at a hundredth of the cost.)"""
    assert repr(round6(x)) == repr(round(x, 6))


def test_round6_is_round_near_ties() -> None:
    """Where `x * 1e6` falls near one half (`round` ties to even on the exact decimal) and
    on values of 6 decimals: 60,000 cases, the fast path and its fallback both exercised; and
    20,000 doubles of any bit pattern (any sign and size, subnormals, infinities, NaNs)."""
    rnd = random.Random(20)
    cases = [1 / 128, 3 / 128, 5e-7, 0.5, 2.5e-6, math.nextafter(1e9, 0), 1e9, 5e-324]
    for _ in range(10_000):
        x = (rnd.randrange(10**15) + 0.5) / 1e6
        odd = rnd.randrange(1, 2**20) * 2 + 1
        cases += [x, math.nextafter(x, 0), math.nextafter(x, 2e9), rnd.randrange(10**15) / 1e6,
                  odd / 128, odd / 2 ** rnd.randrange(1, 40)]
    cases += [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0]
              for _ in range(20_000)]
    for x in cases:
        assert repr(round6(x)) == repr(round(x, 6)), x


def test_six_decimal_times_past_1e9_read_back_as_themselves() -> None:
    """`read_back` returns a 6-decimal float below EXACT_READ_LIMIT at once (the in-process
    peer's shortcut past 1e9 s of simulated time): check that RapidJSON's own conversion of its
    repr (`rapidjson_double`) gives it back, on random times up to the limit and at its edge."""
    from batsim_py.rapidjson_number import rapidjson_double
    from batsim_py.wire import EXACT_READ_LIMIT, read_back

    rng = random.Random(7)
    limit_us = int(EXACT_READ_LIMIT * 1e6)
    micros = [rng.randrange(10**15, limit_us) for _ in range(20_000)]
    micros += list(range(limit_us - 2000, limit_us)) + list(range(10**15, 10**15 + 2000))
    for us in micros:
        for t in (us / 1e6, -us / 1e6):
            assert round6(t) == t
            assert rapidjson_double(repr(t)) == t, repr(t)
            assert read_back(t) == t
    # ints past 1e9 are still converted (RapidJSON reads their float repr as a double)
    assert type(read_back(2_000_000_000)) is float
    assert type(read_back(999_999_999)) is int
