"""Issue 21: mapped ptasks with more executors than cores, unequal flops, one transfer, and
Batsim's master messages on the shared loopback, simulated live with a filler scheduler that
places jobs with a mapping. Real Batsim spins on many of them (SimGrid's fair-bottleneck rounds
never end); batsim-py must end every one, in bounded time, with complete outputs."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from fuzz.fuzzlib import time_limit  # (Hang: the kernel spins)
from ptask_family import FillerWithMapping, generate

from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

SECONDS = 30.0  # per case; they take well under a second




def _simulate(seed: int, tmp_path: Path, energy: bool) -> None:
    case = generate(seed)
    platform, workload = case.write(tmp_path)
    prefix = tmp_path / "out"
    with time_limit(SECONDS):
        run_simulation(RunSpec(str(platform), [str(workload)],
                               Options(export_prefix=str(prefix), energy=energy)),
                       FillerWithMapping(case))
    with open(f"{prefix}_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["job_id"] for r in rows) == sorted(j["id"] for j in case.workload["jobs"])
    for r in rows:
        assert r["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED")
        start, finish = float(r["starting_time"]), float(r["finish_time"])
        assert math.isfinite(finish) and 0.0 <= start <= finish
        if energy:
            joules = float(r["consumed_energy"])
            assert math.isfinite(joules) and joules >= 0.0
    for name in ("schedule", "machine_states"):
        assert Path(f"{prefix}_{name}.csv").read_text().count("\n") >= 2
    if energy:
        assert Path(f"{prefix}_consumed_energy.csv").read_text().count("\n") >= 2


@pytest.mark.parametrize("seed", range(25))
def test_the_family_terminates_with_complete_outputs(seed: int, tmp_path: Path) -> None:
    _simulate(seed, tmp_path, energy=seed % 2 == 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(25, 300))
def test_the_family_terminates_many_seeds(seed: int, tmp_path: Path) -> None:
    _simulate(seed, tmp_path, energy=seed % 2 == 1)


def test_the_generated_family_is_the_hard_one() -> None:
    """Every case crowds more executors than cores on a host and has one transfer."""
    from ptask_family import crowded_mapping

    for seed in range(25):
        case = generate(seed)
        for job in case.workload["jobs"]:
            profile = case.workload["profiles"][job["profile"]]
            n = len(profile["cpu"])
            assert n >= 3 and len(set(profile["cpu"])) > 1
            assert sum(1 for b in profile["com"] if b > 0) == 1
            alloc = list(range(case.machines[job["id"]]))
            mapping = crowded_mapping(n, alloc, case.cores)
            assert mapping.count(0) > case.cores[alloc[0]]
