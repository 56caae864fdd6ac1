"""A sched-simple-like policy: priority FIFO, worst-fit, limited mode with 8 pending allocs.

flux-core's `sched-simple` (now `sched-fifo.py` on the Python base class) as documented there
and in `t/t2300-sched-simple.t`: jobs are taken in priority-then-id order; the head is allocated
worst-fit (ranks with the most free cores first) and gets the annotation
`{"sched": {"resource_summary": "rank0/core1"}}`; a head that cannot be allocated now stops
the pass (strict FIFO); one that can never be is denied with the pool's "unsatisfiable request:
..." note. With the option `annotate_pending` the blocked head also gets `sched.reason_pending`
and `sched.jobs_ahead` (cleared at its SUCCESS).

Run it as a process: `python -m batsim_py.flux_client fifo -s tcp://*:28000`.
"""

from __future__ import annotations

import heapq
from typing import Any

from batsim_py.flux_client.pool import InfeasibleRequest, InsufficientResources
from batsim_py.flux_client.scheduler import PendingJob, Scheduler
from batsim_py.protocol.flux import rv1


class FIFOScheduler(Scheduler):
    queue_depth: int | str = 8

    def __init__(self, **options: Any) -> None:
        self.annotate_pending = bool(options.pop("annotate_pending", False))
        super().__init__(**options)
        self._reason: dict[int, Any] = {}

    def schedule(self) -> None:
        while self._queue:
            job = self._queue[0]
            if not self.try_alloc(job):
                if self.annotate_pending:
                    note = {"reason_pending": "insufficient resources", "jobs_ahead": 0}
                    if self._reason.get(job.jobid) != note:
                        self._reason[job.jobid] = note
                        job.request.annotate({"sched": note})
                break
            heapq.heappop(self._queue)

    def feasibility_check(self, jobspec: dict[str, Any]) -> None:
        """Overridden, so `feasibility` is registered: a job the pool could never hold is
        refused at submission (with `--flux-feasibility`) by the same check that denies it
        at alloc time."""
        super().feasibility_check(jobspec)

    def try_alloc(self, job: PendingJob) -> bool:
        """Allocate `job` now (True), deny it if it never fits (True: it left the queue), or
        leave it (False)."""
        assert self.resources is not None
        duration = job.duration
        end = self.now + duration if duration > 0 else 0.0
        try:
            assignment = self.resources.alloc(job.jobid, job.resource_request, end)
        except InfeasibleRequest as exc:
            job.request.deny(str(exc))
            return True
        except InsufficientResources:
            return False
        self._reason.pop(job.jobid, None)
        job.request.success(self.resources.to_R(assignment, self.now, end),
                            {"sched": {"resource_summary": rv1.summary(assignment)}})
        return True
