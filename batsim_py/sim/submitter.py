"""Static job submission: one submitter per workload, on the master host.

It reproduces Batsim's drift rule (§6.3): the submitter records its clock, posts the batch of
jobs due (blocking until the server received it), then sleeps `next subtime - recorded clock`,
so each wake-up is late by the time the previous batch took to be delivered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from batsim_py.sim.engine import PUT, SLEEP
from batsim_py.workload.model import Job, Workload

if TYPE_CHECKING:  # (simulation.py imports this module; compiled together, typed natively)
    from batsim_py.sim.simulation import Simulation

LD = np.longdouble


def submission_order(workload: Workload) -> list[Job]:
    """Jobs by (subtime, full id as a string): Batsim compares ids as strings (`w0!10` < `w0!5`).

    Jobs already in non-decreasing subtimes (generated workloads, most traces) keep that order
    but for each run of equal subtimes, sorted by id: checked in one pass, without a key tuple
    per job and a sort of them all (a million jobs: 0.2-0.4 s, and twenty collections of the
    young objects scanning the keys, 0.35 s more inside a run)."""
    jobs = workload.jobs
    last = -math.inf
    ties: list[int] = []  # where runs of equal subtimes end (one index per tie)
    i = 0
    for job in jobs:
        subtime: float = job.subtime
        if subtime > last or i == 0:
            last = subtime
        elif subtime == last:
            ties.append(i)
        else:  # (a step back, or NaN: the sort decides)
            return sorted(jobs, key=_subtime_and_id)
        i += 1
    order = list(jobs)
    if ties:
        _sort_ties(order, ties)
    return order


def _sort_ties(order: list[Job], ties: list[int]) -> None:
    """Sort by id each run of equal subtimes of `order` (non-decreasing subtimes; `ties`: the
    index of every job with the subtime of the one before it, increasing): then `order` is
    sorted by (subtime, id), as `sorted(order, key=_subtime_and_id)` would."""
    k = 0
    while k < len(ties):
        end = ties[k]
        start = end - 1  # the run's first job
        while k + 1 < len(ties) and ties[k + 1] == end + 1:
            k += 1
            end += 1
        order[start:end + 1] = sorted(order[start:end + 1], key=_id)
        k += 1


def submitter_process(sim: Simulation, workload: Workload) -> Generator[tuple, Any, None]:
    trace = sim.energy_trace

    def first_job() -> None:
        assert trace is not None
        if trace.first_submission is None:
            trace.first_submission = trace.total()  # Batsim's origin of consumed_joules

    yield from _submit(sim, submission_order(workload), _subtime, "JOBS", "BYE",
                       first_job if trace is not None else None)


def event_submitter_process(sim: Simulation, events: Any) -> Generator[tuple, Any, None]:
    """External events, submitted like jobs: batches of events due, with the same drift."""
    yield from _submit(sim, events.events, _timestamp, "EVENTS", "EVENTS_BYE", None)


def sleep_gap(due: float, current: float) -> float:
    """How long the submitter sleeps: Batsim subtracts in long double, then sleeps the double.

    When the double subtraction is exact (TwoSum's error term is zero: nearby dates, the usual
    case) that is the same value, without numpy's slow long double scalars.
    """
    gap = due - current
    a = gap + current
    b = gap - a
    if (due - a) + (-current - b) == 0.0:
        return gap
    return float(LD(due) - LD(current))


_subtime = attrgetter("subtime")
_subtime_and_id = attrgetter("subtime", "id")
_id = attrgetter("id")
_timestamp = attrgetter("timestamp")


def _submit(
    sim: Simulation, items: Sequence[Any], date: Callable[[Any], float], batch_kind: str,
    bye_kind: str, on_item: Callable[[], None] | None,
) -> Generator[tuple, Any, None]:
    """Hello, batches of the items due (drift rule), goodbye: one submitter's life."""
    engine = sim.engine
    cost = sim.cost(sim.master_host)
    yield (PUT, ("HELLO",), cost)
    current = engine.now
    batch: list = []
    for item, due in zip(items, map(date, items), strict=True):
        if due > current:
            if batch:
                yield (PUT, (batch_kind, batch), cost)
                batch = []
            yield (SLEEP, sleep_gap(due, current))
            current = engine.now
        batch.append(item)
        if on_item is not None:
            on_item()
    if batch:
        yield (PUT, (batch_kind, batch), cost)
    yield (PUT, (bye_kind,), cost)
