"""L07 rows and completion dates against SimGrid's documented oracle figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from batsim_py.sharing.ptask import assemble, cpu_capacity, ptask_row
from batsim_py.sharing.stepping import completion_dates

# Two hosts (1 Gf, 2 Gf), one SHARED link 125 MB/s 100 us, __loopback__ (link 1) for self routes.
SPEED = [1e9, 2e9]
FAT = [False, True]
ROUTES = {(0, 1): [(0, 1e-4)], (1, 0): [(0, 1e-4)], (0, 0): [(1, 0.0)], (1, 1): [(1, 0.0)]}
CAP = np.concatenate((cpu_capacity([1, 1], SPEED), [1.25e8, 1e10]))


def dates(*tasks: tuple, starts: list[float] | None = None) -> np.ndarray:
    rows = [ptask_row(h, f, b, ROUTES, FAT, SPEED) for h, f, b in tasks]
    return completion_dates(rows, starts or [0.0] * len(rows), CAP, FAT, 2)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (([0, 1], [2e9, 1e9], [[0, 1.25e8], [0, 0]]), 2.0001),
        (([0, 1], None, [[0, 1.25e8], [0, 0]]), 1.0001),
        (([0, 1], [1e9, 1e9], None), 1.0),
        (([0, 1], [1e9, 1e9], [[0, 1.25e8], [1.25e8, 0]]), 2.0001),
        (([0, 0], None, [[1e9, 0], [0, 0]]), 0.1),  # self transfer on __loopback__
        (([0], [1e9], [[1e12]]), 1.0),  # one host: sequential exec, bytes ignored
        (([0, 1], None, None), 0.0),  # nothing to do: completes at its start
    ],
)
def test_isolated_ptask_matches_simgrid(task: tuple, expected: float) -> None:
    """simgrid-models §6 oracle table."""
    assert dates(task) == pytest.approx([expected], rel=1e-12, abs=1e-15)


def test_row_construction() -> None:
    row = ptask_row([0, 1, 0], [1e9, 0.0, 3e9], [[5.0, 1e6, 0], [2e6, 0, 0], [0, 0, 7.0]],
                    ROUTES, FAT, SPEED)
    np.testing.assert_array_equal(row.cpu_hosts, [0, 1, 0])  # one element per executor
    np.testing.assert_array_equal(row.cpu_flops, [1e9, 0.0, 3e9])
    np.testing.assert_array_equal(row.links, [1, 0])  # loopback first used by pair (0, 0)
    np.testing.assert_array_equal(row.link_bytes, [7.0, 3e6])  # FATPIPE max, SHARED sum
    assert row.latency == 1e-4
    assert row.bound == min(1e9 / 3e9, 4194304 / (2 * 1e-4 * 2e6))
    assert row.work == 1.0
    assert assemble([row], 2, 2).activity.size == 5


@pytest.mark.parametrize(
    ("nbytes", "latency", "expected"),
    [(1e9, 1e-2, 4.7783716), (1e7, 1e-2, 0.0576837)],  # oracle figures, 8 digits
)
def test_tcp_gamma_bound(nbytes: float, latency: float, expected: float) -> None:
    """1 GB/s link with a 10 ms latency: the TCP window, not the bandwidth, limits."""
    routes = {(0, 1): [(0, latency)]}
    row = ptask_row([0, 1], None, [[0, nbytes], [0, 0]], routes, [False], [1e9, 1e9])
    end = completion_dates([row], [0.0], [1e9, 1e9, 1e9], [False], 2)
    assert end == pytest.approx([expected], rel=1e-6)


def test_gamma_bound_uses_the_worst_latency_times_bytes_pair() -> None:
    """3 hosts: 1e8 B over 10 ms and 1e9 B over 1 ms -> 1.01 s (oracle)."""
    routes = {(0, 1): [(0, 1e-2)], (0, 2): [(1, 1e-3)]}
    b = [[0, 1e8, 1e9], [0, 0, 0], [0, 0, 0]]
    row = ptask_row([0, 1, 2], None, b, routes, [False, False], [1e9] * 3)
    end = completion_dates([row], [0.0], [1e9] * 3 + [1e9, 1e9], [False, False], 3)
    assert end == pytest.approx([1.01], rel=1e-9)


def test_compute_contention_on_small_platform() -> None:
    """batsim-semantics §10.5: 1e9 and 5e8 flops on one 48.492 Mf host (Bourassa)."""
    platform = Path(__file__).parents[2] / "tests/conformance/reference/a_delays_fcfs_small"
    if (platform / "small_platform.xml").exists():
        assert 'id="Bourassa" speed="48.492Mf"' in (platform / "small_platform.xml").read_text()
    speed = [48.492e6]
    rows = [ptask_row([0], [f], None, {}, [], speed) for f in (1e9, 5e8)]
    end = completion_dates(rows, [0.0, 0.0], cpu_capacity([1], speed), [], 1)
    assert np.round(end, 6).tolist() == [30.932937, 20.621958]


def test_staggered_starts_and_latency_phase() -> None:
    """B joins A's link after 0.5 s: A ran alone at 1e8/1.25e8 then shares it half and half."""
    a = ([0, 1], None, [[0, 1.25e8], [0, 0]])
    end = dates(a, a, starts=[0.0, 0.5])
    # A: latency 1e-4, alone until 0.5001 (half of its work), then the rest at half speed.
    assert end[0] == pytest.approx(0.5001 + 0.5 * 2, rel=1e-12)
    # B: after its own latency it shares until A ends (half done), then finishes alone.
    assert end[1] == pytest.approx(end[0] + 0.5, rel=1e-12)


def test_fatpipe_over_allocation_end_dates() -> None:
    """simgrid-models §3.3 (b): A finishes at 3.3333 s, B at 50 s."""
    routes = {(0, 1): [(0, 0.0)], (1, 0): [(0, 0.0), (1, 0.0)]}
    rows = [ptask_row([0, 1], None, [[0, 1e8], [0, 0]], routes, [True, False], [1e9, 1e9]),
            ptask_row([1, 0], None, [[0, 1e8], [0, 0]], routes, [True, False], [1e9, 1e9])]
    end = completion_dates(rows, [0.0, 0.0], [1e9, 1e9, 1e7, 2e6], [True, False], 2)
    np.testing.assert_allclose(end, [10.0 / 3.0, 50.0], rtol=1e-12)
