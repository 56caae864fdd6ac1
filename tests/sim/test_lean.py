"""The lean `--timing ideal` kernel (sim/lean.py) against the full engine's ideal mode.

Each run is made twice, with `BATSIM_PY_LEAN=0` (the full engine: `Simulation.server` on
`sim/engine.py`) and without (the lean kernel, checked to be the one that ran), and must give
the same scheduler calls (every event of every batch, and the call's date) and the same output
files byte for byte (schedule.csv without its two wall-clock columns). The hand-written cases
put in what batches and orders depend on: same-date submissions and completions, jobs shorter
than the clock's precision or than the engine's 1 ms window, walltimes, rejections, metadata,
CALL_ME_LATER, kills with progress reports, decisions dated later than the call, composed
sequences of delays, two workloads, external events, and errors.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from conformance.cases import case_json, case_run_spec
from kernel_pair import assert_same, run_with

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.transcript import ReplayPeer
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim import lean
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
EQUIVALENT = {"schedFcfs": "fcfs", "easyBackfill": "easy"}
# The reference cases the lean kernel covers (delay or composed-of-delay jobs, no energy):
# with their in-process scheduler, or answered by their transcript (kills, rejections).
IN_PROCESS = ["a2_paper800_fcfs_cluster32", "a_delays_fcfs_small", "b2_paper800_easy_cluster32",
              "b4_hpc250_easy_nonet128", "b_delays_easy_small", "c4_sequence_delay_fcfs_small"]
REPLAYED = ["b5_paper800_batsched_easy_cluster32", "e2_kill_batsched_killer_seq_small",
            "e3_kill_batsched_killer2_delays_small", "e4_kill_pybatsim_fcfsKiller_seq_small",
            "e5_reject_batsched_rejecter_small"]


def same_both_ways(tmp: Path, spec: RunSpec, make: Callable[[], DecisionProcess],
                   monkeypatch: pytest.MonkeyPatch) -> tuple[list, str]:
    """Run both kernels; assert the lean one ran and that both agree. The calls and the
    error (if any) of the run."""
    full = run_with(tmp / "full", spec, make, {lean.SWITCH: "0"}, monkeypatch)
    lean_run = run_with(tmp / "lean", spec, make, {lean.SWITCH: None}, monkeypatch)
    assert (full.sim.kernel, lean_run.sim.kernel) == ("engine", "lean")
    assert_same(full, lean_run)
    return full.calls, full.error


def _case_spec(case: str, timing: str = "ideal", *, with_energy: bool = False
               ) -> tuple[RunSpec, dict]:
    """A reference case's run in `timing` (its `--energy` only `with_energy`: the lean tests
    compare energy-less runs), and its case.json (tests/sim/test_quiet_shortcuts.py too)."""
    return case_run_spec(case, timing=timing, energy=with_energy), case_json(case)


@pytest.mark.parametrize("case", IN_PROCESS)
def test_reference_cases_in_process(case: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    spec, raw = _case_spec(case)
    name = EQUIVALENT[raw["scheduler"]["name"]]
    same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler(name)), monkeypatch)


@pytest.mark.parametrize("case", REPLAYED)
def test_reference_cases_replayed(case: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _case_spec(case)
    transcript = str(REFERENCE / case / "transcript.jsonl")
    same_both_ways(tmp_path, spec, lambda: ReplayPeer(transcript), monkeypatch)


@pytest.mark.slow
def test_f_10k(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _case_spec("f_10k_easy_cluster128_quiet")
    calls, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler("easy")),
                              monkeypatch)
    assert sum(isinstance(e, ev.JobCompleted) for _, events in calls for e in events) == 10_000


def _workload(tmp: Path, name: str, jobs: list[dict], profiles: dict) -> str:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    return str(path)


PROFILES = {
    "tinier": {"type": "delay", "delay": 5e-12},
    "tiny": {"type": "delay", "delay": 1e-10},  # below SimGrid's 1e-9 precision
    "ms": {"type": "delay", "delay": 5e-4},  # within the engine's 1 ms window
    "d3": {"type": "delay", "delay": 3},
    "d5": {"type": "delay", "delay": 5},
    "third": {"type": "delay", "delay": 10 / 3},
    "seq": {"type": "composed", "repeat": 2, "seq": ["d3", "tiny", "third"]},
}


def _jobs(n: int, names: Sequence[str], step: float = 1.0, group: int = 3) -> list[dict]:
    """Jobs submitted `group` at a time (same-date submissions), every `step` seconds."""
    return [{"id": i, "subtime": step * (i // group),
             "walltime": 4.0 if i % 7 == 0 else (3.0 if i % 11 == 0 else -1),
             "res": 1 + i % 2, "profile": names[i % len(names)]} for i in range(n)]


@pytest.mark.parametrize("scheduler", ["fcfs", "easy"])
def test_ties_tiny_delays_walltimes_two_workloads(scheduler: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs ending together and with submissions (whole-second delays and subtimes), jobs
    shorter than the clock's precision or within the 1 ms window (the zero-time step that
    delivers messages ends them), walltimes reached (delay 4 or 5 against walltime 4 or 3),
    composed sequences, and two workloads submitting at the same dates."""
    jobs = _jobs(60, list(PROFILES))
    paths = [_workload(tmp_path, f"w{k}", jobs[k::2], PROFILES) for k in range(2)]
    calls, _ = same_both_ways(tmp_path, RunSpec(SMALL4, paths, Options(timing="ideal")),
                              lambda: InProcess(get_scheduler(scheduler)), monkeypatch)
    # The case does batch: some call holds both a completion and a submission.
    assert any({type(e) for e in events} >= {ev.JobSubmitted, ev.JobCompleted}
               for _, events in calls)
    states = {e.job_state for _, events in calls for e in events
              if isinstance(e, ev.JobCompleted)}
    assert {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"} <= states


class Busy(DecisionProcess):
    """FCFS on the lowest free machines that also rejects every fifth job, tags every job,
    dates some decisions later than the call, asks to be called back 100/3 s after each call
    with jobs waiting, and at each callback kills the oldest job still running."""

    def __init__(self, later: bool = True) -> None:
        self.free: list[int] = []
        self.queue: list[ev.JobSubmitted] = []
        self.running: dict[str, tuple[int, ...]] = {}
        self.later = later

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out: list = []
        callback = False
        for e in events:
            if isinstance(e, ev.SimulationBegins):
                self.free = list(range(e.nb_compute_resources))
            elif isinstance(e, ev.JobSubmitted):
                if int(e.job.id.split("!")[1]) % 5 == 4:
                    out.append(d.RejectJob(now, e.job.id))
                else:
                    self.queue.append(e)
            elif isinstance(e, ev.JobCompleted):
                self.free = sorted(self.free + list(self.running.pop(e.job_id)))
            elif isinstance(e, ev.RequestedCall):
                callback = True
        if callback and self.running:
            out.append(d.KillJob(now, (next(iter(self.running)),)))
        when = now
        while self.queue and self.queue[0].job.res <= len(self.free):
            job = self.queue.pop(0).job
            alloc = tuple(self.free[:job.res])
            self.free = self.free[job.res:]
            self.running[job.id] = alloc
            out.append(d.SetJobMetadata(when, job.id, f"started by Busy at {when:g}"))
            out.append(d.ExecuteJob(when, job.id, alloc))
            if self.later and len(self.running) % 3 == 0:
                when = when + 0.25  # the next decisions come a quarter second later
        if self.queue:
            out.append(d.CallMeLater(when, now + 100 / 3))
        return Reply(when, tuple(out))


def test_rejections_metadata_callbacks_kills_later_decisions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = {"d50": {"type": "delay", "delay": 50}, "d7": {"type": "delay", "delay": 7},
                "seq": {"type": "composed", "repeat": 3, "seq": ["d7", "d50"]},
                "tiny": {"type": "delay", "delay": 1e-10}}
    jobs = _jobs(40, list(profiles), step=5.0, group=2)
    path = _workload(tmp_path, "w", jobs, profiles)
    calls, _ = same_both_ways(tmp_path, RunSpec(SMALL4, [path], Options(timing="ideal")), Busy,
                              monkeypatch)
    kinds = {type(e) for _, events in calls for e in events}
    assert {ev.JobKilled, ev.RequestedCall} <= kinds
    states = {e.job_state for _, events in calls for e in events
              if isinstance(e, ev.JobCompleted)}
    assert "COMPLETED_KILLED" in states


def test_external_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Machines becoming unavailable and available again (--events), FCFS around them."""
    scheduler = str(PROJECT / "examples" / "inprocess_fcfs.py") + ":AvailabilityFcfs"
    spec = RunSpec(SMALL4, [str(PROJECT / "workloads" / "delays_small.json")],
                   Options(timing="ideal"), events=[str(PROJECT / "workloads" /
                                                        "events_small.jsonl")])
    calls, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler(scheduler)),
                              monkeypatch)
    assert any(isinstance(e, ev.Notify) and e.type == "event_machine_unavailable"
               for _, events in calls for e in events)


class Twice(DecisionProcess):
    """Executes the first job, then executes it again at its completion: a bad decision."""

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out: list = []
        for e in events:
            if isinstance(e, ev.JobSubmitted) and e.job.id.endswith("!0"):
                out.append(d.ExecuteJob(now, e.job.id, (0,)))
            elif isinstance(e, ev.JobCompleted):
                out.append(d.ExecuteJob(now, e.job_id, (1,)))
        return Reply(now, tuple(out))


class Never(DecisionProcess):
    """Takes no decision at all: the run stalls."""

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        return Reply(now, ())


# Bad schedulers, and what both runs of a pair must say (tests/sim/test_quiet_shortcuts.py too).
ERRORS = [(Twice, "is over (COMPLETED_SUCCESSFULLY) and was already reported"),
          (Never, "simulation stalled at t=20.0000")]  # (+ message latencies in batsim timing)


def errors_spec(tmp: Path, timing: str) -> RunSpec:
    """Three jobs of 3 s submitted 10 s apart, for ERRORS' schedulers."""
    jobs = [{"id": i, "subtime": 10.0 * i, "walltime": -1, "res": 1, "profile": "d3"}
            for i in range(3)]
    return RunSpec(SMALL4, [_workload(tmp, "w", jobs, PROFILES)], Options(timing=timing))


@pytest.mark.parametrize("scheduler, message", ERRORS)
def test_errors(scheduler: Callable[[], DecisionProcess], message: str, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> None:
    _, error = same_both_ways(tmp_path, errors_spec(tmp_path, "ideal"), scheduler, monkeypatch)
    assert message in error
    assert scheduler is not Never or "t=20.000000:" in error  # (ideal: no latency)


@pytest.mark.parametrize("profile, options, expected", [
    ({"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, {}, "is not a delay"),
    ({"type": "composed", "seq": ["d3", "p"]}, {}, "'p' is not a delay (parallel_homogeneous)"),
    ({"type": "delay", "delay": 3}, {"timing": "batsim"}, "--timing batsim"),
    ({"type": "delay", "delay": 3}, {"energy": True}, "the energy model"),
    ({"type": "delay", "delay": 3}, {"dynamic_jobs": True}, "dynamic jobs"),
])
def test_full_engine_where_lean_does_not_cover(
        profile: dict, options: dict, expected: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """The full engine runs, with one debug line saying why (ideal timing only)."""
    profiles = {"d3": PROFILES["d3"], "p": {"type": "parallel_homogeneous", "cpu": 1e9,
                                            "com": 0}, "x": profile}
    jobs = [{"id": 0, "subtime": 0, "walltime": -1, "res": 1, "profile": "x"}]
    path = _workload(tmp_path, "w", jobs, profiles)
    platform = str(PROJECT / "platforms" / "energy8.xml") if options.get("energy") else SMALL4
    kernel: list = []
    with caplog.at_level(logging.DEBUG, logger="batsim_py.sim.lean"):
        try:
            run_simulation(RunSpec(platform, [path], Options(**{
                "timing": "ideal", "export_prefix": str(tmp_path / "o"), **options})),
                InProcess(get_scheduler("fcfs")), setup=kernel.append)
        except SchedulerError as exc:  # (dynamic jobs: fcfs never ends the registrations)
            assert "stalled" in str(exc) and options.get("dynamic_jobs")
    assert kernel[0].kernel == "engine"
    lines = [r.getMessage() for r in caplog.records if "kernel:" in r.getMessage()]
    if options.get("timing") == "batsim":
        assert lines == []
    else:
        assert len(lines) == 1 and expected in lines[0], lines


def test_user_code_takes_the_full_engine(tmp_path: Path) -> None:
    """A SimPy process of the user (the Python API's `process`) needs the full engine."""
    from batsim_py.api import Simulator

    jobs = [{"id": i, "subtime": i, "walltime": -1, "res": 1, "profile": "d3"} for i in range(4)]
    path = _workload(tmp_path, "w", jobs, PROFILES)
    seen: list[float] = []

    def watcher(env: Any, sim: Any) -> Any:
        yield env.timeout(2.5)
        seen.append(env.now)

    simulator = Simulator(SMALL4, [path], scheduler="fcfs", timing="ideal")
    simulator.process(watcher)
    results = simulator.run()
    assert seen == [2.5] and simulator.sim.kernel == "engine"
    plain = Simulator(SMALL4, [path], scheduler="fcfs", timing="ideal")
    assert plain.run().csv("jobs") == results.csv("jobs") and plain.sim.kernel == "lean"


def _random_workload(tmp: Path, seed: int) -> list[str]:
    """Small random workloads that collide: subtimes on a coarse grid, delays from a few values
    (sub-precision, sub-window, fractions, whole seconds), walltimes, one or two workloads."""
    import random

    rng = random.Random(seed)
    delays = [1e-10, 4e-4, 0.5, 1, 2, 10 / 3, 7, 7.25]
    profiles: dict[str, dict] = {f"d{k}": {"type": "delay", "delay": v}
                                 for k, v in enumerate(delays)}
    profiles["seq"] = {"type": "composed", "repeat": 2, "seq": ["d1", "d3"]}
    names = list(profiles)
    paths = []
    for w in range(rng.choice((1, 2))):
        jobs = []
        for i in range(rng.randint(5, 30)):
            jobs.append({"id": i, "subtime": rng.choice((0, 0.5, 1)) * rng.randint(0, 12),
                         "walltime": rng.choice((-1, -1, 2, 7, 10 / 3)),
                         "res": rng.randint(1, 3), "profile": rng.choice(names)})
        paths.append(_workload(tmp, f"r{seed}_{w}", jobs, profiles))
    return paths


@pytest.mark.parametrize("seed", range(8))
def test_random_runs(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _random_workload(tmp_path, seed)
    for name, make in (("fcfs", lambda: InProcess(get_scheduler("fcfs"))),
                       ("easy", lambda: InProcess(get_scheduler("easy"))),
                       ("busy", lambda: Busy(later=seed % 2 == 0))):
        same_both_ways(tmp_path / name, RunSpec(SMALL4, paths, Options(timing="ideal")), make,
                       monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 108))
def test_many_random_runs(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    test_random_runs(seed, tmp_path, monkeypatch)
