"""The in-process `fcfs` as it was before it became incremental (issue 12 item 7), kept as the
reference its decisions are compared with: the queue rebuilt and the machine list scanned on
every pass, exactly as pybatsim's `schedFcfs` does. Slow (O(queue + machines) per pass), simple,
obviously the pybatsim algorithm."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batsim_py.decision.decisions import ExecuteJob, RejectJob
from batsim_py.decision.events import SimulationBegins
from batsim_py.schedulers.sched_common import SchedJob, SchedLayerScheduler


class ScanFcfs(SchedLayerScheduler):
    """pybatsim `schedFcfs`, by full scans."""

    def __init__(self, *, sched_delay: float | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(sched_delay=sched_delay, options=options)
        self._open: list[SchedJob] = []  # submission order
        self._busy: set[int] = set()

    def on_begin(self, event: SimulationBegins) -> None:
        self._busy = set()

    def on_job_submitted(self, job: SchedJob) -> None:
        self._open.append(job)

    def on_job_finished(self, job: SchedJob) -> None:
        self._busy.difference_update(job.alloc)

    def schedule(self) -> None:
        done = 0
        kept: list[SchedJob] = []
        for job in self._open:
            if not self.runnable(job):
                kept.append(job)
                done += 1
                continue
            alloc = find_consecutive(self.machines, self._busy, job.req) \
                if job.subtime <= self.time else None
            if alloc is not None:
                job.alloc, job.state, job.start = alloc, "running", self.time
                self._busy.update(alloc)
                self.emit(ExecuteJob(timestamp=self.time, job_id=job.id,
                                     alloc=tuple(sorted(alloc))))
            elif job.req > len(self.machines) or job.req <= 0:
                job.state = "rejected"
                self.emit(RejectJob(timestamp=self.time, job_id=job.id))
            else:
                break
            done += 1
        if done:
            self._open = kept + self._open[done:]


def find_consecutive(machines: list[int], busy: set[int], req: int) -> tuple[int, ...] | None:
    """First run (in `machines` order) of free machines with consecutive ids of length >= req."""
    if req <= 0:
        return None
    run: list[int] = []
    for m in machines:
        if m in busy:
            run = []
            continue
        if run and m != run[-1] + 1 and m != run[-1] - 1:
            run = []
        run.append(m)
        if len(run) == req:
            return tuple(run)
    return None
