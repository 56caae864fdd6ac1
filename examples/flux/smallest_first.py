"""A user Flux scheduler for batsim-py: smallest request first (docs/flux.md).

Unlimited mode, so it sees every pending job; each pass allocates, among the jobs that fit
now, the one asking for the fewest cores first (ties: priority order), worst-fit like flux-core's
pool, and annotates the others with the reason they wait.

    batsim-py -p examples/flux/two_by_two.xml -w examples/flux/t2300.json \
        --protocol flux --flux-granularity core \
        --flux-scheduler examples/flux/smallest_first.py:SmallestFirst
"""

from __future__ import annotations

from batsim_py.flux_client import InfeasibleRequest, InsufficientResources, Scheduler
from batsim_py.protocol.flux import rv1


class SmallestFirst(Scheduler):
    queue_depth = "unlimited"

    def __init__(self, **options):
        super().__init__(**options)
        self.waiting: set[int] = set()  # jobs already told why they wait

    def schedule(self) -> None:
        for job in sorted(self.queue(), key=lambda j: j.resource_request.total_cores):
            duration = job.duration
            end = self.now + duration if duration > 0 else 0.0
            try:
                got = self.resources.alloc(job.jobid, job.resource_request, end)
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            except InsufficientResources:
                if job.jobid not in self.waiting:
                    self.waiting.add(job.jobid)
                    job.request.annotate({"sched": {"reason_pending": "insufficient resources"}})
                continue
            else:
                job.request.success(self.resources.to_R(got, self.now, end),
                                    {"sched": {"resource_summary": rv1.summary(got)}})
            self._queue.remove(job)
        self._queue.sort()
