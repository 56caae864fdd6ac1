"""Metrics of a run and of each workload, from DataFrames with the columns of PREFIX_jobs.csv.

Notation: for a job j, s_j its submission time, b_j its start, e_j its finish, x_j = e_j - b_j
its execution time, n_j the number of machines in its allocation; "ran" is the set of jobs
that started (every final state but REJECTED); M the number of compute machines; T the
horizon, the run's makespan; U the unavailable machine-seconds (Batsim's `time_unavailable`).

- makespan           = max_{j in ran} e_j (from time 0, as Batsim's schedule.csv), 0 if none ran
- waiting time w_j   = b_j - s_j; mean, median and max over ran
- turnaround t_j     = e_j - s_j; mean and max over ran
- bounded slowdown   = max(1, t_j / max(x_j, tau)) with tau = 10 s (`BSLD_THRESHOLD`), so that
  jobs shorter than tau do not dominate (Feitelson's bounded slowdown); mean and max over ran
- utilisation        = sum_{j in ran} n_j * x_j / (M * T - U): machine-seconds used by jobs
  over machine-seconds the machines were available (unavailable time excluded)
- mean queue length  = sum_{j in ran} w_j / T: the time average over [0, T] of the number of
  jobs submitted and not yet started (each waiting job adds w_j job-seconds); rejected jobs
  are not counted (jobs.csv does not say when they were rejected)
- counts             = jobs by final state: COMPLETED_SUCCESSFULLY, COMPLETED_KILLED,
  COMPLETED_WALLTIME_REACHED, COMPLETED_FAILED, REJECTED
- energy (with -E)   = E(T), the platform's energy at the makespan (the last line of
  PREFIX_consumed_energy.csv at or before T, written at the last job end); mean power =
  E(T) / T, in watts. Batsim's schedule.csv `consumed_joules` is E(T) minus the energy before
  the first submission, so it is smaller when the first job arrives after time 0

Per workload, the same formulas on that workload's jobs, with the run's M, T and U, so that
the workloads' utilisations and mean queue lengths add up to the run's; a workload's energy
is the sum of its jobs' `consumed_energy` (the energy of their machines while they ran, idle
machines excluded), its makespan the last finish of its own jobs.

Where jobs.csv gives `waiting_time`, `turnaround_time` (Batsim computes them before rounding
to 6 decimals), they are used; otherwise they are computed from the times. Batsim's own
schedule.csv divides its means by all jobs, rejected ones included: with no rejected job its
`mean_waiting_time`, `mean_turnaround_time`, `max_waiting_time` and `makespan` equal ours.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from batsim_py.analysis.load import MACHINE_STATE_COLUMNS, Run, allocation_sizes, normalize_jobs

BSLD_THRESHOLD = 10.0
"""tau of the bounded slowdown, in seconds."""

FINAL_STATES = {
    "nb_success": "COMPLETED_SUCCESSFULLY",
    "nb_killed": "COMPLETED_KILLED",
    "nb_walltime": "COMPLETED_WALLTIME_REACHED",
    "nb_failed": "COMPLETED_FAILED",
    "nb_rejected": "REJECTED",
}

LABELS = {
    "nb_jobs": "jobs",
    "nb_success": "completed successfully",
    "nb_killed": "killed",
    "nb_walltime": "walltime reached",
    "nb_failed": "failed",
    "nb_rejected": "rejected",
    "makespan": "makespan (s)",
    "waiting_mean": "waiting time, mean (s)",
    "waiting_median": "waiting time, median (s)",
    "waiting_max": "waiting time, max (s)",
    "turnaround_mean": "turnaround, mean (s)",
    "turnaround_max": "turnaround, max (s)",
    "bsld_mean": "bounded slowdown (tau 10 s), mean",
    "bsld_max": "bounded slowdown (tau 10 s), max",
    "utilisation": "utilisation",
    "queue_mean": "queue length, mean (jobs)",
    "energy_joules": "energy (J)",
    "power_mean": "power, mean (W)",
}
"""Metric keys, in table order, with the labels the report and `stats` print."""


def job_metrics(
    jobs: pd.DataFrame,
    nb_machines: int,
    *,
    horizon: float | None = None,
    unavailable: float = 0.0,
    energy: float | None = None,
    tau: float = BSLD_THRESHOLD,
    sizes: np.ndarray | None = None,
) -> dict[str, float]:
    """The metrics of the module docstring for these jobs (a run's or one workload's).

    `horizon` is T (default: these jobs' makespan), `unavailable` U, `energy` the consumed
    joules (None without -E: no energy metrics), `sizes` the n_j when already known (else
    parsed from `allocated_resources`).
    """
    jobs = normalize_jobs(jobs)
    states = jobs["final_state"]
    out: dict[str, float] = {"nb_jobs": len(jobs)}
    counts = states.value_counts()
    for key, state in FINAL_STATES.items():
        out[key] = int(counts.get(state, 0))
    ran = (states != "REJECTED").to_numpy() & jobs["starting_time"].notna().to_numpy()
    start = jobs["starting_time"].to_numpy()[ran]
    finish = jobs["finish_time"].to_numpy()[ran]
    submit = jobs["submission_time"].to_numpy()[ran]
    execution = jobs["execution_time"].to_numpy()[ran]
    wait = _column(jobs, "waiting_time", ran, start - submit)
    turnaround = _column(jobs, "turnaround_time", ran, finish - submit)
    makespan = float(finish.max()) if len(finish) else 0.0
    horizon = makespan if horizon is None else horizon
    nan = math.nan
    out["makespan"] = makespan
    out["waiting_mean"] = float(wait.mean()) if len(wait) else nan
    out["waiting_median"] = float(np.median(wait)) if len(wait) else nan
    out["waiting_max"] = float(wait.max()) if len(wait) else nan
    out["turnaround_mean"] = float(turnaround.mean()) if len(wait) else nan
    out["turnaround_max"] = float(turnaround.max()) if len(wait) else nan
    bsld = np.maximum(1.0, turnaround / np.maximum(execution, tau))
    out["bsld_mean"] = float(bsld.mean()) if len(wait) else nan
    out["bsld_max"] = float(bsld.max()) if len(wait) else nan
    if sizes is None:
        sizes = allocation_sizes(jobs)
    used = float((sizes[ran] * execution).sum())
    available = nb_machines * horizon - unavailable
    out["utilisation"] = used / available if available > 0 else nan
    out["queue_mean"] = float(wait.sum()) / horizon if horizon > 0 else nan
    if energy is not None:
        out["energy_joules"] = energy
        out["power_mean"] = energy / horizon if horizon > 0 else nan
    return out


def _column(jobs: pd.DataFrame, name: str, ran: np.ndarray, computed: np.ndarray) -> np.ndarray:
    """Batsim's own column when the table has it for every job that ran, else `computed`."""
    if name in jobs.columns:
        values = jobs[name].to_numpy()[ran]
        if not np.isnan(values).any():
            return values
    return computed


def unavailable_time(run: Run, horizon: float) -> float:
    """U: Batsim's `time_unavailable` when the schedule summary is there, else the
    machine-seconds outside every state of PREFIX_machine_states.csv up to the horizon
    (Batsim counts no column for unavailable machines), else 0."""
    if run.schedule is not None and "time_unavailable" in run.schedule:
        return float(run.schedule["time_unavailable"])
    states = run.machine_states
    if states is None or not len(states) or not run.nb_machines:
        return 0.0
    cols = [c for c in MACHINE_STATE_COLUMNS if c in states.columns]
    times = states["time"].to_numpy(dtype=np.float64)
    missing = run.nb_machines - states[cols].sum(axis=1).to_numpy(dtype=np.float64)
    ends = np.minimum(np.append(times[1:], max(horizon, times[-1])), horizon)
    return float((missing * np.clip(ends - np.minimum(times, horizon), 0, None)).sum())


def run_energy(run: Run, horizon: float) -> float | None:
    """E(T): the platform's energy at the horizon, from the last line of
    PREFIX_consumed_energy.csv at or before T; None when the run had no -E."""
    table = run.consumed_energy
    if table is None:
        return None
    if not len(table):
        return 0.0
    times = table["time"].to_numpy(dtype=np.float64)
    last = int(np.searchsorted(times, horizon, side="right")) - 1
    return float(table["energy"].iloc[last]) if last >= 0 else 0.0


def run_metrics(run: Run, tau: float = BSLD_THRESHOLD) -> dict[str, float]:
    """The metrics of a whole run (computed once per jobs table and tau)."""
    jobs = run.jobs
    key = (id(jobs), tau)
    if key in run._metrics:
        return dict(run._metrics[key])
    horizon = _makespan(jobs)
    run._metrics[key] = job_metrics(jobs, run.nb_machines or 0, horizon=horizon,
                       unavailable=unavailable_time(run, horizon),
                       energy=run_energy(run, horizon),
                       tau=tau, sizes=allocation_sizes(run))
    return dict(run._metrics[key])


def workload_metrics(run: Run, tau: float = BSLD_THRESHOLD) -> pd.DataFrame:
    """One row of metrics per workload (index: workload name), with the run's M, T and U."""
    jobs = run.jobs
    horizon = _makespan(jobs)
    unavailable = unavailable_time(run, horizon)
    with_energy = run.consumed_energy is not None
    sizes = allocation_sizes(run)
    rows: dict[str, dict[str, float]] = {}
    for name, positions in sorted(jobs.groupby("workload_name").indices.items()):
        group = jobs.iloc[positions]
        energy = None
        if with_energy and "consumed_energy" in group.columns:
            energy = float(group["consumed_energy"].clip(lower=0).sum())
        rows[str(name)] = job_metrics(group, run.nb_machines or 0, horizon=horizon,
                                      unavailable=unavailable, energy=energy, tau=tau,
                                      sizes=sizes[positions])
        rows[str(name)]["makespan"] = _makespan(group)
    return pd.DataFrame.from_dict(rows, orient="index")


def _makespan(jobs: pd.DataFrame) -> float:
    finish = jobs["finish_time"].to_numpy(dtype=np.float64)
    finish = finish[~np.isnan(finish)]
    return float(finish.max()) if len(finish) else 0.0


def metrics_table(runs: list[Run]) -> pd.DataFrame:
    """Metrics of several runs side by side: one column per run, one row per metric."""
    table = pd.DataFrame({run.name: run_metrics(run) for run in runs})
    order = [k for k in LABELS if k in table.index]
    return table.loc[order]


def format_value(key: str, value: Any) -> str:
    """How tables print a metric: counts as integers, ratios with 4 digits, times with 2."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key.startswith("nb_"):
        return f"{int(value):,}"
    if key == "utilisation":
        return f"{value:.4f}"
    if key.startswith("bsld") or key == "queue_mean":
        return f"{value:,.3f}"
    return f"{value:,.2f}"
