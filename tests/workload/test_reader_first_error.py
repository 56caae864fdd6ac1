"""The reader checks a large workload's jobs in a few whole-workload passes and walks the jobs
one by one only when one of them fails: the error reported must still be the first one in job
order, whichever kind it is."""

from __future__ import annotations

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload.reader import parse_workload


def _workload(jobs: list[dict]) -> dict:
    return {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5},
                                      "p": {"type": "parallel", "cpu": [1, 1], "com": [0] * 4}},
            "jobs": jobs}


def _job(i: object, profile: str = "d", res: int = 1) -> dict:
    return {"id": i, "subtime": 0, "res": res, "profile": profile}


def _error(jobs: list[dict]) -> str:
    with pytest.raises(WorkloadError) as info:
        parse_workload(_workload(jobs), name="w0", path="/w.json", source="w.json")
    return str(info.value)


def test_undefined_profile_before_a_duplicate() -> None:
    assert _error([_job(1), _job(2, "nope"), _job(3), _job(1)]) == (
        "w.json: job w0!2: profile 'nope' is not defined (defined: d, p)")


def test_duplicate_before_an_undefined_profile() -> None:
    assert _error([_job(1), _job(1), _job(3, "nope")]) == (
        "w.json: job w0!1: duplicated job id; every job needs a distinct 'id'")


def test_parallel_size_checked_per_job() -> None:
    assert _error([_job(1, "p", 2), _job(2, "p", 3), _job(3, "nope")]) == (
        "w.json: job w0!2: res = 3 but its parallel profile 'p' has 2 cpu values; they must "
        "be equal")


def test_valid_workload_keeps_reachable_profiles() -> None:
    workload = parse_workload(_workload([_job(1), _job(2)]), name="w0", path="/w.json",
                              source="w.json")
    assert list(workload.profiles) == ["d"]
    assert [job.id for job in workload.jobs] == ["w0!1", "w0!2"]
    assert workload.profiles["d"].delay == 5.0 and type(workload.profiles["d"].delay) is float
