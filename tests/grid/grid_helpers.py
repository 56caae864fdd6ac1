"""Small grids written to a temporary folder for the grid tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from batsim_py.grid.platform import grid_platform_xml


def local_workload(path: Path, jobs: list[tuple[float, int, float, float]], nb_res: int) -> str:
    """A Batsim workload of delay jobs (subtime, res, runtime, walltime)."""
    profiles = {}
    objs = []
    for i, (sub, res, run, wall) in enumerate(jobs):
        name = f"d{run:g}"
        profiles[name] = {"type": "delay", "delay": run}
        objs.append({"id": str(i), "subtime": sub, "res": res, "walltime": wall,
                     "profile": name})
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": objs, "profiles": profiles}))
    return path.name


def make_grid(tmp: Path, clusters: list[tuple[str, int]], campaigns: list[dict[str, Any]],
              local: dict[str, list[tuple[float, int, float, float]]] | None = None,
              cluster_settings: dict[str, dict[str, Any]] | None = None,
              **fields: Any) -> str:
    """Write a grid (platform, local workloads, grid file); the grid file's path."""
    (tmp / "grid.xml").write_text(grid_platform_xml([(n, k, "1Gf", 1) for n, k in clusters]))
    desc: dict[str, Any] = {}
    for name, size in clusters:
        obj = dict((cluster_settings or {}).get(name, {}))
        if local and name in local:
            obj["workload"] = local_workload(tmp / f"local_{name}.json", local[name], size)
        desc[name] = obj
    grid = {"platform": "grid.xml", "clusters": desc, "campaigns": campaigns, **fields}
    path = tmp / "grid.json"
    path.write_text(json.dumps(grid))
    return str(path)


def submissions(run: Any, cluster: str | None = None) -> list[tuple[float, int]]:
    """(date, number of jobs) of each submission of CiGri's runners, in order."""
    counts: dict[tuple[float, str], int] = {}
    for j in run.cigri.jobs:
        if cluster is None or j.cluster == cluster:
            key = (j.submission_time, j.cluster)
            counts[key] = counts.get(key, 0) + 1
    return [(t, n) for (t, _), n in sorted(counts.items())]
