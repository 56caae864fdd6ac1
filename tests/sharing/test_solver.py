"""Fair-bottleneck solver against hand-computed cases and SimGrid's documented quirks."""

from __future__ import annotations

import numpy as np
import pytest

from batsim_py.sharing.solver import Usage, fair_bottleneck, fair_bottleneck_info


def test_alone_is_min_of_capacity_over_weight_and_bound() -> None:
    usage = Usage.from_dense([[2e9, 1.25e8]])
    assert fair_bottleneck(usage, [1e9, 1.25e8], [False, False]) == pytest.approx([0.5])
    assert fair_bottleneck(usage, [1e9, 1.25e8], [False, False], [0.25]) == pytest.approx([0.25])


def test_two_flows_share_a_shared_link_equally_in_bytes_per_second() -> None:
    x = fair_bottleneck(Usage.from_dense([[1e6], [4e6]]), [1e7], [False])
    np.testing.assert_allclose(x * [1e6, 4e6], [5e6, 5e6])


def test_fatpipe_gives_each_flow_the_whole_capacity() -> None:
    x = fair_bottleneck(Usage.from_dense([[1e6], [4e6]]), [1e7], [True])
    np.testing.assert_allclose(x, [10.0, 2.5])


def test_fatpipe_over_allocation_quirk() -> None:
    """simgrid-models §3.3 (b), oracle-checked: A alone on the FATPIPE gets 30 MB/s."""
    usage = Usage.from_dense([[1e8, 0.0], [1e8, 1e8]])
    x = fair_bottleneck(usage, [1e7, 2e6], [True, False])
    np.testing.assert_allclose(1.0 / x, [10.0 / 3.0, 50.0])


def test_stale_increment_quirk() -> None:
    """simgrid-models §3.3 (a), oracle-checked: E gets 0.51667, not max-min's 0.55."""
    # resources: link C 10 MB/s, link H 4 MB/s, two 1 Mf CPUs; activities A, E, F, K
    usage = Usage.from_dense([
        [1e7, 0.0, 1e7, 0.0],
        [1e7, 0.0, 0.0, 0.0],
        [1e7, 1e7, 0.0, 0.0],
        [0.0, 1e7, 0.0, 2e7],
    ])
    x = fair_bottleneck(usage, [1e7, 4e6, 1e6, 1e6], [False] * 4, [0.1, np.inf, np.inf, 0.05])
    np.testing.assert_allclose(1.0 / x, [10.0, 1.9354839, 2.8571429, 20.0], rtol=1e-7)


def test_one_core_bound_on_a_multicore_host() -> None:
    """An L07 entry uses one core: 1 task on 4 cores -> 1 core; 5 tasks -> 4/5 core each."""
    one = fair_bottleneck(Usage.from_dense([[1e9]]), [4e8], [False], [1e8 / 1e9])
    assert one == pytest.approx([0.1])
    five = fair_bottleneck(Usage.from_dense([[1e9]] * 5), [4e8], [False], [0.1] * 5)
    np.testing.assert_allclose(1.0 / five, [12.5] * 5)


def test_disabled_and_weightless_activities() -> None:
    usage = Usage.from_dense([[1e9], [0.0], [1e9]])
    x = fair_bottleneck(usage, [1e9], [False], enabled=[True, True, False])
    np.testing.assert_allclose(x, [1.0, 1.0, 0.0])


def test_an_activity_listed_twice_on_a_host_counts_twice() -> None:
    """Separate CPU elements (L07 forced creation): the rounds converge geometrically."""
    twice = Usage.from_elements([0, 0], [0, 0], [3e9, 1e9], 1, 1)
    x, info = fair_bottleneck_info(twice, [2e9], [False])
    assert x == pytest.approx([0.5], rel=1e-12)
    assert info.converged and info.rounds > 5


def test_long_fatpipe_drain_matches_the_literal_rounds() -> None:
    """A stale increment drains a FATPIPE by 5.66e6 a round: 1767 rounds, skipped in bulk."""
    usage = Usage.from_dense([[1e8, 0.0], [1e8, 1e8]])
    x, info = fair_bottleneck_info(usage, [1e10, 5.66e6], [True, False])
    rounds = np.arange(1767)
    literal = np.sum((1e10 - 5.66e6 * rounds) / 1e8)
    assert info.converged and info.rounds == 1767
    assert x[0] == pytest.approx(literal, rel=1e-12)


def test_non_terminating_rounds_end_at_their_limit() -> None:
    """Real SimGrid never returns here (oracle: random case 465 hangs).

    Activity 1 is listed twice on CPU 0 with different flops: its increments shrink
    geometrically, so the smallest increment on the FATPIPE loopback (its own, stale) vanishes
    and the loopback never saturates; activity 2 only loads the loopback, has no bound, and
    grows by R/w every round forever. Its limit is inf; the others keep their values.
    """
    cpu1, cpu2, loop = 0, 1, 2
    usage = Usage.from_elements(
        [2, 1, 1, 1, 0, 0],
        [loop, loop, cpu1, cpu1, cpu1, cpu2],
        [1e6, 1e6, 2550264015.5964007, 1e9, 1120311527.2831616, 1e8],
        3,
        3,
    )
    capacity = [1096929181.7989168, 2e9, 1e10]
    bound = [0.48956435557663647, 0.21506188674790808, np.inf]
    x, info = fair_bottleneck_info(usage, capacity, [False, False, True], bound)
    assert not info.converged
    assert x[2] == np.inf
    assert np.all(np.isfinite(x[:2])) and np.all(x[:2] < bound[:2])


def test_vanishing_drain_is_skipped_in_closed_form() -> None:
    """Oracle case 2787 (SimGrid hangs): a FATPIPE loses a few ulps a round, ~4e15 rounds."""
    usage = Usage.from_elements(
        [2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
        [8, 5, 1, 3, 2, 5, 7, 6, 8, 1, 1, 3, 1, 8, 2, 1],
        [121282712.51234408, 1e8, 0.0, 0.0, 0.0, 1e8, 1e6, 3e6, 196873565.80282834,
         370599225.8726884, 212852628.07571366, 1e9, 1e9, 180191980.38275138, 1e9,
         2757493568.922282],
        3,
        9,
    )
    capacity = [2e9, 1e8, 3e9, 2e9, 1e7, 1825898769.8261065, 1979462756.3625243, 1.25e8, 1e10]
    fatpipe = [False, False, False, False, True, True, False, True, True]
    x, info = fair_bottleneck_info(usage, capacity, fatpipe, [0.03626481712488027, 0.1, np.inf])
    assert not info.converged and info.rounds > 1e15
    assert 1e16 < x[2] < np.inf
