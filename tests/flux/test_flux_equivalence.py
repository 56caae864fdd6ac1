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


def _small_run(tmp: Path, name: str, workload: dict, platform_xml: str, *how: str):
    (tmp / f"{name}.xml").write_text(platform_xml)
    (tmp / f"{name}.json").write_text(json.dumps(workload))
    code = main(["-p", str(tmp / f"{name}.xml"), "-w", str(tmp / f"{name}.json"), "-e",
                 str(tmp / name), "-q", "--timing", "ideal", *how])
    assert code == 0
    return {j["job_id"]: j for j in read_csv(tmp / f"{name}_jobs.csv")}


def test_fifo_takes_any_free_nodes_fcfs_consecutive_ones(tmp_path):
    """Hand-computed: A, B, C take nodes 0, 1, 2 at t=0; D (2 nodes) comes at t=1. When B
    ends at t=10, nodes 1 and 3 are free: fifo starts D there, fcfs waits for two
    consecutive ids (t=100, nodes 0-1)."""
    from raw_client import delays, platform

    work = delays((0, 1, 100), (0, 1, 10), (0, 1, 100), (1, 2, 10))
    fcfs = _small_run(tmp_path, "fcfs", work, platform(4), "--scheduler", "fcfs")
    fifo = _small_run(tmp_path, "fifo", work, platform(4), "--protocol", "flux",
                      "--flux-scheduler", "fifo")
    assert (fcfs["4"]["starting_time"], fcfs["4"]["allocated_resources"]) == ("100.000000",
                                                                              "0-1")
    assert (fifo["4"]["starting_time"], fifo["4"]["allocated_resources"]) == ("10.000000",
                                                                              "1 3")


def test_worst_fit_takes_the_host_with_most_cores_first(tmp_path):
    """small4's node3 has 2 cores, the others 1: a lone one-node job goes there under Flux's
    worst-fit, on node0 under fcfs."""
    small4 = (PROJECT / "platforms" / "small4.xml").read_text()
    work = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 5}}}
    fcfs = _small_run(tmp_path, "fcfs", work, small4, "--scheduler", "fcfs")
    fifo = _small_run(tmp_path, "fifo", work, small4, "--protocol", "flux",
                      "--flux-scheduler", "fifo")
    assert (fcfs["1"]["allocated_resources"], fifo["1"]["allocated_resources"]) == ("0", "3")
