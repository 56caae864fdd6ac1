"""Quantities over time, as right-continuous step functions (times, levels), and their
time averages over bins (what a plot of a million-job run draws).

A step function here is `(t, y)` with `t` increasing: the level is y[k] on [t[k], t[k+1]) and
0 before t[0].
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batsim_py.analysis.load import MACHINE_STATE_COLUMNS, Run, allocation_sizes

STATE_ORDER = ("nb_computing", "nb_idle", "nb_sleeping", "nb_switching_on", "nb_switching_off",
               "unavailable")


def step_from_events(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The level reached by adding `deltas` at `times` (simultaneous events merged)."""
    if not len(times):
        return np.zeros(0), np.zeros(0)
    t, inverse = np.unique(times, return_inverse=True)
    return t, np.cumsum(np.bincount(inverse, weights=deltas, minlength=len(t)))


def _ran(jobs: pd.DataFrame) -> np.ndarray:
    return ((jobs["final_state"] != "REJECTED").to_numpy()
            & jobs["starting_time"].notna().to_numpy())


def busy_machines(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Machines running a job over time: +n_j at b_j, -n_j at e_j."""
    jobs = run.jobs
    ran = _ran(jobs)
    n = allocation_sizes(run)[ran].astype(np.float64)
    start = jobs["starting_time"].to_numpy()[ran]
    finish = jobs["finish_time"].to_numpy()[ran]
    return step_from_events(np.concatenate([start, finish]), np.concatenate([n, -n]))


def queue_length(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Jobs submitted and not yet started over time: +1 at s_j, -1 at b_j (jobs that ran)."""
    ran = _ran(jobs)
    submit = jobs["submission_time"].to_numpy()[ran]
    start = jobs["starting_time"].to_numpy()[ran]
    ones = np.ones(len(submit))
    return step_from_events(np.concatenate([submit, start]), np.concatenate([ones, -ones]))


def machine_state_levels(run: Run) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """PREFIX_machine_states.csv as step functions per state, with the machines counted in no
    column (unavailable ones: Batsim has no column for them) as "unavailable"."""
    states = run.machine_states
    if states is None or not len(states):
        return np.zeros(0), {}
    t = states["time"].to_numpy(dtype=np.float64)
    levels = {c: states[c].to_numpy(dtype=np.float64) for c in MACHINE_STATE_COLUMNS
              if c in states.columns}
    counted = np.sum(list(levels.values()), axis=0)
    levels["unavailable"] = np.clip((run.nb_machines or 0) - counted, 0, None)
    return t, levels


def integral_at(t: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Integral of the step function (t, y) from -inf to each x."""
    if not len(t):
        return np.zeros(len(x))
    area = np.concatenate([[0.0], np.cumsum(y[:-1] * np.diff(t))])
    k = np.searchsorted(t, x, side="right") - 1
    inside = k >= 0
    out = np.zeros(len(x))
    kk = k[inside]
    out[inside] = area[kk] + y[kk] * (x[inside] - t[kk])
    return out


def bin_average(t: np.ndarray, y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time average of the step function (t, y) over each bin [edges[i], edges[i+1])."""
    return np.diff(integral_at(t, y, edges)) / np.diff(edges)


def power_series(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, power, energy): the platform's mean power between lines of
    PREFIX_consumed_energy.csv (energy difference over time difference) as a step function,
    and its cumulated energy at each line."""
    table = run.consumed_energy
    if table is None or not len(table):
        return np.zeros(0), np.zeros(0), np.zeros(0)
    t = table["time"].to_numpy(dtype=np.float64)
    energy = table["energy"].to_numpy(dtype=np.float64)
    # Several lines at one time: keep the last, the energy after every event of that time.
    last = np.append(t[1:] != t[:-1], True)
    t, energy = np.concatenate([[0.0], t[last]]), np.concatenate([[0.0], energy[last]])
    if t[1] == 0.0:
        t, energy = t[1:], energy[1:]
    dt = np.diff(t)
    power = np.append(np.divide(np.diff(energy), dt, out=np.zeros(len(dt)), where=dt > 0), 0.0)
    return t, power, energy
