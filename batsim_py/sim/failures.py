"""Machine failures of the legacy protocol's `F` stamp: the jobs running there are killed.

Seed 001 defines `F` as "the given machines are in a failure state (crashed, no jobs can be
computed on them)". Batsim 4's `machine_unavailable` lets running jobs finish, which is not a
crash, so with `--legacy-failure-stamps` (Options.unavailable_kills) a machine_unavailable
external event first kills every job running on one of its machines: the job ends at the
event's date as COMPLETED_KILLED, and its `C` goes in the same message as, and before, the
`F` (the proposal of shared/research/seed-systems.md §1.11 item 4). The kill is immediate,
unlike a scheduler's KILL_JOB: nobody asked for it, so no JOB_KILLED event follows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def crash_jobs(sim: Any, machines: Iterable[int]) -> None:
    """Kill now the running jobs of `sim` that use one of `machines`; report them completed."""
    failed = set(machines)
    engine = sim.engine
    now = engine.now
    victims = [run for run in sim.runs.values()
               if run.state == "RUNNING" and not failed.isdisjoint(run.alloc)]
    for run in sorted(victims, key=lambda r: (r.starting_time, r.job.id)):
        sim.kill_executor(run, now)  # as a KILL_JOB's killer does
        run.reported = True  # a KILL_JOB of the scheduler still pending reports nothing more
        sim.on_job_completed(("JOB_COMPLETED", run))  # reported as any job end is
