"""`PREFIX_jobs.csv`: one row per job, in the order the server learnt of its end (§7.1).

Batsim keeps job times in long double and derives every column from them before printing the
double value with `%f`; numpy's longdouble is the same 80-bit type on x86-64, so the printed
digits (down to the sign of `-0.000000`) come out identical. The columns are computed for all
jobs at once when the file is written: numpy's long double is slow one scalar at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from batsim_py import intervalset

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
)

LD = np.longdouble


def ld_text(x: object) -> str:
    """C's `%Lf` of a long double: 6 decimals, rounded from the long double itself."""
    return np.format_float_positional(x, precision=6, unique=False, fractional=True, trim="k")


NO_RUNTIME = LD("1e-5")  # Batsim's runtime for a job that took no time


@dataclass(frozen=True, slots=True)
class JobRecord:
    """A job as it ended: what its row needs (times are the simulation clock's doubles)."""

    name: str
    workload: str
    profile: str
    subtime: float
    res: int
    walltime: float
    final_state: str
    starting_time: float  # unused when rejected
    end_time: float  # clock when it finished or was killed; unused when rejected
    alloc: tuple[int, ...]
    consumed_energy: object  # long double joules with -E, None without
    metadata: str


@dataclass(frozen=True, slots=True)
class JobTimes:
    """Long double columns of the jobs that ran (rejected ones excluded), in row order."""

    final_states: tuple[str, ...]
    nb_rejected: int
    waiting: np.ndarray
    completion: np.ndarray
    turnaround: np.ndarray
    slowdown: np.ndarray


def compute_times(records: Sequence[JobRecord]) -> tuple[JobTimes, dict[int, tuple]]:
    """Batsim's long double job metrics; also the printed values of each non-rejected row."""
    ran = [i for i, r in enumerate(records) if r.final_state != "REJECTED"]
    start = np.array([records[i].starting_time for i in ran], dtype=LD)
    end = np.array([records[i].end_time for i in ran], dtype=LD)
    sub = np.array([records[i].subtime for i in ran], dtype=LD)
    runtime = end - start
    runtime[runtime == 0] = NO_RUNTIME
    finish = start + runtime
    waiting = start - sub
    turnaround = finish - sub
    slowdown = turnaround / runtime
    printed = zip(
        runtime.astype(float).tolist(),
        finish.astype(float).tolist(),
        waiting.astype(float).tolist(),
        turnaround.astype(float).tolist(),
        slowdown.astype(float).tolist(),
        strict=True,
    )
    columns = dict(zip(ran, printed, strict=True))
    times = JobTimes(
        final_states=tuple(records[i].final_state for i in ran),
        nb_rejected=len(records) - len(ran),
        waiting=waiting,
        completion=finish,
        turnaround=turnaround,
        slowdown=slowdown,
    )
    return times, columns


def format_rows(records: Sequence[JobRecord]) -> tuple[str, JobTimes]:
    """The whole file (header included) and the metrics schedule.csv needs."""
    times, columns = compute_times(records)
    lines = [HEADER]
    fmt = '%s,%s,%s,%f,%d,%f,%d,%s,%f,%f,%f,%f,%f,%f,%s,%s,"%s"'
    for i, r in enumerate(records):
        if r.final_state == "REJECTED":
            lines.append(
                '%s,%s,%s,%f,%d,%f,0,REJECTED,,,,,,,,,"%s"'
                % (r.name, r.workload, r.profile, r.subtime, r.res, r.walltime, r.metadata)
            )
            continue
        runtime, finish, waiting, turnaround, stretch = columns[i]
        lines.append(
            fmt
            % (
                r.name, r.workload, r.profile, r.subtime, r.res, r.walltime,
                1 if r.final_state == "COMPLETED_SUCCESSFULLY" else 0, r.final_state,
                r.starting_time, runtime, finish, waiting, turnaround, stretch,
                intervalset.format(r.alloc),
                "-1.000000" if r.consumed_energy is None else ld_text(r.consumed_energy),
                r.metadata,
            )
        )
    lines.append("")
    return "\n".join(lines), times
