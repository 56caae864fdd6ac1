"""What a run keeps: ended jobs leave no run record, and no job leaves reference cycles.

Both keep a million-job run within its memory and time (benchmarks/bench_million.py): a run
record per ended job, or a cycle per job for the collector to find, is what they used to cost.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from batsim_py.decision.inprocess import InProcess
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scheduler", ["fcfs", "easy"])
@pytest.mark.parametrize("workload", ["delays_small.json", "gen_delay_1k_128.json"])
def test_ended_jobs_are_dropped_and_no_cycles_are_left(
    tmp_path: Path, scheduler: str, workload: str
) -> None:
    platform = "small4.xml" if workload == "delays_small.json" else "cluster128.xml"
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()  # whatever the run leaves in cycles stays for the count below
    try:
        sim = run_simulation(
            RunSpec(str(PROJECT / "platforms" / platform), [str(PROJECT / "workloads" / workload)],
                    Options(export_prefix=str(tmp_path / "out"))),
            InProcess(get_scheduler(scheduler)),
        )
        unreachable = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    nb_jobs = len(sim.job_records)
    assert nb_jobs > 0
    assert sim.runs == {}  # every job ended and was reported: no run record is kept
    assert len(sim.ended) == nb_jobs
    # A few cycles may come from the run's set-up (platform, scheduler); none per job.
    assert unreachable < 200, f"{unreachable} objects in reference cycles for {nb_jobs} jobs"
