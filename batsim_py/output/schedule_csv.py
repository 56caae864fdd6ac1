"""`PREFIX_schedule.csv`: one line of whole-run metrics, columns in byte order (§7.2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from batsim_py.output.jobs_csv import JobRow

STATES = ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable")


def _f(x: float) -> str:
    if x != x:  # C prints 0.0/0.0 as -nan on glibc
        return "-nan"
    return "%f" % x


def format_schedule(
    *,
    rows: Iterable[JobRow],
    nb_machines: int,
    time_in_state: Mapping[str, float],
    consumed_joules: float,
    nb_grouped_switches: int,
    nb_machine_switches: int,
    scheduling_time: float,
    simulation_time: float,
    version: str,
) -> str:
    nb_jobs = nb_finished = nb_success = nb_rejected = 0
    makespan = max_slowdown = max_turnaround = max_waiting = 0.0
    sum_slowdown = sum_turnaround = sum_waiting = 0.0
    for r in rows:
        nb_jobs += 1
        if r.final_state == "REJECTED":
            nb_rejected += 1
            continue
        nb_finished += 1
        if r.final_state == "COMPLETED_SUCCESSFULLY":
            nb_success += 1
        waiting = r.starting_time - r.subtime
        completion = r.starting_time + r.runtime
        turnaround = completion - r.subtime
        slowdown = turnaround / r.runtime
        makespan = max(makespan, completion)
        max_waiting = max(max_waiting, waiting)
        max_turnaround = max(max_turnaround, turnaround)
        max_slowdown = max(max_slowdown, slowdown)
        sum_waiting += waiting
        sum_turnaround += turnaround
        sum_slowdown += slowdown
    nan = float("nan")
    mean = (lambda s: s / nb_jobs) if nb_jobs else (lambda s: nan)
    values = {
        "batsim_version": version,
        "consumed_joules": _f(consumed_joules),
        "makespan": _f(makespan),
        "max_slowdown": _f(max_slowdown),
        "max_turnaround_time": _f(max_turnaround),
        "max_waiting_time": _f(max_waiting),
        "mean_slowdown": _f(mean(sum_slowdown)),
        "mean_turnaround_time": _f(mean(sum_turnaround)),
        "mean_waiting_time": _f(mean(sum_waiting)),
        "nb_computing_machines": str(nb_machines),
        "nb_grouped_switches": str(nb_grouped_switches),
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(nb_finished),
        "nb_jobs_killed": str(nb_finished - nb_success),
        "nb_jobs_rejected": str(nb_rejected),
        "nb_jobs_success": str(nb_success),
        "nb_machine_switches": str(nb_machine_switches),
        "scheduling_time": _f(scheduling_time),
        "simulation_time": _f(simulation_time),
        "success_rate": _f(nb_success / nb_jobs if nb_jobs else nan),
    }
    for state in STATES:
        values["time_" + state] = _f(time_in_state.get(state, 0.0))
    keys = sorted(values, key=lambda k: k.encode())
    return ",".join(keys) + "\n" + ",".join(values[k] for k in keys) + "\n"
