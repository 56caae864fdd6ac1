"""Job lifecycle semantics on hand-computed cases (Batsim 4.2.1 rules, batsim-semantics §4-§5).

A scripted scheduler takes fixed decisions so every expected value can be worked out by hand.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")


class Scripted(DecisionProcess):
    """Calls `decide(now, events) -> list of decisions` and keeps every event it saw."""

    def __init__(self, decide: Callable[[float, Sequence[ev.Event]], list]) -> None:
        self.decide = decide
        self.seen: list[ev.Event] = []

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        self.seen.extend(events)
        return d.Reply(now, tuple(self.decide(now, events)))


def run_on_small4(
    tmp_path: Path, jobs: list[dict], profiles: dict, decide, timing: str = "ideal"
) -> tuple[list[dict], Scripted]:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    sched = Scripted(decide)
    run_simulation(
        RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                 timing=timing)),
        sched,
    )
    with open(tmp_path / "out_jobs.csv") as f:
        return list(csv.DictReader(f)), sched


def start_each_on_machine_0(now: float, events: Sequence[ev.Event]) -> list:
    return [d.ExecuteJob(now, e.job_id, (0,)) for e in events if isinstance(e, ev.JobSubmitted)]


def test_delay_equal_to_walltime_is_walltime_reached(tmp_path: Path) -> None:
    rows, _ = run_on_small4(
        tmp_path,
        [{"id": 1, "subtime": 0, "walltime": 10, "res": 1, "profile": "d10"},
         {"id": 2, "subtime": 20, "walltime": 10.5, "res": 1, "profile": "d10"}],
        {"d10": {"type": "delay", "delay": 10}},
        start_each_on_machine_0,
    )
    by_id = {r["job_id"]: r for r in rows}
    assert by_id["1"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert by_id["1"]["execution_time"] == "10.000000"
    assert by_id["1"]["success"] == "0"
    assert by_id["2"]["final_state"] == "COMPLETED_SUCCESSFULLY"


def test_sequence_shares_one_walltime(tmp_path: Path) -> None:
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "d2.5": {"type": "delay", "delay": 2.5},
        "seq": {"type": "composed", "repeat": 2, "seq": ["d10", "d2.5"]},
    }
    rows, _ = run_on_small4(
        tmp_path,
        [{"id": "free", "subtime": 0, "res": 1, "profile": "seq"},
         {"id": "capped", "subtime": 100, "walltime": 15, "res": 1, "profile": "seq"}],
        profiles,
        start_each_on_machine_0,
    )
    by_id = {r["job_id"]: r for r in rows}
    assert by_id["free"]["execution_time"] == "25.000000"
    assert by_id["free"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert by_id["capped"]["execution_time"] == "15.000000"
    assert by_id["capped"]["final_state"] == "COMPLETED_WALLTIME_REACHED"


def test_profile_return_code_fails_the_job(tmp_path: Path) -> None:
    rows, sched = run_on_small4(
        tmp_path,
        [{"id": 1, "subtime": 0, "res": 1, "profile": "bad"}],
        {"bad": {"type": "delay", "delay": 1, "ret": 3}},
        start_each_on_machine_0,
    )
    assert rows[0]["final_state"] == "COMPLETED_FAILED" and rows[0]["success"] == "0"
    completed = [e for e in sched.seen if isinstance(e, ev.JobCompleted)]
    assert completed[0].return_code == 3 and completed[0].job_state == "COMPLETED_FAILED"


def test_reject_writes_a_row_and_sends_nothing_back(tmp_path: Path) -> None:
    def reject(now: float, events: Sequence[ev.Event]) -> list:
        return [d.RejectJob(now, e.job_id) for e in events if isinstance(e, ev.JobSubmitted)]

    rows, sched = run_on_small4(
        tmp_path, [{"id": "r", "subtime": 0, "res": 1, "profile": "d1"}],
        {"d1": {"type": "delay", "delay": 1}}, reject,
    )
    assert rows == [{**rows[0], "final_state": "REJECTED", "starting_time": "",
                     "allocated_resources": "", "metadata": ""}]
    assert not [e for e in sched.seen if isinstance(e, ev.JobCompleted)]
    assert isinstance(sched.seen[-1], ev.SimulationEnds)


def test_call_me_later_and_kill_with_progress(tmp_path: Path) -> None:
    def decide(now: float, events: Sequence[ev.Event]) -> list:
        out: list = []
        for e in events:
            if isinstance(e, ev.JobSubmitted):
                out += [d.ExecuteJob(now, e.job_id, (1,)), d.CallMeLater(now, 4.0)]
            if isinstance(e, ev.RequestedCall):
                out.append(d.KillJob(now, ("w0!k",)))
        return out

    rows, sched = run_on_small4(
        tmp_path, [{"id": "k", "subtime": 0, "res": 1, "profile": "d10"}],
        {"d10": {"type": "delay", "delay": 10}}, decide,
    )
    calls = [e for e in sched.seen if isinstance(e, ev.RequestedCall)]
    assert [c.timestamp for c in calls] == [4.0]
    killed = [e for e in sched.seen if isinstance(e, ev.JobKilled)]
    assert killed[0].job_ids == ("w0!k",)
    assert killed[0].job_progress["w0!k"].profile_name == "d10"
    assert killed[0].job_progress["w0!k"].progress == pytest.approx(0.4)
    completed = [e for e in sched.seen if isinstance(e, ev.JobCompleted)]
    assert completed[0].job_state == "COMPLETED_KILLED"
    assert sched.seen.index(completed[0]) < sched.seen.index(killed[0])
    assert rows[0]["execution_time"] == "4.000000"
    assert rows[0]["final_state"] == "COMPLETED_KILLED"


def test_batsim_timing_on_small4_by_hand(tmp_path: Path) -> None:
    """Master loopback: 15 us + 1 byte at 500 MB/s per message, serialised (§6.2).

    t=0: SIMULATION_BEGINS sent; the submitter's hello (1 message), the scheduler-ready of
    the first reply (2), the job batch (3): JOB_SUBMITTED at 3 costs; the EXECUTE_JOB arrives
    after the submitter's goodbye (4, 5): the job starts after 5 message costs. It ends 10 s
    later on node0 and its completion travels node0 -> master (link0 + uplink).
    """
    rows, sched = run_on_small4(
        tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "d10"}],
        {"d10": {"type": "delay", "delay": 10}}, start_each_on_machine_0, timing="batsim",
    )
    t = 0.0
    for _ in range(5):
        t = (t + 15e-6) + 1 / 500e6
    assert rows[0]["starting_time"] == "%f" % t
    completed = [e for e in sched.seen if isinstance(e, ev.JobCompleted)][0]
    assert completed.timestamp == float("%.6f" % ((t + 10 + 120e-6) + 1 / 125e6))


def test_invalid_decision_is_a_clear_error_and_outputs_remain(tmp_path: Path) -> None:
    def decide(now: float, events: Sequence[ev.Event]) -> list:
        return [d.ExecuteJob(now, e.job_id, (0,)) for e in events
                if isinstance(e, ev.JobSubmitted)]

    with pytest.raises(SchedulerError, match=r"machine 0 \(node0\) is already running a job"):
        run_on_small4(
            tmp_path,
            [{"id": 1, "subtime": 0, "res": 1, "profile": "d10"},
             {"id": 2, "subtime": 1, "res": 1, "profile": "d10"}],
            {"d10": {"type": "delay", "delay": 10}}, decide,
        )
    assert (tmp_path / "out_jobs.csv").exists()
    assert (tmp_path / "out_schedule.csv").exists()


def test_a_scheduler_that_never_decides_stalls_with_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SchedulerError, match="still wait for a decision"):
        run_on_small4(
            tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "d1"}],
            {"d1": {"type": "delay", "delay": 1}}, lambda now, events: [],
        )


def test_wrong_resource_count_is_refused(tmp_path: Path) -> None:
    def decide(now: float, events: Sequence[ev.Event]) -> list:
        return [d.ExecuteJob(now, e.job_id, (0, 1)) for e in events
                if isinstance(e, ev.JobSubmitted)]

    with pytest.raises(SchedulerError, match="requests 1 machines but 2 were given"):
        run_on_small4(
            tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "d1"}],
            {"d1": {"type": "delay", "delay": 1}}, decide,
        )
