"""`PREFIX_schedule.csv`: one line of whole-run metrics, columns in byte order (§7.2).

Sums and maxima are long double as in Batsim (sums accumulated in row order, as Batsim adds
each job when its row is written); means are the double of the sum divided by the number of
jobs, rejected ones included.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from batsim_py.output.jobs_csv import JobTimes

STATES = ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable")


def _f(x: float) -> str:
    if x != x:  # glibc prints 0.0/0.0 as -nan
        return "-nan"
    return "%f" % x


def _sum(a: np.ndarray) -> float:
    return float(np.add.accumulate(a)[-1]) if len(a) else 0.0


def _max(a: np.ndarray) -> float:
    return max(float(a.max()), 0.0) if len(a) else 0.0


def format_schedule(
    *,
    times: JobTimes,
    nb_machines: int,
    time_in_state: Mapping[str, float],
    consumed_joules: float,
    nb_grouped_switches: int,
    nb_machine_switches: int,
    scheduling_time: float,
    simulation_time: float,
    version: str,
) -> str:
    nb_finished = len(times.final_states)
    nb_jobs = nb_finished + times.nb_rejected
    nb_success = times.final_states.count("COMPLETED_SUCCESSFULLY")
    nan = float("nan")

    def mean(a: np.ndarray) -> float:
        return _sum(a) / nb_jobs if nb_jobs else nan

    values = {
        "batsim_version": version,
        "consumed_joules": _f(consumed_joules),
        "makespan": _f(_max(times.completion)),
        "max_slowdown": _f(_max(times.slowdown)),
        "max_turnaround_time": _f(_max(times.turnaround)),
        "max_waiting_time": _f(_max(times.waiting)),
        "mean_slowdown": _f(mean(times.slowdown)),
        "mean_turnaround_time": _f(mean(times.turnaround)),
        "mean_waiting_time": _f(mean(times.waiting)),
        "nb_computing_machines": str(nb_machines),
        "nb_grouped_switches": str(nb_grouped_switches),
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(nb_finished),
        "nb_jobs_killed": str(nb_finished - nb_success),
        "nb_jobs_rejected": str(times.nb_rejected),
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
