"""Dynamic registration (RegisterProfileEvent, RegisterJobEvent, FinishRegistrationEvent),
after Batsim 5's dyn-register test EDC."""

from __future__ import annotations

import csv

import pytest

from batsim_py.errors import SchedulerError
from edc.helpers import python_edc, run_edc


def test_registered_jobs_run(tmp_path):
    run_edc(python_edc("submitter"), tmp_path / "out")
    with open(tmp_path / "out_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    dyn = sorted((r for r in rows if r["workload_name"] == "dyn"), key=lambda r: r["job_id"])
    assert [r["job_id"] for r in dyn] == ["0", "1", "2"]
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in dyn)
    assert all(r["profile"] == "d10" and float(r["execution_time"]) == 10.0 for r in dyn)
    # one at a time on host 0: they end about 10 s apart
    ends = sorted(float(r["finish_time"]) for r in dyn)
    assert all(9.99 < b - a < 10.01 for a, b in zip(ends, ends[1:], strict=False))
    assert sum(r["final_state"] == "REJECTED" for r in rows) == 20


def test_registration_needs_the_hello_feature(tmp_path):
    with pytest.raises(SchedulerError, match="did not ask for dynamic_registration"):
        run_edc(python_edc("submitter"), tmp_path / "out", init=b'{"no_feature": true}')
