"""A user scheduler: first come, first served on the machines that are up.

Written against batsim-py's in-process scheduler API (docs/extending.md): a class with an
`exchange(now, events)` method that reads the typed events of one Batsim call and returns a
`Reply` of typed decisions. Unlike the shipped `fcfs`/`easy` (pybatsim's, which ignore
external events), it keeps off machines made unavailable (an `--events` file, or a SimPy
process's `EventSource`), so it pairs with `examples/failures.py`.

    batsim-py -p platforms/small4.xml -w workloads/delays_small.json \
        --scheduler examples/available_fcfs.py:AvailableFcfs --events my_events.txt
"""

from __future__ import annotations

from collections.abc import Sequence

from batsim_py.decision.decisions import ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import (
    Event,
    JobCompleted,
    JobSubmitted,
    Notify,
    SimulationBegins,
)
from batsim_py.decision.interface import DecisionProcess


class AvailableFcfs(DecisionProcess):
    """Strict FCFS: the oldest waiting job starts on the lowest-numbered machines that are
    neither busy nor down, as soon as enough of them are; a job larger than the platform is
    rejected."""

    def __init__(self) -> None:
        self.machines: list[int] = []
        self.busy: set[int] = set()
        self.down: set[int] = set()
        self.queue: list[JobSubmitted] = []

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        for event in events:
            if isinstance(event, SimulationBegins):
                self.machines = [r.id for r in event.compute_resources]
            elif isinstance(event, JobSubmitted):
                self.queue.append(event)
            elif isinstance(event, JobCompleted):
                self.busy.difference_update(event.alloc)
            elif isinstance(event, Notify) and event.resources is not None:
                if event.type == "event_machine_unavailable":
                    self.down.update(event.resources)
                elif event.type == "event_machine_available":
                    self.down.difference_update(event.resources)
        decisions: list[ExecuteJob | RejectJob] = []
        while self.queue:
            job = self.queue[0].job
            if job.res > len(self.machines):
                decisions.append(RejectJob(now, job.id))
                self.queue.pop(0)
                continue
            free = [m for m in self.machines if m not in self.busy and m not in self.down]
            if len(free) < job.res:
                break  # strict FCFS: the others wait behind it
            alloc = tuple(free[:job.res])
            self.busy.update(alloc)
            decisions.append(ExecuteJob(now, job.id, alloc))
            self.queue.pop(0)
        return Reply(now, tuple(decisions))
