"""`PREFIX_jobs.csv`: one row per job, in the order the server learnt of its end (§7.1)."""

from __future__ import annotations

from dataclasses import dataclass

from batsim_py import intervalset

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
)


@dataclass(frozen=True, slots=True)
class JobRow:
    """What the schedule metrics need from a finished (or rejected) job."""

    final_state: str
    subtime: float
    starting_time: float
    runtime: float


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
    runtime: float,
    alloc: tuple[int, ...],
    consumed_energy: float,
    metadata: str,
) -> str:
    head = "%s,%s,%s,%f,%d,%f," % (name, workload, profile, subtime, res, walltime)
    if final_state == "REJECTED":
        return head + '0,REJECTED,,,,,,,,,"%s"' % metadata
    finish = starting_time + runtime
    turnaround = finish - subtime
    return head + '%d,%s,%f,%f,%f,%f,%f,%f,%s,%f,"%s"' % (
        1 if final_state == "COMPLETED_SUCCESSFULLY" else 0,
        final_state,
        starting_time,
        runtime,
        finish,
        starting_time - subtime,
        turnaround,
        turnaround / runtime,
        intervalset.format(alloc),
        consumed_energy,
        metadata,
    )
