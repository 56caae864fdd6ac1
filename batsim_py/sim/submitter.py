"""Static job submission: one submitter per workload, on the master host.

It reproduces Batsim's drift rule (§6.3): the submitter records its clock, posts the batch of
jobs due (blocking until the server received it), then sleeps `next subtime - recorded clock`,
so each wake-up is late by the time the previous batch took to be delivered.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from simpy.events import Event

from batsim_py.workload.model import Workload


def submission_order(workload: Workload) -> list:
    """Jobs by (subtime, full id as a string): Batsim compares ids as strings (`w0!10` < `w0!5`)."""
    return sorted(workload.jobs, key=lambda j: (j.subtime, j.id))


def submitter_process(sim: Any, workload: Workload) -> Generator[Event, Any, None]:
    env = sim.env
    master = sim.master_host
    yield sim.post(master, ("HELLO",))
    current = env.now
    batch: list = []
    for job in submission_order(workload):
        if job.subtime > current:
            if batch:
                yield sim.post(master, ("JOBS", batch))
                batch = []
            yield env.timeout(job.subtime - current)
            current = env.now
        batch.append(job)
    if batch:
        yield sim.post(master, ("JOBS", batch))
    yield sim.post(master, ("BYE",))
