"""`--timing ideal` without a step per message: the same decisions and outputs as before.

In ideal mode a message takes no time; the engine used to make it an L07 action ended by a
step of its own (a step of zero seconds, one per message). It now ends such messages without a
step when nothing else can end in that step (`Engine._deliver_instant`). `engine.instant =
False` keeps the old way, so each run here is made both ways and must give the same scheduler
calls (every event of every batch) and the same output files, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from kernel_pair import Recorder, output_files

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
EQUIVALENT = {"schedFcfs": "fcfs", "easyBackfill": "easy"}
# Every reference case whose scheduler runs in-process (the others need batsched or a custom
# scheduler, known only by the transcript recorded with Batsim's message delays; pybatsim's
# schedEasySjfBackfill fails on a job started at t=0, which only ideal timing gives it).
CASES = sorted(
    p.name for p in REFERENCE.iterdir()
    if (p / "case.json").is_file()
    and json.loads((p / "case.json").read_text())["scheduler"]["name"] in EQUIVALENT
    and not p.name.startswith("f_")
)


def _scheduler(name: str) -> DecisionProcess:
    return InProcess(get_scheduler(name))


def _run(tmp: Path, platform: str, workloads: list[str], scheduler: Any, instant: bool,
         mmax_workload: bool = False, energy: bool = False
         ) -> tuple[list, dict[str, bytes]]:
    prefix = tmp / ("lean" if instant else "stepped") / "out"
    recorder = Recorder(_scheduler(scheduler) if isinstance(scheduler, str) else scheduler())

    def setup(sim: object) -> None:
        sim.engine.instant = instant  # type: ignore[attr-defined]

    run_simulation(RunSpec(platform, workloads,
                           Options(export_prefix=str(prefix), timing="ideal", energy=energy),
                           mmax_workload=mmax_workload), recorder, setup=setup)
    files = output_files(prefix.parent)
    return recorder.calls, files


def _same_both_ways(tmp: Path, platform: str, workloads: list[str], scheduler: Any,
                    **kw: bool) -> None:
    calls_old, files_old = _run(tmp, platform, workloads, scheduler, False, **kw)
    calls_new, files_new = _run(tmp, platform, workloads, scheduler, True, **kw)
    assert "out_jobs.csv" in files_old and files_old.keys() == files_new.keys()
    assert len(calls_new) == len(calls_old)
    assert calls_new == calls_old
    for name in files_old:
        assert files_new[name] == files_old[name], name


@pytest.mark.parametrize("case", CASES)
def test_reference_cases_in_ideal_mode(case: str, tmp_path: Path) -> None:
    folder = REFERENCE / case
    spec = json.loads((folder / "case.json").read_text())
    _same_both_ways(tmp_path, str(folder / spec["platform"]),
                    [str(folder / w) for w in spec["workloads"]],
                    EQUIVALENT[spec["scheduler"]["name"]],
                    mmax_workload="--mmax-workload" in spec["batsim_args"],
                    energy="--energy" in spec["batsim_args"])


def test_ties_zero_delays_and_tasks(tmp_path: Path) -> None:
    """Where the fast path must step aside: jobs shorter than the clock's precision (they end
    in the very step that would end the messages), jobs ending together, walltimes, parallel
    tasks running while messages are sent, two workloads submitting at the same dates."""
    profiles = {
        "zero": {"type": "delay", "delay": 1e-10},
        "d5": {"type": "delay", "delay": 5},
        "d3": {"type": "delay", "delay": 3},
        "task": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6},
        "seq": {"type": "composed", "repeat": 2, "seq": ["d3", "zero", "task"]},
    }
    names = list(profiles)
    jobs = [{"id": i, "subtime": float(i // 3), "walltime": 4.0 if i % 7 == 0 else -1,
             "res": 1 + i % 2, "profile": names[i % len(names)]} for i in range(40)]
    paths = []
    for k in range(2):
        path = tmp_path / f"w{k}.json"
        path.write_text(json.dumps({"nb_res": 4, "jobs": jobs[k::2], "profiles": profiles}))
        paths.append(str(path))
    for scheduler in ("fcfs", "easy"):
        _same_both_ways(tmp_path / scheduler, str(PROJECT / "platforms" / "small4.xml"), paths,
                        scheduler)


class Impatient(DecisionProcess):
    """FCFS on the lowest free machines; asks to be called back 100/3 s after each call with
    jobs waiting, and kills every third job it started at that callback."""

    def __init__(self) -> None:
        self.free: list[int] = []
        self.queue: list[ev.JobSubmitted] = []
        self.started: list[str] = []
        self.running: dict[str, tuple[int, ...]] = {}

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out: list = []
        for e in events:
            if isinstance(e, ev.SimulationBegins):
                self.free = list(range(e.nb_compute_resources))
            elif isinstance(e, ev.JobSubmitted):
                self.queue.append(e)
            elif isinstance(e, ev.JobCompleted):
                self.free = sorted(self.free + list(self.running.pop(e.job_id)))
            elif isinstance(e, ev.RequestedCall):
                victims = [j for j in self.started[::3] if j in self.running]
                if victims:
                    out.append(d.KillJob(now, tuple(victims[:1])))
        while self.queue and self.queue[0].job.res <= len(self.free):
            job = self.queue.pop(0).job
            alloc = tuple(self.free[:job.res])
            self.free = self.free[job.res:]
            self.running[job.id] = alloc
            self.started.append(job.id)
            out.append(d.ExecuteJob(now, job.id, alloc))
        if self.queue or events and isinstance(events[-1], ev.JobSubmitted):
            out.append(d.CallMeLater(now, now + 100 / 3))
        return Reply(now, tuple(out))


def test_kills_and_callbacks(tmp_path: Path) -> None:
    profiles = {"d50": {"type": "delay", "delay": 50}, "d7": {"type": "delay", "delay": 7},
                "task": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 1e7}}
    names = list(profiles)
    jobs = [{"id": i, "subtime": float(5 * (i // 2)), "walltime": -1, "res": 1 + i % 2,
             "profile": names[i % 3]} for i in range(24)]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    _same_both_ways(tmp_path, str(PROJECT / "platforms" / "small4.xml"), [str(path)], Impatient)
