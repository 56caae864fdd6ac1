"""Static job submission: one submitter per workload, on the master host.

It reproduces Batsim's drift rule (§6.3): the submitter records its clock, posts the batch of
jobs due (blocking until the server received it), then sleeps `next subtime - recorded clock`,
so each wake-up is late by the time the previous batch took to be delivered.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from batsim_py.sim.engine import PUT, SLEEP
from batsim_py.workload.model import Job, Workload

LD = np.longdouble


def submission_order(workload: Workload) -> list[Job]:
    """Jobs by (subtime, full id as a string): Batsim compares ids as strings (`w0!10` < `w0!5`)."""
    return sorted(workload.jobs, key=lambda j: (j.subtime, j.id))


def submitter_process(sim: Any, workload: Workload) -> Generator[tuple, Any, None]:
    engine = sim.engine
    cost = sim.cost(sim.master_host)
    yield (PUT, ("HELLO",), cost)
    current = engine.now
    batch: list[Job] = []
    trace = sim.energy_trace
    for job in submission_order(workload):
        if job.subtime > current:
            if batch:
                yield (PUT, ("JOBS", batch), cost)
                batch = []
            # Batsim subtracts in long double, then sleeps the double of the difference.
            yield (SLEEP, float(LD(job.subtime) - LD(current)))
            current = engine.now
        batch.append(job)
        if trace is not None and trace.first_submission is None:
            trace.first_submission = trace.total()  # Batsim's origin of consumed_joules
    if batch:
        yield (PUT, ("JOBS", batch), cost)
    yield (PUT, ("BYE",), cost)


def event_submitter_process(sim: Any, events: Any) -> Generator[tuple, Any, None]:
    """External events, submitted like jobs: batches of events due, with the same drift."""
    engine = sim.engine
    cost = sim.cost(sim.master_host)
    yield (PUT, ("HELLO",), cost)
    current = engine.now
    batch: list = []
    for event in events.events:
        if event.timestamp > current:
            if batch:
                yield (PUT, ("EVENTS", batch), cost)
                batch = []
            yield (SLEEP, float(LD(event.timestamp) - LD(current)))
            current = engine.now
        batch.append(event)
    if batch:
        yield (PUT, ("EVENTS", batch), cost)
    yield (PUT, ("EVENTS_BYE",), cost)
