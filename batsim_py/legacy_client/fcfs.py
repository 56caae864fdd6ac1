"""First come, first served, as a 2016 scheduler: jobs start in submission order on the lowest
run of consecutive free machines; the first job that does not fit waits and so does every job
behind it; a job larger than the platform is rejected. (The same decisions as batsim-py's
in-process `fcfs`, and so the same outputs.)

    python -m batsim_py.legacy_client.fcfs -s unix:/tmp/bat_socket --version 1 -w WORKLOAD
"""

from __future__ import annotations

import sys

from batsim_py.legacy_client.network import Job, LegacyScheduler, run_scheduler


def first_fit(free: list[bool], req: int) -> list[int] | None:
    """The lowest run of `req` consecutive free machines."""
    run: list[int] = []
    for m, is_free in enumerate(free):
        run = run + [m] if is_free else []
        if len(run) == req:
            return run
    return None


class Fcfs(LegacyScheduler):
    """First come, first served (legacy protocol)."""

    def on_simulation_begins(self) -> None:
        self.free = [True] * self.nb_res
        self.queue: list[Job] = []
        self.running: dict[str, list[int]] = {}

    def on_job_submission(self, job: Job) -> None:
        self.queue.append(job)
        self.schedule()

    def on_job_completion(self, job: Job) -> None:
        for m in self.running.pop(job.id):
            self.free[m] = True
        self.schedule()

    def schedule(self) -> None:
        started: list[tuple[Job, list[int]]] = []
        while self.queue:
            job = self.queue[0]
            if job.res <= 0 or job.res > self.nb_res:
                if started:  # (decisions in the order they were taken)
                    self.start_jobs(started)
                    started = []
                self.reject_job(job)
            else:
                machines = first_fit(self.free, job.res)
                if machines is None:
                    break
                for m in machines:
                    self.free[m] = False
                self.running[job.id] = machines
                started.append((job, machines))
            self.queue.pop(0)
        if started:
            self.start_jobs(started)


if __name__ == "__main__":
    sys.exit(run_scheduler(Fcfs()))
