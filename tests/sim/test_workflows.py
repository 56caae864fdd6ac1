"""Workflows (-W, --WS, --workflow-jobs-limit, --ignore-beyond-last-workflow) on hand-computed
cases: `--timing ideal` (no message takes time), so every date follows from the task runtimes
and the rules of Batsim 4.2.1's workflow submitter (sim/workflow.py's docstring); the FCFS
scheduler takes the lowest free machines of small4 (4 compute machines, delay jobs only)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SimulationError, WorkloadError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")

DIAMOND = """
  <job id="A" runtime="10.5"/>
  <job id="B" runtime="20" num_procs="2"/>
  <job id="C" runtime="7.25"/>
  <job id="D" runtime="3"/>
  <child ref="B"><parent ref="A"/></child>
  <child ref="C"><parent ref="A"/></child>
  <child ref="D"><parent ref="B"/><parent ref="C"/></child>"""
# a root, then six children of distinct runtimes (two tasks of a workflow ending together while
# it submits would deadlock Batsim: see test_two_tasks_ending_together_deadlock)
FAN = '<job id="R" runtime="1"/>' + "".join(
    f'<job id="c{i}" runtime="{8 + 2 * i}"/><child ref="c{i}"><parent ref="R"/></child>'
    for i in range(1, 7))


def dax(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<adag version="2.1">{body}\n</adag>\n')
    return str(path)


def run(tmp_path: Path, *, workflows: tuple[str, ...] = (),
        starts: tuple[tuple[str, float], ...] = (), workloads: tuple[str, ...] = (),
        limit: int = 0, ignore: bool = False, timing: str = "ideal",
        decision: DecisionProcess | None = None) -> list[tuple]:
    """jobs.csv as (id, workload, profile, subtime, res, walltime, start, finish, state),
    sorted by workload then job number (hand-computed cases do not fix the row order)."""
    prefix = tmp_path / "out"
    run_simulation(RunSpec(platform=SMALL4, workloads=list(workloads),
                           options=Options(export_prefix=str(prefix), timing=timing),
                           workflows=workflows, workflow_starts=starts,
                           workflow_jobs_limit=limit, ignore_beyond_last_workflow=ignore),
                   decision or InProcess(get_scheduler("fcfs")))
    with open(f"{prefix}_jobs.csv", newline="") as f:
        rows = [(r["job_id"], r["workload_name"], r["profile"], float(r["submission_time"]),
                 int(r["requested_number_of_resources"]), float(r["requested_time"]),
                 float(r["starting_time"]), float(r["finish_time"]), r["final_state"])
                for r in csv.DictReader(f)]
    return sorted(rows, key=lambda r: (r[1], int(r[0]) if r[0].isdigit() else r[0]))


OK = "COMPLETED_SUCCESSFULLY"


def test_diamond(tmp_path: Path) -> None:
    """A, then B (2 machines) and C together, then D once both ended; walltime = runtime + 10;
    jobs numbered in submission order (B before C: A's children in file order)."""
    rows = run(tmp_path, workflows=(dax(tmp_path, "d.dax", DIAMOND),))
    assert rows == [
        ("0", "wf0", "wf0_A", 0.0, 1, 20.5, 0.0, 10.5, OK),
        ("1", "wf0", "wf0_B", 10.5, 2, 30.0, 10.5, 30.5, OK),
        ("2", "wf0", "wf0_C", 10.5, 1, 17.25, 10.5, 17.75, OK),
        ("3", "wf0", "wf0_D", 30.5, 1, 13.0, 30.5, 33.5, OK),
    ]


def test_fan_out_queues(tmp_path: Path) -> None:
    """Six children on four machines: c1-c4 start at 1, c5 and c6 when c1 and c2 end."""
    rows = run(tmp_path, workflows=(dax(tmp_path, "f.dax", FAN),))
    starts = {r[2]: (r[3], r[6], r[7]) for r in rows}
    assert starts == {
        "wf0_R": (0.0, 0.0, 1.0),
        "wf0_c1": (1.0, 1.0, 11.0), "wf0_c2": (1.0, 1.0, 13.0),
        "wf0_c3": (1.0, 1.0, 15.0), "wf0_c4": (1.0, 1.0, 17.0),
        "wf0_c5": (1.0, 11.0, 29.0), "wf0_c6": (1.0, 13.0, 33.0),
    }


def test_jobs_limit_1_runs_the_tasks_one_by_one(tmp_path: Path) -> None:
    rows = run(tmp_path, workflows=(dax(tmp_path, "d.dax", DIAMOND),), limit=1)
    assert [(r[2], r[3], r[6], r[7]) for r in rows] == [
        ("wf0_A", 0.0, 0.0, 10.5), ("wf0_B", 10.5, 10.5, 30.5),
        ("wf0_C", 30.5, 30.5, 37.75), ("wf0_D", 37.75, 37.75, 40.75)]


def test_jobs_limit_2_submits_at_each_end(tmp_path: Path) -> None:
    rows = run(tmp_path, workflows=(dax(tmp_path, "f.dax", FAN),), limit=2)
    assert [(r[2], r[3], r[6], r[7]) for r in rows] == [
        ("wf0_R", 0.0, 0.0, 1.0), ("wf0_c1", 1.0, 1.0, 11.0), ("wf0_c2", 1.0, 1.0, 13.0),
        ("wf0_c3", 11.0, 11.0, 25.0), ("wf0_c4", 13.0, 13.0, 29.0),
        ("wf0_c5", 25.0, 25.0, 43.0), ("wf0_c6", 29.0, 29.0, 49.0)]


def test_start_time_and_names(tmp_path: Path) -> None:
    """--WS workflows are wfc<i>, after the -W ones (wf<i>), and start at their time."""
    chain = dax(tmp_path, "c.dax", '<job id="X" runtime="5"/><job id="Y" runtime="2.5"/>'
                '<child ref="Y"><parent ref="X"/></child>')
    rows = run(tmp_path, workflows=(chain,), starts=((chain, 100.0),))
    assert [(r[0], r[1], r[2], r[3], r[6], r[7]) for r in rows] == [
        ("0", "wf0", "wf0_X", 0.0, 0.0, 5.0), ("1", "wf0", "wf0_Y", 5.0, 5.0, 7.5),
        ("0", "wfc0", "wfc0_X", 100.0, 100.0, 105.0), ("1", "wfc0", "wfc0_Y", 105.0, 105.0, 107.5)]


def workload(tmp_path: Path, subtimes: list[float]) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "profiles": {"d5": {"type": "delay", "delay": 5}},
                                "jobs": [{"id": f"j{k}", "subtime": t, "res": 1, "profile": "d5"}
                                         for k, t in enumerate(subtimes)]}))
    return str(path)


def test_ignore_beyond_last_workflow(tmp_path: Path) -> None:
    """The diamond ends at 33.5: the workload's job submitted at 50 is ignored (never in the
    outputs), the one at 0 is not; without the flag both run."""
    w = workload(tmp_path, [0.0, 50.0])
    d1 = dax(tmp_path, "d.dax", DIAMOND)
    ids = [r[0] for r in run(tmp_path, workloads=(w,), workflows=(d1,), ignore=True)]
    assert ids == ["j0", "0", "1", "2", "3"]
    ids = [r[0] for r in run(tmp_path, workloads=(w,), workflows=(d1,))]
    assert ids == ["j0", "j1", "0", "1", "2", "3"]


def test_ignore_rule_holds_while_exactly_one_workflow_ended(tmp_path: Path) -> None:
    """Batsim compares the ended workflows with `Workflows::size()`, a bool: with two
    workflows (ending at 33.5 and 60) the job at 50 is ignored, the one at 70 is not."""
    w = workload(tmp_path, [50.0, 70.0])
    d1 = dax(tmp_path, "d.dax", DIAMOND)
    long = dax(tmp_path, "l.dax", '<job id="L" runtime="60"/>')
    rows = run(tmp_path, workloads=(w,), workflows=(d1, long), ignore=True)
    assert [(r[0], r[1]) for r in rows] == [
        ("j1", "w0"), ("0", "wf0"), ("1", "wf0"), ("2", "wf0"), ("3", "wf0"), ("0", "wf1")]


def test_batsim_timing_rounds_subtimes_to_the_microsecond(tmp_path: Path) -> None:
    """Subtime and walltime go through std::to_string (6 decimals) and back; the delay keeps
    full precision (the finish time, printed with 6 decimals, does not show it)."""
    path = dax(tmp_path, "p.dax", '<job id="A" runtime="1.0000004"/><job id="B" runtime="1"/>'
               '<child ref="B"><parent ref="A"/></child>')
    rows = run(tmp_path, workflows=(path,), timing="batsim")
    for r in rows:
        assert r[3] == float(f"{r[3]:f}")
    a, b = rows
    assert a[5] == 11.0  # to_string(11.0000004) = "11.000000"
    assert b[3] > a[7] > a[6] > a[3] > 0.0  # (messages take time: nothing is at 0 but A's start)


def test_two_tasks_ending_together_deadlock(tmp_path: Path) -> None:
    """A and B end together at 10; A's callback readies C, whose submission waits for the
    server while the server waits for the submitter to take B's callback: Batsim deadlocks
    (SimGrid's 'Oops! Deadlock'); batsim-py says so, and writes the outputs so far."""
    path = dax(tmp_path, "x.dax", '<job id="A" runtime="10"/><job id="B" runtime="10"/>'
               '<job id="C" runtime="5"/><child ref="C"><parent ref="A"/></child>')
    with pytest.raises(SimulationError, match=r"^deadlock at t=10\.000000: the server waits "
                       r"for workflow wf0's submitter to take the completion of job wf0!1"):
        run(tmp_path, workflows=(path,))
    assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 2  # header and A


class RejectAll(DecisionProcess):
    def exchange(self, now: float, events) -> d.Reply:  # type: ignore[no-untyped-def]
        return d.Reply(now, tuple(d.RejectJob(now, e.job.id) for e in events
                                  if isinstance(e, ev.JobSubmitted)))


def test_a_rejected_task_never_calls_back(tmp_path: Path) -> None:
    path = dax(tmp_path, "r.dax", '<job id="A" runtime="1"/>')
    with pytest.raises(SimulationError, match=r"workflow wf0's submitter waits for the end of "
                       r"wf0!0 that will never be reported"):
        run(tmp_path, workflows=(path,), decision=RejectAll())


def test_a_task_submitted_twice_is_an_error(tmp_path: Path) -> None:
    """D's parents are B and C, but B lists it twice: B's end counts twice, D is ready twice
    and its second submission reuses the profile name (Batsim aborts)."""
    path = dax(tmp_path, "t.dax", '<job id="B" runtime="1"/><job id="C" runtime="2"/>'
               '<job id="D" runtime="1"/>'
               '<child ref="D"><parent ref="B"/><parent ref="B"/><parent ref="C"/></child>')
    with pytest.raises(WorkloadError, match="task 'D' is submitted a second time"):
        run(tmp_path, workflows=(path,))


def test_an_empty_workflow_ends(tmp_path: Path) -> None:
    assert run(tmp_path, workflows=(dax(tmp_path, "e.dax", ""),)) == []
