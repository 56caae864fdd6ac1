"""Figures of a run (and of several runs side by side), drawn with matplotlib's Agg backend.

Each function returns a `matplotlib.figure.Figure` built without pyplot (no display, no global
state); `save_png(fig, path)` writes it. Large runs stay fast and readable: past
`DETAIL_MAX_JOBS` jobs the Gantt chart is rasterised (each pixel coloured by the share of its
machine-time each category of jobs used), and time series past `DETAIL_MAX_POINTS` steps are
drawn as averages over `BINS` time bins.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from batsim_py.analysis.load import Run
from batsim_py.analysis.metrics import run_metrics
from batsim_py.analysis.series import (
    STATE_ORDER,
    bin_average,
    busy_machines,
    integral_at,
    machine_state_levels,
    power_series,
    queue_length,
)

DETAIL_MAX_JOBS = 5_000
"""Above this many jobs the Gantt chart is an image (one rectangle per job is unreadable)."""
LABEL_MAX_JOBS = 40
"""Up to this many jobs, each rectangle carries its job id."""
DETAIL_MAX_POINTS = 20_000
BINS = 1_000
GANTT_COLUMNS = 1_600
MAX_CATEGORIES = 10

STATE_COLOURS = {
    "COMPLETED_SUCCESSFULLY": "#4c9a2a",
    "COMPLETED_KILLED": "#d62728",
    "COMPLETED_WALLTIME_REACHED": "#ff7f0e",
    "COMPLETED_FAILED": "#8c564b",
}
MACHINE_STATE_COLOURS = {
    "nb_computing": ("computing", "#1f77b4"),
    "nb_idle": ("idle", "#c7c7c7"),
    "nb_sleeping": ("sleeping", "#2ca02c"),
    "nb_switching_on": ("switching on", "#ff7f0e"),
    "nb_switching_off": ("switching off", "#9467bd"),
    "unavailable": ("unavailable", "#d62728"),
}
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def save_png(fig: Figure, path_or_buffer: str | io.BytesIO, dpi: int = 100) -> None:
    fig.savefig(path_or_buffer, format="png", dpi=dpi)


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    buffer = io.BytesIO()
    save_png(fig, buffer, dpi)
    return buffer.getvalue()


# ------------------------------------------------------------------------------------- Gantt
def _categories(run: Run, colour_by: str) -> tuple[np.ndarray, list[str], list[str]]:
    """Category index of each job, category names, colours."""
    if colour_by == "state":
        column = run.jobs["final_state"]
    elif colour_by == "workload":
        column = run.jobs["workload_name"]
    else:
        raise ValueError(f"colour_by must be 'state' or 'workload', not {colour_by!r}")
    codes, names = column.factorize(sort=True)
    names = [str(n) for n in names]
    if len(names) > MAX_CATEGORIES:  # the largest categories keep a colour
        counts = np.bincount(codes, minlength=len(names))
        keep = sorted(np.argsort(-counts, kind="stable")[: MAX_CATEGORIES - 1])
        remap = np.full(len(names), MAX_CATEGORIES - 1)
        remap[keep] = np.arange(len(keep))
        codes = remap[codes]
        names = [names[k] for k in keep] + ["other"]
    if colour_by == "state":
        colours = [STATE_COLOURS.get(n, PALETTE[i % len(PALETTE)]) for i, n in enumerate(names)]
    else:
        colours = [PALETTE[i % len(PALETTE)] for i in range(len(names))]
    return codes, names, colours


def gantt(run: Run, colour_by: str | None = None, max_detail: int = DETAIL_MAX_JOBS) -> Figure:
    """Jobs on machines over time, coloured by final state or by workload (default: workload
    when there are several, else state)."""
    jobs = run.jobs
    if colour_by is None:
        colour_by = "workload" if jobs["workload_name"].nunique() > 1 else "state"
    codes, names, colours = _categories(run, colour_by)
    rows, lo, hi = run.allocation_ranges()
    start = jobs["starting_time"].to_numpy(dtype=np.float64)[rows]
    finish = jobs["finish_time"].to_numpy(dtype=np.float64)[rows]
    cat = codes[rows]
    nb_machines = max(run.nb_machines or 0, int(hi.max()) + 1 if len(hi) else 1)
    end = float(np.nanmax(finish)) if len(finish) else 1.0
    end = end if end > 0 else 1.0
    fig = Figure(figsize=(11, 5.5), layout="constrained")
    ax = fig.add_subplot()
    nb_jobs = len(jobs)
    if nb_jobs <= max_detail:
        verts = np.stack([
            np.column_stack([start, lo - 0.5]), np.column_stack([finish, lo - 0.5]),
            np.column_stack([finish, hi + 0.5]), np.column_stack([start, hi + 0.5]),
        ], axis=1)
        # Neighbouring jobs of one colour are told apart by three shades of it.
        base = np.array([to_rgb(c) for c in colours])[cat]
        shade = np.array([0.0, 0.3, 0.5])[rows % 3][:, None]
        face = base + (1 - base) * shade
        edge = "black" if nb_jobs <= 500 else "none"
        ax.add_collection(PolyCollection(verts, facecolors=face, edgecolors=edge,
                                         linewidths=0.4))
        if nb_jobs <= LABEL_MAX_JOBS:  # ids on rectangles wide and tall enough for them
            ids = jobs["job_id"].to_numpy()[rows]
            for s, f, a, b, text in zip(start, finish, lo, hi, ids, strict=True):
                if (f - s) >= end * 0.04 * max(1, len(str(text)) / 4) and (
                        b - a + 1) >= nb_machines * 0.04:
                    ax.text((s + f) / 2, (a + b) / 2, str(text), ha="center", va="center",
                            fontsize=8, clip_on=True)
        ax.set_xlim(0, end)
        mode = f"{nb_jobs:,} jobs"
    else:
        image = _gantt_image(start, finish, lo, hi, cat, colours, nb_machines, end)
        ax.imshow(image, aspect="auto", origin="lower", interpolation="nearest",
                  extent=(0, end, -0.5, nb_machines - 0.5))
        mode = f"{nb_jobs:,} jobs; shade: share of each pixel's machine-time used"
    ax.set_ylim(-0.5, nb_machines - 0.5)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("machine")
    ax.set_title(f"{run.name}: jobs on machines ({mode})")
    ax.legend(handles=[Patch(color=c, label=n) for n, c in zip(names, colours, strict=True)],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
              title="workload" if colour_by == "workload" else "final state")
    return fig


def _gantt_image(start: np.ndarray, finish: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 cat: np.ndarray, colours: list[str], nb_machines: int, end: float) -> np.ndarray:
    """RGB image (machines x time columns): white mixed with each category's colour in
    proportion to the machine-time it used in the pixel."""
    width = GANTT_COLUMNS
    group = max(1, math.ceil(nb_machines / 1024))  # machines per image row
    height = math.ceil(nb_machines / group)
    scale = width / end
    x0, x1 = start * scale, finish * scale
    b0 = np.clip(np.floor(x0).astype(np.int64), 0, width - 1)
    b1 = np.clip(np.floor(x1).astype(np.int64), 0, width - 1)
    r0, r1 = lo // group, hi // group + 1
    weight = (hi - lo + 1) / ((r1 - r0) * group)  # share of the rows' machines covered
    covers = []
    for c, colour in enumerate(colours):
        mask = cat == c
        if mask.any():
            covers.append((_coverage(x0[mask], x1[mask], b0[mask], b1[mask], r0[mask],
                                     r1[mask], weight[mask], height, width), colour))
    # Shared machines (--enable-compute-sharing) can be covered more than once: scale down.
    total = np.maximum(1.0, sum((np.clip(cover, 0, None) for cover, _ in covers),
                                np.zeros((height, width))))
    image = np.ones((height, width, 3))
    for cover, colour in covers:
        share = np.clip(cover, 0, None) / total
        image -= share[:, :, None] * (1 - np.array(to_rgb(colour)))
    return np.clip(image, 0, 1)


def _coverage(x0: np.ndarray, x1: np.ndarray, b0: np.ndarray, b1: np.ndarray, r0: np.ndarray,
              r1: np.ndarray, weight: np.ndarray, height: int, width: int) -> np.ndarray:
    """Share of each pixel covered by the rectangles [x0, x1) x [r0, r1) (weighted): whole
    columns through a 2-D difference array, the partial first and last columns added apart."""
    diff = np.zeros((height + 1, width + 1))
    full0, full1 = b0 + 1, b1  # whole columns b0+1 .. b1-1
    has_full = full1 > full0
    for rr, sign_r in ((r0, 1.0), (r1, -1.0)):
        np.add.at(diff, (rr[has_full], full0[has_full]), sign_r * weight[has_full])
        np.add.at(diff, (rr[has_full], full1[has_full]), -sign_r * weight[has_full])
    same = b0 == b1
    first = np.where(same, x1 - x0, b0 + 1 - x0) * weight
    last = np.where(same, 0.0, x1 - b1) * weight
    edge = np.zeros((height + 1, width + 1))
    for cols, part in ((b0, first), (b1, last)):
        np.add.at(edge, (r0, cols), part)
        np.add.at(edge, (r1, cols), -part)
    cover = np.cumsum(np.cumsum(diff, axis=0), axis=1) + np.cumsum(edge, axis=0)
    return cover[:height, :width]


# -------------------------------------------------------------------------------- time series
def _draw_step(ax, t: np.ndarray, y: np.ndarray, end: float, label: str, colour: str,
               fill: bool = True) -> str:
    """Draw a step function exactly, or its bin averages when it has too many steps; return a
    note saying which."""
    if not len(t):
        return ""
    if len(t) <= DETAIL_MAX_POINTS:
        x, v, note = np.append(t, max(end, t[-1])), np.append(y, y[-1]), ""
    else:
        x = np.linspace(0.0, max(end, t[-1]), BINS + 1)
        v = np.append(bin_average(t, y, x), 0.0)
        note = f" (averages over {BINS:,} time bins)"
    ax.step(x, v, where="post", color=colour, linewidth=0.9, label=label)
    if fill:
        ax.fill_between(x, v, step="post", color=colour, alpha=0.25, linewidth=0)
    return note


def utilisation_queue(run: Run) -> Figure:
    """Busy machines (with the machine count) and queue length over time."""
    metrics = run_metrics(run)
    end = metrics["makespan"] or 1.0
    fig = Figure(figsize=(11, 6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    t, busy = busy_machines(run)
    note = _draw_step(top, t, busy, end, "machines computing", "#1f77b4")
    top.axhline(run.nb_machines or 0, color="black", linewidth=0.8, linestyle="--",
                label=f"{run.nb_machines} machines")
    top.set_ylabel("machines computing")
    top.set_ylim(0, (run.nb_machines or 1) * 1.08)
    top.set_title(f"{run.name}: utilisation {metrics['utilisation']:.3f}{note}")
    top.legend(loc="upper right", fontsize=8)
    tq, queue = queue_length(run.jobs)
    note = _draw_step(bottom, tq, queue, end, "jobs waiting", "#ff7f0e")
    bottom.set_ylabel("jobs waiting")
    bottom.set_xlabel("time (s)")
    bottom.set_title(f"queue length, mean {metrics['queue_mean']:.2f} jobs{note}")
    bottom.set_xlim(0, end)
    bottom.set_ylim(bottom=0)
    return fig


def machine_states(run: Run) -> Figure | None:
    """Machines in each state over time, stacked (None without PREFIX_machine_states.csv)."""
    t, levels = machine_state_levels(run)
    if not len(t):
        return None
    end = max(float(t[-1]), run_metrics(run)["makespan"])
    if len(t) <= DETAIL_MAX_POINTS:
        x = np.append(t, end)
        stack = {k: np.append(v, v[-1]) for k, v in levels.items()}
        note = ""
    else:
        x = np.linspace(float(t[0]), end, BINS + 1)
        stack = {k: np.append(bin_average(t, v, x), 0.0) for k, v in levels.items()}
        note = f" (averages over {BINS:,} time bins)"
    fig = Figure(figsize=(11, 4), layout="constrained")
    ax = fig.add_subplot()
    base = np.zeros(len(x))
    for key in STATE_ORDER:
        if key not in stack or not stack[key].any():
            continue
        label, colour = MACHINE_STATE_COLOURS[key]
        ax.fill_between(x, base, base + stack[key], step="post", color=colour, label=label,
                        linewidth=0)
        base = base + stack[key]
    ax.set_xlim(x[0] if x[0] > 0 and len(t) > DETAIL_MAX_POINTS else 0, end)
    ax.set_ylim(0, (run.nb_machines or 1) * 1.02)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("machines")
    ax.set_title(f"{run.name}: machine states{note}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return fig


def power_energy(run: Run) -> Figure | None:
    """Platform power and cumulated energy over time (None without -E)."""
    t, power, energy = power_series(run)
    if len(t) < 2:
        return None
    end = float(t[-1])
    fig = Figure(figsize=(11, 6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    note = _draw_step(top, t, power, end, "power", "#d62728")
    top.set_ylabel("power (W)")
    top.set_ylim(bottom=0)
    mean_power = energy[-1] / end if end > 0 else 0.0
    top.set_title(f"{run.name}: platform power, mean {mean_power:,.1f} W until the last "
                  f"energy event{note}")
    if len(t) > DETAIL_MAX_POINTS:
        x = np.linspace(0.0, end, BINS + 1)
        y = np.interp(x, t, energy)
    else:
        x, y = t, energy
    bottom.plot(x, y, color="#2ca02c")
    bottom.set_ylabel("energy (J)")
    bottom.set_xlabel("time (s)")
    bottom.set_title(f"cumulated energy: {energy[-1]:,.0f} J")
    bottom.set_xlim(0, end)
    bottom.set_ylim(bottom=0)
    return fig


# -------------------------------------------------------------------------------- comparison
def _ran_values(run: Run, what: str) -> np.ndarray:
    jobs = run.jobs
    ran = ((jobs["final_state"] != "REJECTED") & jobs["starting_time"].notna()).to_numpy()
    start = jobs["starting_time"].to_numpy()[ran]
    submit = jobs["submission_time"].to_numpy()[ran]
    wait = start - submit
    if what == "waiting":
        return wait
    execution = jobs["execution_time"].to_numpy()[ran]
    turnaround = jobs["finish_time"].to_numpy()[ran] - submit
    from batsim_py.analysis.metrics import BSLD_THRESHOLD

    return np.maximum(1.0, turnaround / np.maximum(execution, BSLD_THRESHOLD))


def _ecdf(ax, runs: Sequence[Run], what: str, xlabel: str, log: bool) -> None:
    probs = np.linspace(0, 1, 1001)
    for i, run in enumerate(runs):
        values = _ran_values(run, what)
        if not len(values):
            continue
        q = np.quantile(values, probs) if len(values) > len(probs) else np.sort(values)
        p = probs if len(values) > len(probs) else np.arange(1, len(q) + 1) / len(q)
        ax.step(q, p, where="post", color=PALETTE[i % len(PALETTE)], label=run.name)
    if log:
        ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def comparison(runs: Sequence[Run]) -> Figure:
    """Several runs side by side: distributions of waiting time and bounded slowdown, bars of
    utilisation and mean waiting time, machines computing over time."""
    metrics = [run_metrics(run) for run in runs]
    names = [run.name for run in runs]
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(runs))]
    fig = Figure(figsize=(12, 11), layout="constrained")
    grid = fig.add_gridspec(3, 2)
    _ecdf(fig.add_subplot(grid[0, 0]), runs, "waiting", "waiting time (s, symlog)", True)
    _ecdf(fig.add_subplot(grid[0, 1]), runs, "bsld", "bounded slowdown (tau 10 s, log)", True)
    for col, (key, title) in enumerate((("utilisation", "utilisation"),
                                        ("waiting_mean", "mean waiting time (s)"))):
        ax = fig.add_subplot(grid[1, col])
        values = [m[key] for m in metrics]
        bars = ax.bar(range(len(runs)), values, color=colours)
        ax.bar_label(bars, labels=[f"{v:.3f}" if key == "utilisation" else f"{v:,.1f}"
                                   for v in values], fontsize=8)
        ax.set_xticks(range(len(runs)), names, rotation=15, fontsize=8)
        ax.set_title(title)
        if key == "utilisation":
            ax.set_ylim(0, 1.1)
    ax = fig.add_subplot(grid[2, :])
    end = max(m["makespan"] for m in metrics) or 1.0

    def _makespan_of(run: Run) -> float:
        return metrics[runs.index(run)]["makespan"]

    x = np.linspace(0.0, end, BINS + 1)
    for run, colour in zip(runs, colours, strict=True):
        t, busy = busy_machines(run)
        share = bin_average(t, busy, x) / (run.nb_machines or 1)
        share[x[:-1] >= _makespan_of(run)] = np.nan  # the run is over: no line
        ax.step(x, np.append(share, 0.0), where="post", color=colour, label=run.name,
                linewidth=0.9)
    ax.set_xlim(0, end)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("share of machines computing")
    ax.set_title(f"utilisation over time (averages over {BINS:,} time bins)")
    ax.legend(fontsize=8)
    fig.suptitle("comparison: " + " vs ".join(names))
    return fig


__all__ = ["comparison", "gantt", "integral_at", "machine_states", "png_bytes",
           "power_energy", "save_png", "utilisation_queue"]
