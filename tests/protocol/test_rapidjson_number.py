"""Batsim reads scheduler numbers with RapidJSON's default conversion (hand-checked cases)."""

from __future__ import annotations

import random

from batsim_py.rapidjson_number import rapidjson_double, wire_value

ULP_1E11 = 2.0**-16  # spacing of doubles between 2^36 and 2^37 (1e11 is there)


def test_short_numbers_are_exact() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        text = repr(round(rng.uniform(0, 1e6), 6))
        assert rapidjson_double(text) == float(text)
    for text in ["0", "0.0", "4.5e-05", "-3.25", "1e17", "1E+3", "0.30000000000000004"]:
        assert rapidjson_double(text) == float(text)


def test_a_long_number_rounds_differently() -> None:
    """17 digits: RapidJSON keeps 10000000000000003, rounds it to the double
    10000000000000004, then divides by 1e5: 3 ulps above 1e11, where the nearest double
    to 100000000000.00003 is 2 ulps above."""
    assert float("100000000000.00003") == 1e11 + 2 * ULP_1E11
    assert rapidjson_double("100000000000.00003") == 1e11 + 3 * ULP_1E11
    assert wire_value(1e11 + 2 * ULP_1E11) == 1e11 + 3 * ULP_1E11
    assert wire_value(123.456) == 123.456


def test_wire_value_of_repeated_and_alternating_long_numbers() -> None:
    """The one-entry cache gives each value its own conversion, whatever came before."""
    rng = random.Random(3)
    values = [round(rng.uniform(1e9, 1e12), 6) for _ in range(300)]
    sequence = [v for v in values for _ in range(rng.randint(1, 3))] + values[::-1] + values
    for x in sequence:
        assert wire_value(x) == rapidjson_double(repr(x))
        assert wire_value(-x) == -rapidjson_double(repr(x))
