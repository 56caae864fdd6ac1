"""The shipped legacy EASY example (batsim_py.legacy_client.easy) backfills as EASY does, on a
hand-computed case, and runs the shipped workloads to the end."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pytest
from legacy_harness import PLATFORMS, WORKLOADS

from batsim_py.cli import main
from batsim_py.legacy_client.easy import Easy
from batsim_py.legacy_client.network import run_scheduler


def run_easy(tmp_path: Path, workload: str, version: int = 1) -> dict[str, dict[str, str]]:
    sock = str(tmp_path / "bat_socket")
    errors: list[BaseException] = []

    def scheduler() -> None:
        try:
            run_scheduler(Easy(), ["-s", f"unix:{sock}", "--version", str(version),
                                   "-w", workload])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=scheduler, daemon=True)
    thread.start()
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", workload, "-q",
               "--legacy-protocol", str(version), "-s", f"unix:{sock}",
               "-e", str(tmp_path / "easy"), "--scheduler-connect-timeout", "20"])
    thread.join(20)
    assert rc == 0 and not errors and not thread.is_alive(), errors
    with open(tmp_path / "easy_jobs.csv", newline="") as f:
        return {row["job_id"]: row for row in csv.DictReader(f)}


def test_easy_backfills_a_job_that_ends_before_the_reservation(tmp_path: Path) -> None:
    # 4 machines. a (2 machines, 10 s) runs from 0; b (4 machines) must wait for a: it is
    # reserved at a's walltime end (100). c (2 machines, walltime 20) fits now and ends before
    # 100: backfilled at 2. d (1 machine, walltime 200) would end after 100 and no machine is
    # spare at 100: it waits for b (10 -> 15).
    jobs = [{"id": "a", "subtime": 0, "res": 2, "walltime": 100, "profile": "d10"},
            {"id": "b", "subtime": 1, "res": 4, "walltime": 100, "profile": "d5"},
            {"id": "c", "subtime": 2, "res": 2, "walltime": 20, "profile": "d3"},
            {"id": "d", "subtime": 3, "res": 1, "walltime": 200, "profile": "d1"}]
    profiles = {f"d{n}": {"type": "delay", "delay": n} for n in (1, 3, 5, 10)}
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    start = {j: float(r["starting_time"]) for j, r in run_easy(tmp_path, str(path)).items()}
    assert start["a"] == pytest.approx(0, abs=1e-3)
    assert start["c"] == pytest.approx(2, abs=1e-3)  # backfilled, before b
    assert start["b"] == pytest.approx(10, abs=1e-3)
    assert start["d"] == pytest.approx(15, abs=1e-3)


@pytest.mark.parametrize("workload", ["delays_small.json", "mixed_small.json",
                                      "parallel_small.json"])
def test_easy_runs_the_shipped_workloads(tmp_path: Path, workload: str) -> None:
    rows = run_easy(tmp_path, str(WORKLOADS / workload), version=2)
    expected = len(json.loads((WORKLOADS / workload).read_text())["jobs"])
    assert len(rows) == expected
    assert all(r["final_state"].startswith("COMPLETED") for r in rows.values())
