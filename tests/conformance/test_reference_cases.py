"""The reference runs of real Batsim 4.2.1, reproduced with the equivalent in-process scheduler.

Every column of jobs.csv and schedule.csv (but the two wall-clock ones) and every row of
machine_states.csv must be identical to what Batsim printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batsim_py.decision.inprocess import InProcess
from batsim_py.output.compare import compare
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"

PYBATSIM_EQUIVALENT = {
    "schedFcfs": "fcfs",
    "easyBackfill": "easy",
    "schedEasySjfBackfill": "easy_sjf",
}

FAST = [
    "a_delays_fcfs_small",
    "a2_paper800_fcfs_cluster32",
    "b_delays_easy_small",
    "b2_paper800_easy_cluster32",
    "b4_hpc250_easy_nonet128",
    "c4_sequence_delay_fcfs_small",
    "c1_mixed_profiles_easy_small",
    "c2_mixed_profiles_fcfs_small",
    "c3_long_workload_fcfs_small",
    "c5_ptask_cluster32_easy",
    "e1_walltime_easy_cluster64",
    "d2_energy_easy_nonet128",
    "d5_energy_ptask_clusterenergy128_easy",
]
SLOW = ["f_10k_easy_cluster128_quiet", "f_50k_easy_cluster128_quiet"]


def run_case(case: str, out: Path) -> Path:
    folder = REFERENCE / case
    assert folder.is_dir(), f"{folder}: the shipped reference corpus is missing"
    spec = json.loads((folder / "case.json").read_text())
    name = PYBATSIM_EQUIVALENT[spec["scheduler"]["name"]]
    args = spec["batsim_args"]
    unknown = [a for a in args if a not in ("--mmax-workload", "--energy")]
    assert not unknown, f"case needs flags this test does not map: {unknown}"
    prefix = out / "out"
    run_simulation(
        RunSpec(
            platform=str(folder / spec["platform"]),
            workloads=[str(folder / w) for w in spec["workloads"]],
            options=Options(export_prefix=str(prefix), energy="--energy" in args),
            mmax_workload="--mmax-workload" in args,
        ),
        InProcess(get_scheduler(name)),
    )
    return folder / "expected"


def check(case: str, tmp_path: Path) -> None:
    expected = run_case(case, tmp_path)
    result = compare(str(expected / "out"), str(tmp_path / "out"))
    assert result.ok, result.table()


@pytest.mark.parametrize("case", FAST)
def test_reference_case(case: str, tmp_path: Path) -> None:
    check(case, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW)
def test_large_reference_case(case: str, tmp_path: Path) -> None:
    check(case, tmp_path)
