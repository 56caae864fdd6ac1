"""A complete in-process scheduler: first come, first served, written against batsim-py's API.

The same policy as examples/zmq_fcfs.py (and examples/node-scheduler/scheduler.js), but it runs
inside the simulator's process: no socket, no JSON, typed events in and typed decisions out.
Run it from the command line:

    batsim-py -p platforms/small4.xml -w workloads/delays_small.json \
        --events workloads/events_small.jsonl \
        --scheduler examples/inprocess_fcfs.py:AvailabilityFcfs

or as a script (python examples/inprocess_fcfs.py PLATFORM WORKLOAD PREFIX [EVENTS...]).

Policy: jobs start in submission order on the lowest free machines; the first job that does not
fit waits and everything behind it waits too; a job larger than the platform is rejected.
Machines made unavailable by external events (`--events`) are not used until they are
available again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from batsim_py.decision.decisions import Decision, ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import (
    Event,
    JobCompleted,
    JobSubmitted,
    Notify,
    SimulationBegins,
)
from batsim_py.decision.interface import DecisionProcess


class AvailabilityFcfs(DecisionProcess):
    """The simulator calls `exchange` with the events of one call (as Batsim sends one message)
    and applies the decisions of the reply."""

    def __init__(self) -> None:
        self.machines: list[int] = []  # compute machine ids
        self.busy: set[int] = set()
        self.unavailable: set[int] = set()
        self.queue: list[tuple[str, int]] = []  # (job id, number of machines) in arrival order

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        for event in events:
            if isinstance(event, SimulationBegins):
                self.machines = [r.id for r in event.compute_resources]
            elif isinstance(event, JobSubmitted):
                self.queue.append((event.job.id, event.job.res))
            elif isinstance(event, JobCompleted):
                self.busy.difference_update(event.alloc)
            elif isinstance(event, Notify) and event.type == "event_machine_unavailable":
                self.unavailable.update(event.resources or ())
            elif isinstance(event, Notify) and event.type == "event_machine_available":
                self.unavailable.difference_update(event.resources or ())
        decisions: list[Decision] = []
        while self.queue:
            job_id, res = self.queue[0]
            if res > len(self.machines):
                decisions.append(RejectJob(timestamp=now, job_id=job_id))
                self.queue.pop(0)
                continue
            free = [m for m in self.machines if m not in self.busy and m not in self.unavailable]
            if len(free) < res:
                break  # strict FCFS: nothing overtakes the first waiting job
            alloc = tuple(free[:res])
            self.busy.update(alloc)
            decisions.append(ExecuteJob(timestamp=now, job_id=job_id, alloc=alloc))
            self.queue.pop(0)
        return Reply(now=now, decisions=tuple(decisions))


def run(platform: str, workload: str, prefix: str, events: Sequence[str] = ()) -> None:
    """One simulation with this scheduler, outputs under `prefix` (as `batsim-py -e PREFIX`)."""
    import batsim_py

    batsim_py.simulate(platform, [workload], scheduler=AvailabilityFcfs(), events=events,
                       export=prefix, forward_unknown_events=True)


if __name__ == "__main__":
    run(*sys.argv[1:4], events=sys.argv[4:])
