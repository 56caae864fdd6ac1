"""`fixed6` prints a column of doubles exactly as `%f` prints each of them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batsim_py.output.fixed import fixed6


def _printed(values: list[float]) -> list[str]:
    fmt, given = fixed6(np.array(values, dtype=np.float64))
    return [fmt % v for v in given]


@pytest.mark.parametrize("seed", range(4))
def test_whole_and_fractional_columns(seed: int) -> None:
    rng = random.Random(seed)
    whole = [float(rng.randint(0, 10**rng.randint(0, 15))) for _ in range(2000)]
    assert fixed6(np.array(whole))[0] == "%d.000000"  # the cheap path is taken
    assert _printed(whole) == ["%f" % v for v in whole]
    mixed = whole[:100] + [rng.random() * 1e6]
    assert _printed(mixed) == ["%f" % v for v in mixed]


@pytest.mark.parametrize("odd", [-0.0, -1.0, float("inf"), float("-inf"), float("nan"),
                                 2.0**53, 2.0**53 + 2, 2.0**63, 1e300, 5e-324, 0.5])
def test_odd_values(odd: float) -> None:
    values = [0.0, 3.0, odd, 7.0]
    assert _printed(values) == ["%f" % v for v in values]


def test_empty() -> None:
    assert _printed([]) == []
