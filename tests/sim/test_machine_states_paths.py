"""The machine-state log (sim/machines.py) against the live books on whole runs: the same run
with the log left at once (the live books from the first change: the bookkeeping used before
the log existed) writes the same bytes in every output file (schedule.csv but its two
wall-clock columns). Reference cases (kills, ptasks, energy, external events), compute sharing
on ranges and scattered allocations with unavailable machines, and f_10k (slow)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conformance.cases import REFERENCE, case_run_spec

from batsim_py.decision.decisions import ExecuteJob, Reply
from batsim_py.decision.events import JobSubmitted, Notify, SimulationBegins
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.transcript import ReplayPeer
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim import machines
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
WALL_CLOCK = ("scheduling_time", "simulation_time")  # schedule.csv's columns that may differ


class Sharer(DecisionProcess):
    """Starts every job at once on a seeded allocation: ranges and scattered tuples, on
    machines already computing (compute sharing), never on unavailable ones."""

    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.machines: list[int] = []
        self.unavailable: set[int] = set()

    def exchange(self, now: float, events: object) -> Reply:
        decisions = []
        for e in events:  # type: ignore[attr-defined]
            if isinstance(e, SimulationBegins):
                self.machines = [r.id for r in e.compute_resources]
            elif isinstance(e, Notify) and e.type == "event_machine_unavailable":
                self.unavailable.update(e.resources or ())
            elif isinstance(e, Notify) and e.type == "event_machine_available":
                self.unavailable.difference_update(e.resources or ())
            elif isinstance(e, JobSubmitted):
                ok = [m for m in self.machines if m not in self.unavailable]
                res = min(e.job.res, len(ok))
                if self.rng.random() < 0.5:
                    lo = self.rng.randrange(len(ok) - res + 1)
                    alloc: object = tuple(ok[lo:lo + res])
                    if alloc == tuple(range(ok[lo], ok[lo] + res)):
                        alloc = range(ok[lo], ok[lo] + res)
                else:
                    alloc = tuple(sorted(self.rng.sample(ok, res)))
                decisions.append(ExecuteJob(timestamp=now, job_id=e.job.id, alloc=alloc))
        return Reply(now=now, decisions=tuple(decisions))


def _outputs(folder: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        if path.name.endswith("_schedule.csv"):
            header, row = data.decode().splitlines()
            names = header.split(",")
            values = [v for n, v in zip(names, row.split(","), strict=True)
                      if n not in WALL_CLOCK]
            data = ",".join(values).encode()
        out[path.name] = data
    return out


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run) -> dict[str, bytes]:  # noqa: ANN001
    """Outputs of `run(prefix)` with the log, then with the live books from the start; the
    two must be equal (returned)."""
    run(tmp_path / "log" / "out")
    init = machines.MachineStates.__init__

    def live_from_start(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        init(self, *args, **kwargs)
        self._leave_log()

    with monkeypatch.context() as m:
        m.setattr(machines.MachineStates, "__init__", live_from_start)
        run(tmp_path / "live" / "out")
    logged, live = _outputs(tmp_path / "log"), _outputs(tmp_path / "live")
    assert logged.keys() == live.keys()
    for name in logged:
        assert logged[name] == live[name], f"{name} differs"
    return logged


def _reference(case: str):  # noqa: ANN202
    def run(prefix: Path) -> None:
        prefix.parent.mkdir(parents=True)
        run_simulation(case_run_spec(case, str(prefix)),
                       ReplayPeer(str(REFERENCE / case / "transcript.jsonl"), strict=False))
    return run


@pytest.mark.parametrize("case", [
    "b4_hpc250_easy_nonet128",  # EASY, 250 jobs, contiguous blocks
    "c5_ptask_cluster32_easy",  # parallel tasks
    "e1_walltime_easy_cluster64",  # walltime kills
    "e3_kill_batsched_killer2_delays_small",  # kills by the scheduler
    "d2_energy_easy_nonet128",  # -E without switches: the log is kept
    "d3_energy_batsched_sleeper_nonet128",  # machines sleeping and waking
    "g2_extevents_batsched_filler_small",  # machines unavailable
])
def test_reference_cases_log_and_live_books_agree(case: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = _both(tmp_path, monkeypatch, _reference(case))
    assert b"time," in outputs["out_machine_states.csv"]


def test_compute_sharing_and_unavailability_agree(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(json.dumps(e) for e in [
        {"timestamp": 5, "type": "machine_unavailable", "resources": "2-5"},
        {"timestamp": 30, "type": "machine_available", "resources": "2-5"},
        {"timestamp": 200, "type": "machine_unavailable", "resources": "0-1"},
        {"timestamp": 300, "type": "machine_available", "resources": "0-1"},
    ]) + "\n")

    def run(prefix: Path, with_events: bool) -> None:
        prefix.parent.mkdir(parents=True)
        run_simulation(
            RunSpec(platform=str(PROJECT / "platforms" / "cluster128.xml"),
                    workloads=[str(PROJECT / "workloads" / "gen_delay_1k_128.json")],
                    options=Options(export_prefix=str(prefix), allow_compute_sharing=True),
                    events=[str(events)] if with_events else []),
            InProcess(Sharer()))

    _both(tmp_path / "plain", monkeypatch, lambda prefix: run(prefix, False))
    _both(tmp_path / "events", monkeypatch, lambda prefix: run(prefix, True))


@pytest.mark.slow
def test_f_10k_log_and_live_books_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(prefix: Path) -> None:
        prefix.parent.mkdir(parents=True)
        run_simulation(case_run_spec("f_10k_easy_cluster128_quiet", str(prefix), timing="ideal"),
                       InProcess(get_scheduler("easy")))

    _both(tmp_path, monkeypatch, run)
