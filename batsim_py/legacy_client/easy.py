"""EASY backfilling, as a 2016 scheduler: jobs start in submission order on free machines;
when the queue's head does not fit, it gets a reservation at the earliest time enough machines
free up (running jobs end at their start + walltime at the latest), and later jobs may start
now if they leave that reservation intact: they end before it (by their walltime), or they only
use machines the head will not need. Jobs without a walltime never end for this estimate. A job
larger than the platform is rejected.

    python -m batsim_py.legacy_client.easy -s unix:/tmp/bat_socket --version 1 -w WORKLOAD
"""

from __future__ import annotations

import math
import sys

from batsim_py.legacy_client.network import Job, LegacyScheduler, run_scheduler


class Easy(LegacyScheduler):
    """EASY backfilling (legacy protocol)."""

    def on_simulation_begins(self) -> None:
        self.free: set[int] = set(range(self.nb_res))
        self.queue: list[Job] = []
        self.running: dict[str, tuple[list[int], float]] = {}  # machines, estimated end

    def on_job_submission(self, job: Job) -> None:
        if job.res <= 0 or job.res > self.nb_res:
            self.reject_job(job)
        else:
            self.queue.append(job)

    def on_job_completion(self, job: Job) -> None:
        machines, _ = self.running.pop(job.id)
        self.free.update(machines)

    def on_message_handled(self) -> None:
        started: list[tuple[Job, list[int]]] = []
        while self.queue and self.queue[0].res <= len(self.free):  # the head first, in order
            started.append(self.start(self.queue.pop(0)))
        if self.queue:
            shadow, extra = self.reservation(self.queue[0])
            for job in list(self.queue[1:]):
                if job.res > len(self.free):
                    continue
                ends = self.now + job.walltime if job.walltime >= 0 else math.inf
                if ends <= shadow or job.res <= extra:
                    if ends > shadow:
                        extra -= job.res  # it keeps machines the head would have had
                    self.queue.remove(job)
                    started.append(self.start(job))
        if started:
            self.start_jobs(started)

    def start(self, job: Job) -> tuple[Job, list[int]]:
        machines = sorted(self.free)[:job.res]
        self.free.difference_update(machines)
        end = self.now + job.walltime if job.walltime >= 0 else math.inf
        self.running[job.id] = (machines, end)
        return job, machines

    def reservation(self, head: Job) -> tuple[float, int]:
        """When the head can start at the latest, and how many machines are spare then."""
        available = len(self.free)
        for machines, end in sorted(self.running.values(), key=lambda r: r[1]):
            available += len(machines)
            if available >= head.res:
                return end, available - head.res
        return math.inf, 0


if __name__ == "__main__":
    sys.exit(run_scheduler(Easy()))
