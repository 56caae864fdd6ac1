"""`PREFIX_schedule.csv`: one line of whole-run metrics, columns in byte order (§7.2).

Sums and maxima are kept in long double as Batsim does; means are the double of the sum
divided by the number of jobs (rejected ones included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from batsim_py.output.jobs_csv import JobRow

STATES = ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable")
LD = np.longdouble


def _f(x: float) -> str:
    if x != x:  # glibc prints 0.0/0.0 as -nan
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
    zero = LD(0)
    makespan = max_slowdown = max_turnaround = max_waiting = zero
    sum_slowdown = sum_turnaround = sum_waiting = zero
    for r in rows:
        nb_jobs += 1
        if r.final_state == "REJECTED":
            nb_rejected += 1
            continue
        nb_finished += 1
        if r.final_state == "COMPLETED_SUCCESSFULLY":
            nb_success += 1
        sum_waiting += r.waiting
        sum_turnaround += r.turnaround
        sum_slowdown += r.slowdown
        if r.completion > makespan:
            makespan = r.completion
        if r.waiting > max_waiting:
            max_waiting = r.waiting
        if r.turnaround > max_turnaround:
            max_turnaround = r.turnaround
        if r.slowdown > max_slowdown:
            max_slowdown = r.slowdown
    nan = float("nan")

    def mean(s: LD) -> float:
        return float(s) / nb_jobs if nb_jobs else nan

    values = {
        "batsim_version": version,
        "consumed_joules": _f(consumed_joules),
        "makespan": _f(float(makespan)),
        "max_slowdown": _f(float(max_slowdown)),
        "max_turnaround_time": _f(float(max_turnaround)),
        "max_waiting_time": _f(float(max_waiting)),
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
