"""Jobs with `res` 0 (issue 12 item 5). Batsim 4.2.1 loads them (`res` must only be >= 0) but
aborts on an EXECUTE_JOB whose allocation is empty, so the one valid decision is REJECT_JOB:
every shipped scheduler rejects them and goes on with the others."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["fcfs", "easy", "fcfs_sleep"])
@pytest.mark.parametrize("order", ["zero_first", "zero_behind_a_wide_job"])
def test_every_scheduler_rejects_res_0_and_runs_the_rest(tmp_path: Path, name: str,
                                                         order: str) -> None:
    jobs = [{"id": "z", "subtime": 0, "res": 0, "profile": "d"},
            {"id": "a", "subtime": 1, "res": 1, "profile": "d"},
            {"id": "b", "subtime": 2, "res": 2, "profile": "d"}]
    if order == "zero_behind_a_wide_job":
        jobs[0]["subtime"], jobs[1]["res"] = 1, 8
        jobs[1]["subtime"] = 0
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 8, "jobs": jobs,
                                    "profiles": {"d": {"type": "delay", "delay": 10}}}))
    proc = subprocess.run(
        [sys.executable, "-m", "batsim_py.cli", "-p", str(PROJECT / "platforms" / "energy8.xml"),
         "-w", str(workload), "-e", str(tmp_path / "out"), "--scheduler", name, "-E", "-q"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out_jobs.csv") as f:
        states = {r["job_id"]: r["final_state"] for r in csv.DictReader(f)}
    assert states == {"z": "REJECTED", "a": "COMPLETED_SUCCESSFULLY",
                      "b": "COMPLETED_SUCCESSFULLY"}
