"""The shipped scenario (workloads/grid3/grid.json, docs/cigri.md): with CiGri the grid is
busier, the local jobs wait longer by no more than the kill delays, every task completes
exactly once, and a run takes less than a minute."""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.grid.metrics import campaign_window, grid_metrics, local_horizon
from batsim_py.grid.run import run_grid

GRID = str(Path(__file__).resolve().parents[2] / "workloads" / "grid3" / "grid.json")


@pytest.mark.slow
def test_scenario_harvests_without_hurting_local_jobs():
    run = run_grid(GRID)
    base = run_grid(GRID, with_cigri=False)
    assert run.wall < 60
    horizon, window = local_horizon(base), campaign_window(run)
    a, b = grid_metrics(run, horizon, window), grid_metrics(base, horizon, window)
    assert a["utilisation"] > b["utilisation"]
    assert a["window_utilisation"] > b["window_utilisation"] + 0.1
    kill_delay = max(c.kill_delay for c in run.rjms.clusters.values())
    assert a["local_max_kill_wait"] <= kill_delay
    increase = a["local_mean_waiting_time"] - b["local_mean_waiting_time"]
    assert 0 <= increase <= kill_delay
    assert all(t.state == "done" for t in run.cigri.tasks)
    done = [j.task.id for j in run.cigri.jobs if j.state == "terminated"]
    assert len(done) == len(set(done)) == len(run.cigri.tasks)
    spans = a["campaign_makespans"]
    assert set(spans) == {"A", "B", "C"} and all(s > 0 for s in spans.values())
