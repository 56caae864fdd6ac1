"""`PREFIX_jobs.csv`: one row per job, in the order the server learnt of its end (§7.1).

Batsim keeps job times in long double and derives every column from them before printing the
double value with `%f`; numpy's longdouble is the same 80-bit type on x86-64, so the printed
digits (down to the sign of `-0.000000`) come out identical.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from batsim_py import intervalset

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
)

LD = np.longdouble


@dataclass(frozen=True, slots=True)
class JobRow:
    """What the schedule metrics need from a finished (or rejected) job, in long double."""

    final_state: str
    waiting: LD | None = None
    completion: LD | None = None
    turnaround: LD | None = None
    slowdown: LD | None = None


def format_row(
    *,
    name: str,
    workload: str,
    profile: str,
    subtime: float,
    res: int,
    walltime: float,
    final_state: str,
    starting_time: float,
    runtime: LD | None,
    alloc: tuple[int, ...],
    consumed_energy: float,
    metadata: str,
) -> tuple[str, JobRow]:
    head = "%s,%s,%s,%f,%d,%f," % (name, workload, profile, subtime, res, walltime)
    if final_state == "REJECTED":
        return head + '0,REJECTED,,,,,,,,,"%s"' % metadata, JobRow(final_state)
    start = LD(starting_time)
    sub = LD(subtime)
    finish = start + runtime
    waiting = start - sub
    turnaround = finish - sub
    slowdown = turnaround / runtime
    text = head + '%d,%s,%f,%f,%f,%f,%f,%f,%s,%f,"%s"' % (
        1 if final_state == "COMPLETED_SUCCESSFULLY" else 0,
        final_state,
        starting_time,
        float(runtime),
        float(finish),
        float(waiting),
        float(turnaround),
        float(slowdown),
        intervalset.format(alloc),
        consumed_energy,
        metadata,
    )
    return text, JobRow(final_state, waiting, finish, turnaround, slowdown)


def runtime_of(starting_time: float, end: float) -> LD:
    """Batsim's runtime: end - start in long double, 1e-5 when the job took no time."""
    runtime = LD(end) - LD(starting_time)
    if runtime == 0:
        return LD("1e-5")
    return runtime
