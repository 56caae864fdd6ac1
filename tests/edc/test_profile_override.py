"""profile_allocation_override (seed 002, ExecuteJobEvent: "override the placement of
sub-profiles ... if the job's main profile is a composition profile"): each task of a named
profile runs on its own hosts, as Batsim 5 looks every task's profile up in the overrides
(src/jobs_execution.cpp). Expected durations are computed by hand from the hosts' speeds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from batsim_py.errors import SchedulerError
from edc.helpers import python_edc, run_edc

# Host 0 computes 1 Gflop/s, host 1 2 Gflop/s, host 2 4 Gflop/s (no network in the way).
PLATFORM = """<?xml version="1.0"?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="h0" speed="1Gf"/><host id="h1" speed="2Gf"/><host id="h2" speed="4Gf"/>
  <host id="master_host" speed="1Gf"/>
</zone></platform>
"""
ONE_GFLOP = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
WORKLOAD = {"nb_res": 3,
            "jobs": [{"id": 0, "subtime": 0, "res": 1, "profile": "seq"}],
            "profiles": {"seq": {"type": "composed", "repeat": 1, "seq": ["p1", "p2", "p1"]},
                         "p1": ONE_GFLOP, "p2": ONE_GFLOP,
                         "two": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0] * 4}}}


def run(tmp_path: Path, init: dict, workload: dict = WORKLOAD) -> dict[str, str]:
    (tmp_path / "p.xml").write_text(PLATFORM)
    (tmp_path / "w.json").write_text(json.dumps(workload))
    run_edc(python_edc("override"), tmp_path / "out", platform=str(tmp_path / "p.xml"),
            workload=str(tmp_path / "w.json"), init=json.dumps(init).encode())
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        return next(csv.DictReader(f))


def test_without_override_every_task_runs_on_the_job_s_host(tmp_path: Path) -> None:
    job = run(tmp_path, {})
    assert float(job["execution_time"]) == pytest.approx(3.0, abs=1e-3)  # 3 x 1 Gflop at 1


def test_an_overridden_profile_runs_on_its_own_hosts(tmp_path: Path) -> None:
    """p2 on the 2 Gf host: 1 + 0.5 + 1 s; both p1 (twice in the sequence) on the 4 Gf one:
    0.25 + 1 + 0.25 s. The job's own allocation stays host 0 (jobs.csv)."""
    job = run(tmp_path, {"override": {"w0!p2": "1"}})
    assert float(job["execution_time"]) == pytest.approx(2.5, abs=1e-3)
    assert job["allocated_resources"] == "0"
    job = run(tmp_path, {"override": {"w0!p1": "2"}})
    assert float(job["execution_time"]) == pytest.approx(1.5, abs=1e-3)


def test_a_custom_mapping_places_each_executor(tmp_path: Path) -> None:
    """A 2-executor task (1 and 2 Gflop) over hosts 1-2: mapping [1, 0] puts the 1 Gflop on
    the 4 Gf host and the 2 Gflop on the 2 Gf one: both end at max(0.25, 1) = 1 s; [0, 1]
    gives max(0.5, 0.5) = 0.5 s."""
    workload = {**WORKLOAD, "jobs": [{"id": 0, "subtime": 0, "res": 2, "profile": "seq2"}],
                "profiles": {**WORKLOAD["profiles"],
                             "seq2": {"type": "composed", "seq": ["two"]}}}
    workload["nb_res"] = 3
    init = {"override": {"w0!two": "1-2"}, "mapping": {"w0!two": [1, 0]}}
    # (the job itself is on host 0 with 2 executors: SpreadOverHostsFirst puts both there)
    job = run(tmp_path, init, workload)
    assert float(job["execution_time"]) == pytest.approx(1.0, abs=1e-3)
    init["mapping"] = {"w0!two": [0, 1]}
    job = run(tmp_path, init, workload)
    assert float(job["execution_time"]) == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize("override,message", [
    ({"w0!nope": "1"}, "profile_allocation_override of 'w0!nope': not a profile of job "
                       "'w0!0''s workload"),
    ({"w9!p2": "1"}, "profile_allocation_override of 'w9!p2': not a profile"),
    ({"w0!p2": "7"}, "profile_allocation_override of 'w0!p2': host 7 does not exist "
                     "(hosts are 0-2)"),
])
def test_a_bad_override_is_one_clear_error(tmp_path: Path, override: dict, message: str
                                           ) -> None:
    with pytest.raises(SchedulerError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(tmp_path, {"override": override})
