"""The shipped Flux clients against the Batsim-protocol `fcfs` and `easy` on shared delay
workloads (issue 17's last "Must show"; docs/flux.md "How it compares" states these facts).

One-node jobs on a homogeneous cluster under heavy load (the first 200 jobs of the shipped
1k workload, on 8 of cluster128's hosts): `fifo` and `fcfs` take the same decisions, so the
jobs.csv files are identical; `easy` gives the same times for every job, and only some
backfilled jobs get another machine (pybatsim's easyBackfill, which `easy` reproduces, carves
them from free ranges split at the head's reservation; the Flux pool takes the lowest free rank).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from raw_client import read_csv

from batsim_py.cli import main

PROJECT = Path(__file__).resolve().parents[2]
COLUMNS = ["job_id", "submission_time", "starting_time", "finish_time", "final_state"]


def _one_node_workload(tmp: Path, squeeze: float = 20) -> Path:
    """200 one-node jobs, submitted `squeeze` times faster than in the 1k workload."""
    work = json.loads((PROJECT / "workloads" / "gen_delay_1k_128.json").read_text())
    work["jobs"] = [dict(j, res=1, subtime=j["subtime"] / squeeze) for j in work["jobs"][:200]]
    work["nb_res"] = 8
    path = tmp / "one_node.json"
    path.write_text(json.dumps(work))
    return path


def _run(tmp: Path, workload: Path, name: str, *how: str) -> list[dict[str, str]]:
    code = main(["-p", str(PROJECT / "platforms" / "cluster128.xml"), "--mmax", "8",
                 "-w", str(workload), "-e", str(tmp / name), "-q", *how])
    assert code == 0
    return read_csv(tmp / f"{name}_jobs.csv")


def test_fifo_equals_fcfs(tmp_path):
    workload = _one_node_workload(tmp_path)
    batsim = _run(tmp_path, workload, "fcfs", "--scheduler", "fcfs")
    flux = _run(tmp_path, workload, "fifo", "--protocol", "flux", "--flux-scheduler", "fifo")
    assert flux == batsim
    assert sum(float(j["waiting_time"]) > 1 for j in flux) > 100  # a real queue formed


@pytest.mark.parametrize("squeeze", [1, 20])
def test_easy_equals_easy_but_backfilled_machines(tmp_path, squeeze):
    workload = _one_node_workload(tmp_path, squeeze)
    batsim = _run(tmp_path, workload, "easy_b", "--scheduler", "easy")
    flux = _run(tmp_path, workload, "easy_f", "--protocol", "flux", "--flux-scheduler", "easy")
    assert [[j[c] for c in COLUMNS] for j in flux] == [[j[c] for c in COLUMNS] for j in batsim]
    # Which machine a job gets may differ: pybatsim's free ranges carve some jobs from their
    # high end (side flags left by merges and backfilling, schedulers/freespace.py), the
    # Flux pool always takes the lowest free rank. Both use one machine per job.
    for b, f in zip(batsim, flux, strict=True):
        assert len(b["allocated_resources"].split()) == len(f["allocated_resources"].split())
