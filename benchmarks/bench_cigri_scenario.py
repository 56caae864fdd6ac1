"""Time the CiGri scenario (workloads/grid3/grid.json, docs/cigri.md): the grid run with
CiGri and its baseline without, and print their figures.

    python benchmarks/bench_cigri_scenario.py [--repeat N]

The issue asks for < 1 min per run; the figures quoted in docs/cigri.md come from this
script (a run's `wall_seconds` is the simulation's wall-clock time, input reading included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    from batsim_py.grid.metrics import campaign_window, grid_metrics, local_horizon
    from batsim_py.grid.run import run_grid
    from batsim_py.native import kernel_label

    print(kernel_label())
    grid = str(ROOT / "workloads" / "grid3" / "grid.json")
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run = run_grid(grid)
        walls.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    base = run_grid(grid, with_cigri=False)
    base_wall = time.perf_counter() - t0
    print(f"with CiGri: {statistics.median(walls):.2f} s (median of {len(walls)}), "
          f"{len(run.cigri.jobs)} CiGri jobs, {len(run.rjms.local_jobs)} local jobs")
    print(f"without CiGri: {base_wall:.2f} s")
    horizon, window = local_horizon(base), campaign_window(run)
    a, b = grid_metrics(run, horizon, window), grid_metrics(base, horizon, window)
    for key in ("utilisation", "window_utilisation", "local_mean_waiting_time",
                "local_max_kill_wait", "local_jobs_that_killed", "besteffort_kills",
                "remote_waiting_frags", "wasted_work", "useful_work"):
        print(f"{key:28s} {a.get(key, ''):>14} {b.get(key, ''):>14}")
    print("makespans:", a["campaign_makespans"])


if __name__ == "__main__":
    main()
