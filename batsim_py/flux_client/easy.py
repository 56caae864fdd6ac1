"""EASY backfilling as a Flux scheduler, with `sched.t_estimate` annotations.

Unlimited mode (it must see the whole queue). A pass starts jobs in priority-then-id order
while they fit (worst-fit, as `fifo`); when the head is blocked it gets a reservation: the
earliest time it fits once running jobs end at their expiration (start + duration), found on a
copy of the pool; the head is annotated with that `t_estimate` (envelope time), and every later
job that fits now and whose duration ends by the reservation starts now (backfilling, the rule
of pybatsim's easyBackfill: size and walltime before the reservation). Jobs without a duration
never backfill, and no reservation exists while a running job has none. At SUCCESS the
`t_estimate` annotation is deleted (sent as null).

Run it as a process: `python -m batsim_py.flux_client easy -s tcp://*:28000`.
"""

from __future__ import annotations

import heapq
from typing import Any

from batsim_py.flux_client.fifo import FIFOScheduler
from batsim_py.flux_client.pool import InfeasibleRequest, InsufficientResources, ResourcePool
from batsim_py.flux_client.scheduler import PendingJob


class EasyScheduler(FIFOScheduler):
    queue_depth: int | str = "unlimited"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._estimates: dict[int, float | None] = {}

    def schedule(self) -> None:
        while self._queue and self.try_alloc(self._queue[0]):
            heapq.heappop(self._queue)
        if not self._queue:
            return
        head = self._queue[0]
        shadow = self.reservation(head)
        if self._estimates.get(head.jobid) != shadow:
            self._estimates[head.jobid] = shadow
            head.request.annotate({"sched": {"t_estimate": shadow}})
        if shadow is None:
            return
        started = []
        for job in sorted(self._queue)[1:]:
            if job.duration <= 0 or self.now + job.duration > shadow:
                continue
            if self.try_alloc(job):
                started.append(job)
        if started:
            gone = {id(j) for j in started}
            self._queue = [j for j in self._queue if id(j) not in gone]
            heapq.heapify(self._queue)

    def reservation(self, job: PendingJob) -> float | None:
        """When `job` could start if nothing else started: running jobs are released at
        their end times (None if that never makes room)."""
        assert self.resources is not None
        sim: ResourcePool = self.resources.copy()
        t = self.now
        while True:
            try:
                sim.alloc(-1, job.resource_request)
                return t
            except InfeasibleRequest:
                return None
            except InsufficientResources:
                later = [end for _, end in sim.job_end_times() if end > t]
                if not later:
                    return None
                t = min(later)
                for jobid, end in sim.job_end_times():
                    if 0 < end <= t:
                        sim.free(jobid)
