"""SimGrid's L07 engine loop for a fixed set of ptasks, to get their completion dates.

A reference for tests and for the engine above: it advances time the way
`HostL07Model::update_actions_state` and `EngineImpl::solve` do (simgrid-models §2.5, §2.8),
so that dates agree with SimGrid's to rounding, not just to the model. A ptask starting at
date t > 0 is what an actor doing `sleep_for(t)` then `exec_init(...).start()` gives: the sleep
is a countdown paid like a max-duration, snapped to 0 below 1e-9 s, and the ptask is created
at the date the countdown ends.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batsim_py.sharing.ptask import PtaskRow, assemble
from batsim_py.sharing.solver import WORKAMOUNT_PRECISION, SolveInfo, fair_bottleneck_info

#: `precision/timing`: latency and duration countdowns snap to 0 below it (s).
TIMING_PRECISION = 1e-9
#: Remaining work snaps to 0 below precision/work-amount x precision/timing.
REMAINS_PRECISION = WORKAMOUNT_PRECISION * TIMING_PRECISION


def _countdown(value: float, delta: float, precision: float) -> float:
    """SimGrid's `double_update`: subtract, then snap anything below `precision` to 0."""
    value -= delta
    return 0.0 if value < precision else value


def completion_dates(
    rows: Sequence[PtaskRow],
    starts: ArrayLike,
    capacity: ArrayLike,
    link_fatpipe: ArrayLike,
    n_hosts: int,
    infos: list[SolveInfo] | None = None,
) -> NDArray[np.float64]:
    """Completion date of each ptask `rows[k]` started at `starts[k]`.

    `capacity` covers hosts then links (see `batsim_py.sharing.ptask`); `link_fatpipe` has one
    flag per link. If `infos` is given, the `SolveInfo` of every solve is appended to it (a
    solve that did not converge is one where real SimGrid never returns).
    """
    start = np.asarray(starts, dtype=np.float64)
    cap = np.asarray(capacity, dtype=np.float64)
    fat = np.concatenate((np.zeros(n_hosts, dtype=bool), np.asarray(link_fatpipe, dtype=bool)))
    n_links = cap.size - n_hosts
    k_total = len(rows)
    end = np.full(k_total, np.nan)

    sleep = {k: float(start[k]) for k in range(k_total) if start[k] > 0.0}
    # Started actions, in SimGrid's started-set order (creation order).
    started: list[int] = []
    latency: dict[int, float] = {}
    remains: dict[int, float] = {}
    enabled_order: list[int] = []  # by enabling time, oldest first

    def create(k: int) -> None:
        started.append(k)
        latency[k] = rows[k].latency
        remains[k] = rows[k].work
        if rows[k].latency <= 0.0:
            enabled_order.append(k)

    for k in range(k_total):
        if k not in sleep:
            create(k)

    now = 0.0
    while started or sleep:
        rate = _solve(rows, enabled_order, cap, fat, n_hosts, n_links, infos)
        delta = -1.0
        for k in started:
            x = rate.get(k, 0.0)
            if x > 0.0:
                v = remains[k] / x if remains[k] > 0.0 else 0.0
                delta = v if delta < 0.0 or v < delta else delta
            if latency[k] > 0.0 and (delta < 0.0 or latency[k] < delta):
                delta = latency[k]
        for left in sleep.values():
            if delta < 0.0 or left < delta:
                delta = left
        if delta < 0.0:
            raise RuntimeError("no ptask can progress: some activity has a zero rate forever")
        now += delta

        for k in list(started):
            if latency[k] > 0.0:
                latency[k] = (
                    _countdown(latency[k], delta, TIMING_PRECISION) if latency[k] > delta else 0.0
                )
                if latency[k] <= 0.0:
                    enabled_order.append(k)
            x = rate.get(k, 0.0)
            if x == np.inf:  # a rate without limit (see solver): done within this step
                remains[k] = 0.0
            else:
                remains[k] = _countdown(remains[k], x * delta, REMAINS_PRECISION)
            if remains[k] <= 0.0 and latency[k] <= 0.0:
                end[k] = now
                started.remove(k)
                enabled_order.remove(k)
        woken = []
        for k in list(sleep):
            sleep[k] = _countdown(sleep[k], delta, TIMING_PRECISION)
            if sleep[k] <= 0.0:
                del sleep[k]
                woken.append(k)
        for k in woken:
            create(k)
    return end


def _solve(
    rows: Sequence[PtaskRow],
    enabled_order: Sequence[int],
    cap: NDArray[np.float64],
    fat: NDArray[np.bool_],
    n_hosts: int,
    n_links: int,
    infos: list[SolveInfo] | None,
) -> dict[int, float]:
    """Rates of the enabled actions; actions in their latency phase are out of the system."""
    if not enabled_order:
        return {}
    sub = [rows[k] for k in enabled_order]
    usage = assemble(sub, n_hosts, n_links)
    bound = np.array([r.bound for r in sub])
    x, info = fair_bottleneck_info(usage, cap, fat, bound)
    if infos is not None:
        infos.append(info)
    return {k: float(v) for k, v in zip(enabled_order, x, strict=True)}
