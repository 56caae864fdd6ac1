"""Plots of a grid run: the utilisation split local / CiGri / idle over time, and the taps.

Read from the output files (`PREFIX_grid_usage.csv`, `PREFIX_cigri_taps.csv`), so they plot
any saved run; `batsim-py cigri ... --png DIR` writes them as PNG files.
"""

from __future__ import annotations

from typing import Any

from batsim_py.errors import AnalysisError


def _read(path: str) -> Any:
    import pandas as pd

    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file (run batsim-py cigri with -e first)") from None


def usage_figure(prefix: str) -> Any:
    """The grid's machines over time: used by local jobs, by CiGri, idle (whole grid)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    usage = _read(f"{prefix}_grid_usage.csv")
    grid = usage.groupby("time")[["max", "used", "used_by_cigri"]].sum()
    local = grid["used"] - grid["used_by_cigri"]
    idle = grid["max"] - grid["used"]
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.stackplot(grid.index, local, grid["used_by_cigri"], idle,
                 labels=["local jobs", "CiGri", "idle"], colors=["#4c72b0", "#dd8452", "#dddddd"],
                 step="post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("machines")
    ax.set_title("Grid usage (updator's 60 s snapshots)")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    return fig


def taps_figure(prefix: str) -> Any:
    """Each (cluster, campaign) tap's rate over time (or the other controls' job counts)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    taps = _read(f"{prefix}_cigri_taps.csv")
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for (cluster, campaign), rows in taps.groupby(["cluster", "campaign"], sort=True):
        ax.step(rows["time"], rows["rate"], where="post", label=f"{campaign} on {cluster}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("jobs per runner cycle")
    ax.set_title("Taps (rate per cluster and campaign)")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    return fig


def write_pngs(prefix: str, folder: str) -> list[str]:
    import os

    import matplotlib.pyplot as plt

    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, make in (("grid_usage", usage_figure), ("cigri_taps", taps_figure)):
        fig = make(prefix)
        path = os.path.join(folder, f"{name}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths
