"""Metrics against values computed by hand on runs of 3-5 jobs whose schedule is known."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from batsim_py.analysis import job_metrics, load_run, run_metrics, workload_metrics
from batsim_py.analysis.load import read_jobs
from batsim_py.errors import AnalysisError

from .conftest import simulate


def test_four_jobs_by_hand(four_jobs: str) -> None:
    # Schedule (4 machines, FCFS, ideal timing): j1 [0,100) on 2; j2 [100,150) on 4;
    # j3 [150,155) on 1; j4 [150,170) on 2, killed by its walltime of 20 s.
    m = run_metrics(load_run(four_jobs))
    assert m["nb_jobs"] == 4 and m["nb_success"] == 3 and m["nb_walltime"] == 1
    assert m["nb_killed"] == m["nb_rejected"] == m["nb_failed"] == 0
    assert m["makespan"] == pytest.approx(170)
    waits = [0, 90, 130, 120]
    assert m["waiting_mean"] == pytest.approx(sum(waits) / 4)  # 85
    assert m["waiting_median"] == pytest.approx(105)  # (90 + 120) / 2
    assert m["waiting_max"] == pytest.approx(130)
    turnarounds = [100, 140, 135, 140]
    assert m["turnaround_mean"] == pytest.approx(sum(turnarounds) / 4)
    assert m["turnaround_max"] == pytest.approx(140)
    # bounded slowdown: 100/100, 140/50, 135/max(5, 10), 140/20
    assert m["bsld_mean"] == pytest.approx((1 + 2.8 + 13.5 + 7) / 4)
    assert m["bsld_max"] == pytest.approx(13.5)
    # 2*100 + 4*50 + 1*5 + 2*20 machine-seconds used of 4*170
    assert m["utilisation"] == pytest.approx(445 / 680)
    assert m["queue_mean"] == pytest.approx(340 / 170)
    assert "energy_joules" not in m


def test_two_workloads_add_up(tmp_path) -> None:
    # w0: a [0,10) on 4 machines; w1: b submitted at 0, starts at 10 on 2 machines for 30 s,
    # c submitted at 5 on 2 machines starts at 10 for 20 s.
    prefix = simulate(tmp_path, [], workloads=[
        [{"id": "a", "subtime": 0, "res": 4, "delay": 10}],
        [{"id": "b", "subtime": 0, "res": 2, "delay": 30},
         {"id": "c", "subtime": 5, "res": 2, "delay": 20}],
    ])
    run = load_run(prefix)
    per = workload_metrics(run)
    assert list(per.index) == ["w0", "w1"]
    assert per.at["w0", "makespan"] == pytest.approx(10)
    assert per.at["w1", "makespan"] == pytest.approx(40)
    assert per.at["w0", "utilisation"] == pytest.approx(40 / 160)
    assert per.at["w1", "utilisation"] == pytest.approx((60 + 40) / 160)
    assert per.at["w1", "waiting_mean"] == pytest.approx((10 + 5) / 2)
    whole = run_metrics(run)
    assert per["utilisation"].sum() == pytest.approx(whole["utilisation"])
    assert per["queue_mean"].sum() == pytest.approx(whole["queue_mean"])  # 15 / 40


def test_energy_by_hand(tmp_path) -> None:
    # energy8: 8 hosts idling at 95 W in pstate 0; a delay job is a sleep, so the hosts stay
    # idle: E(T) = 8 * 95 W * 100 s, mean power 760 W, the job's own energy 2 * 95 * 100.
    prefix = simulate(tmp_path, [{"id": "j", "subtime": 0, "res": 2, "delay": 100}],
                      platform="energy8.xml", energy=True)
    run = load_run(prefix)
    m = run_metrics(run)
    assert m["energy_joules"] == pytest.approx(8 * 95 * 100)
    assert m["power_mean"] == pytest.approx(760)
    assert workload_metrics(run).at["w0", "energy_joules"] == pytest.approx(2 * 95 * 100)


def _frame(rows: list[tuple]) -> pd.DataFrame:
    """A jobs table as the Python API gives it: only the columns the metrics need."""
    return pd.DataFrame(rows, columns=["job_id", "workload_name", "submission_time",
                                       "final_state", "starting_time", "execution_time",
                                       "finish_time", "allocated_resources"])


def test_dataframe_with_rejection_and_unavailability() -> None:
    nan = math.nan
    jobs = _frame([
        ("1", "w0", 0.0, "COMPLETED_SUCCESSFULLY", 0.0, 20.0, 20.0, "0-1"),
        ("2", "w0", 5.0, "COMPLETED_KILLED", 10.0, 5.0, 15.0, "2 3"),
        ("3", "w0", 6.0, "REJECTED", nan, nan, nan, ""),
    ])
    # 4 machines, horizon 20, 10 machine-seconds unavailable: 40 + 10 used of 70.
    m = job_metrics(jobs, 4, unavailable=10.0)
    assert m["nb_rejected"] == 1 and m["nb_killed"] == 1 and m["nb_success"] == 1
    assert m["makespan"] == 20.0
    assert m["waiting_mean"] == pytest.approx(2.5)  # rejected job not counted
    assert m["utilisation"] == pytest.approx(50 / 70)
    assert m["queue_mean"] == pytest.approx(5 / 20)
    assert m["bsld_max"] == pytest.approx(1.0)  # 10 / max(5, 10)


def test_all_rejected_gives_no_values_not_an_error() -> None:
    jobs = _frame([("1", "w0", 0.0, "REJECTED", math.nan, math.nan, math.nan, "")])
    m = job_metrics(jobs, 4)
    assert m["nb_rejected"] == 1 and m["makespan"] == 0.0
    assert math.isnan(m["waiting_mean"]) and math.isnan(m["utilisation"])


def test_missing_column_is_named(tmp_path) -> None:
    bad = tmp_path / "x_jobs.csv"
    bad.write_text("job_id,submission_time\n1,0\n")
    with pytest.raises(AnalysisError, match="missing column.*final_state"):
        read_jobs(str(bad))
    with pytest.raises(AnalysisError, match="no Batsim output"):
        load_run(str(tmp_path / "nothing"))


def test_python_api_results_give_the_metrics_of_the_files(tmp_path) -> None:
    """The metrics take the Python API's DataFrames as they take the files."""
    import batsim_py
    from batsim_py.analysis import Run

    project = Path(__file__).resolve().parents[2]
    results = batsim_py.simulate(str(project / "platforms" / "small4.xml"),
                                 [str(project / "workloads" / "delays_small.json")],
                                 scheduler="easy")
    results.write(str(tmp_path / "out"))
    from_api = Run.from_results(results, "api")
    assert from_api.nb_machines == 4
    assert run_metrics(from_api) == run_metrics(load_run(str(tmp_path / "out")))
    assert job_metrics(results.jobs, 4) == run_metrics(from_api)


def test_one_machine_allocations_read_as_numbers() -> None:
    # pandas reads "3" as a number, and a rejected job's empty cell as NaN
    jobs = _frame([("1", "w0", 0.0, "COMPLETED_SUCCESSFULLY", 0.0, 10.0, 10.0, 3),
                   ("2", "w0", 0.0, "REJECTED", math.nan, math.nan, math.nan, math.nan)])
    m = job_metrics(jobs, 4)
    assert m["utilisation"] == pytest.approx(10 / 40)
