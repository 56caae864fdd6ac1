"""Every plot type rendered to PNG and checked to show something (drawn artists, distinct
colours, share of non-white pixels), at 10 jobs and at 100,000 jobs."""

from __future__ import annotations

import io
import time

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.image import AxesImage, imread

from batsim_py.analysis import Run, load_run, plots


def _png(fig) -> np.ndarray:
    data = plots.png_bytes(fig)
    assert len(data) > 10_000  # an empty 1100x550 figure is ~5 kB
    return imread(io.BytesIO(data))[:, :, :3]


def _colours(image: np.ndarray) -> int:
    return len(np.unique((image * 255).astype(np.uint8).reshape(-1, 3), axis=0))


def _inked(image: np.ndarray) -> float:
    """Share of pixels that are not white."""
    return float((image.min(axis=2) < 0.95).mean())


def synthetic_run(nb_jobs: int, nb_machines: int = 64, seed: int = 1) -> Run:
    """Jobs of random sizes and durations packed one after the other on random machines
    (overlaps do not matter to a drawing)."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 9, nb_jobs)
    first = rng.integers(0, nb_machines - 8, nb_jobs)
    submit = np.sort(rng.uniform(0, nb_jobs * 10.0, nb_jobs))
    start = submit + rng.exponential(50, nb_jobs)
    duration = rng.uniform(10, 500, nb_jobs)
    states = rng.choice(["COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED",
                         "COMPLETED_WALLTIME_REACHED"], nb_jobs, p=[0.8, 0.1, 0.1])
    jobs = pd.DataFrame({
        "job_id": [str(i) for i in range(nb_jobs)],
        "workload_name": np.where(np.arange(nb_jobs) % 3 == 0, "w1", "w0"),
        "submission_time": submit, "final_state": states, "starting_time": start,
        "execution_time": duration, "finish_time": start + duration,
        "allocated_resources": [f"{a}-{a + n - 1}" if n > 1 else str(a)
                                for a, n in zip(first, size, strict=True)],
    })
    return Run("synthetic", jobs, nb_machines=nb_machines)


def test_gantt_ten_jobs_one_rectangle_per_job() -> None:
    run = synthetic_run(10)
    fig = plots.gantt(run, colour_by="state")
    (collection,) = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    assert len(collection.get_paths()) == 10
    image = _png(fig)
    assert _colours(image) > 20 and _inked(image) > 0.05


def test_gantt_hundred_thousand_jobs_is_rasterised_and_fast() -> None:
    run = synthetic_run(100_000, nb_machines=128)
    t = time.process_time()  # CPU seconds: other tests and processes share the cores
    fig = plots.gantt(run)  # two workloads: coloured by workload
    image = _png(fig)
    assert time.process_time() - t < 20
    (raster,) = [a for a in fig.axes[0].get_images() if isinstance(a, AxesImage)]
    pixels = raster.get_array()
    assert pixels.shape[0] == 128
    assert _colours(np.asarray(pixels)) > 50  # shares of two colours mixed with white
    assert _inked(image) > 0.3


def test_gantt_raster_keeps_machine_time() -> None:
    """The image's coverage adds up to the machine-seconds the jobs used."""
    run = synthetic_run(2_000, nb_machines=64)
    rows, lo, hi = run.allocation_ranges()
    jobs = run.jobs
    start = jobs["starting_time"].to_numpy()[rows]
    finish = jobs["finish_time"].to_numpy()[rows]
    end = float(finish.max())
    width = plots.GANTT_COLUMNS
    scale = width / end
    x0, x1 = start * scale, finish * scale
    b0 = np.clip(np.floor(x0).astype(np.int64), 0, width - 1)
    b1 = np.clip(np.floor(x1).astype(np.int64), 0, width - 1)
    cover = plots._coverage(x0, x1, b0, b1, lo, hi + 1, np.ones(len(lo)), 64, width)
    used = float(((hi - lo + 1) * (finish - start)).sum())
    assert cover.sum() / scale == pytest.approx(used, rel=1e-9)


def test_utilisation_queue_and_machine_states(four_jobs: str) -> None:
    run = load_run(four_jobs)
    fig = plots.utilisation_queue(run)
    top, bottom = fig.axes
    assert len(top.lines) >= 2 and len(bottom.lines) >= 1
    assert max(top.lines[0].get_ydata()) == 4  # j2 on all 4 machines
    assert max(bottom.lines[0].get_ydata()) == 3  # j2, j3, j4 wait together at 30-100
    image = _png(fig)
    assert _colours(image) > 20 and _inked(image) > 0.05
    fig = plots.machine_states(run)
    assert fig is not None
    assert len(fig.axes[0].collections) >= 2  # computing and idle bands
    assert _inked(_png(fig)) > 0.2


def test_power_energy(four_jobs_energy: str) -> None:
    run = load_run(four_jobs_energy)
    fig = plots.power_energy(run)
    assert fig is not None
    top, bottom = fig.axes
    assert max(top.lines[0].get_ydata()) == pytest.approx(8 * 95)
    # 8 machines: no job waits, the last ends at 100; delay jobs leave the hosts idle at 95 W
    assert bottom.lines[0].get_ydata()[-1] == pytest.approx(8 * 95 * 100)
    assert _inked(_png(fig)) > 0.1


def test_no_energy_no_machine_states_give_none() -> None:
    run = synthetic_run(10)
    assert plots.power_energy(run) is None
    assert plots.machine_states(run) is None


def test_comparison(four_jobs: str, four_jobs_easy: str) -> None:
    easy = load_run(four_jobs_easy, "easy")
    fcfs = load_run(four_jobs, "fcfs")
    fig = plots.comparison([fcfs, easy])
    assert len(fig.axes) == 5
    ecdf = fig.axes[0]
    assert len(ecdf.lines) == 2  # one waiting-time distribution per run
    image = _png(fig)
    assert _colours(image) > 20 and _inked(image) > 0.1


def test_gantt_rejects_unknown_colouring() -> None:
    with pytest.raises(ValueError, match="colour_by"):
        plots.gantt(synthetic_run(3), colour_by="size")
