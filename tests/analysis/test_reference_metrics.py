"""Metrics of real Batsim's reference runs: (1) they agree with the summary Batsim itself wrote
(schedule.csv) wherever the definitions coincide; (2) batsim-py's outputs for the same case
give the same metrics as Batsim's files."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from batsim_py.analysis import load_run, run_metrics, workload_metrics

PROJECT = Path(__file__).resolve().parents[2]

CASES = [
    "a_delays_fcfs_small", "a2_paper800_fcfs_cluster32", "b_delays_easy_small",
    "b2_paper800_easy_cluster32", "b3_paper800_easysjf_cluster32", "b4_hpc250_easy_nonet128",
    "b5_paper800_batsched_easy_cluster32", "c1_mixed_profiles_easy_small",
    "c2_mixed_profiles_fcfs_small", "c3_long_workload_fcfs_small",
    "c4_sequence_delay_fcfs_small", "c5_ptask_cluster32_easy", "d1_energy_sleep_fcfs_mercury4",
    "d2_energy_easy_nonet128", "d3_energy_batsched_sleeper_nonet128",
    "d4_energy_batsched_energybf_nonet128", "d5_energy_ptask_clusterenergy128_easy",
    "d6_energy_batsched_energywatcher_nonet128", "e1_walltime_easy_cluster64",
    "e2_kill_batsched_killer_seq_small", "e3_kill_batsched_killer2_delays_small",
    "e4_kill_pybatsim_fcfsKiller_seq_small", "e5_reject_batsched_rejecter_small",
    "f_10k_easy_cluster128_quiet", "g1_dynsubmit_batsched_submitter_small",
    "g2_extevents_batsched_filler_small",
]


def _case(reference_dir: Path, case: str) -> Path:
    folder = reference_dir / case
    if not folder.is_dir():
        pytest.skip(f"{folder} is not in the reference corpus")
    return folder


@pytest.mark.parametrize("case", CASES)
def test_batsim_files_agree_with_batsim_summary(reference_dir: Path, case: str) -> None:
    run = load_run(str(_case(reference_dir, case) / "expected" / "out"))
    s = run.schedule
    assert s is not None
    m = run_metrics(run)
    # Batsim prints 6 decimals; its means use unrounded times: 1e-6 covers both.
    assert m["makespan"] == pytest.approx(s["makespan"], abs=1e-6)
    assert m["nb_jobs"] == s["nb_jobs"]
    assert m["nb_rejected"] == s["nb_jobs_rejected"]
    assert m["nb_success"] == s["nb_jobs_success"]
    assert m["nb_killed"] + m["nb_walltime"] + m["nb_failed"] == s["nb_jobs_killed"]
    if s["nb_jobs_rejected"] == 0:  # Batsim divides by every job, rejected ones included
        assert m["waiting_mean"] == pytest.approx(s["mean_waiting_time"], abs=1e-6)
        assert m["waiting_max"] == pytest.approx(s["max_waiting_time"], abs=1e-6)
        assert m["turnaround_mean"] == pytest.approx(s["mean_turnaround_time"], abs=1e-6)
        assert m["turnaround_max"] == pytest.approx(s["max_turnaround_time"], abs=1e-6)
    if m["makespan"] > 0 and case != "g2_extevents_batsched_filler_small":
        # used machine-seconds = Batsim's time in the computing state (g2 is the exception:
        # a machine made unavailable while its job runs stops "computing" in Batsim's
        # accounting, but the job keeps running until 20.2 s)
        used = m["utilisation"] * (run.nb_machines * m["makespan"] - s["time_unavailable"])
        assert used == pytest.approx(s["time_computing"], rel=1e-7, abs=1e-6)
    if run.consumed_energy is not None:
        # consumed_joules = E(last job end) - E(first submission) (research §7.2), the latter
        # measured after the submitter's first messages: a few ms of power later.
        table = run.consumed_energy
        first = run.jobs["submission_time"].min()
        before = float(np.interp(first, table["time"], table["energy"], left=0.0))
        power = float(table["epower"].max())
        assert abs(m["energy_joules"] - before - s["consumed_joules"]) <= 0.01 * power


def _replay(folder: Path, out: Path) -> str:
    """batsim-py on the case, answering with the scheduler's recorded replies."""
    spec = json.loads((folder / "case.json").read_text())
    args = [sys.executable, "-m", "batsim_py.cli", "-p", str(folder / spec["platform"]),
            "--scheduler", f"replay:{folder / 'transcript.jsonl'}", "-q",
            "-e", str(out / "out"), *spec["batsim_args"]]
    for w in spec["workloads"]:
        args += ["-w", str(folder / w)]
    for e in spec.get("events", []):
        args += ["--events", str(folder / e)]
    subprocess.run(args, check=True, cwd=PROJECT, timeout=300)
    return str(out / "out")


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float) and math.isnan(a[key]):
            assert math.isnan(b[key]), key
        else:
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-9), key


@pytest.mark.parametrize("case", [
    "a_delays_fcfs_small", "c1_mixed_profiles_easy_small", "d1_energy_sleep_fcfs_mercury4",
    "e2_kill_batsched_killer_seq_small", "e5_reject_batsched_rejecter_small",
    "g2_extevents_batsched_filler_small", "e1_walltime_easy_cluster64",
])
def test_batsim_py_and_batsim_give_the_same_metrics(reference_dir: Path, case: str,
                                                    tmp_path: Path) -> None:
    folder = _case(reference_dir, case)
    ours = load_run(_replay(folder, tmp_path))
    theirs = load_run(str(folder / "expected" / "out"))
    _same(run_metrics(ours), run_metrics(theirs))
    a, b = workload_metrics(ours), workload_metrics(theirs)
    assert list(a.index) == list(b.index)
    for w in a.index:
        _same(a.loc[w].to_dict(), b.loc[w].to_dict())
