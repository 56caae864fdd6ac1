"""The full engine's shortcuts in `--timing batsim` (Simulation.quiet_wake, quiet_reply)
against the same runs made round by round.

Each run is made twice, with `BATSIM_PY_QUIET=0` (every message a transfer action, every
actor resumed in its rounds) and without (a completion or a batch handed to the waiting server
and the scheduler's reply applied without rounds where nothing can interleave), and must give
the same scheduler calls (every event of every batch, and the call's date) and the same output
files byte for byte (schedule.csv without its two wall-clock columns). The cases put in what
could interleave with a shortcut: jobs shorter than a message's transfer or within the
engine's 1 ms window, same-date submissions and completions, walltimes, decisions dated later
than the call, rejections, metadata, CALL_ME_LATER, kills, composed profiles, two workloads,
external events, parallel tasks and errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kernel_pair import assert_same, run_with
from test_lean import ERRORS, PROFILES, Busy, _jobs, _random_workload, _workload, errors_spec
from test_lean import _case_spec as lean_case_spec

from batsim_py.decision import events as ev
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.transcript import ReplayPeer
from batsim_py.run import RunSpec
from batsim_py.schedulers import get_scheduler
from batsim_py.sim import simulation
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
EQUIVALENT = {"schedFcfs": "fcfs", "easyBackfill": "easy"}
IN_PROCESS = ["a2_paper800_fcfs_cluster32", "a_delays_fcfs_small", "b2_paper800_easy_cluster32",
              "b4_hpc250_easy_nonet128",
              "b_delays_easy_small", "c1_mixed_profiles_easy_small",
              "c4_sequence_delay_fcfs_small", "c5_ptask_cluster32_easy",
              "e1_walltime_easy_cluster64"]
# Cases whose runs take the shortcuts (the others: a platform without latencies, so messages
# that take no time, or jobs' parallel tasks always in flight).
TAKEN = ["a2_paper800_fcfs_cluster32", "a_delays_fcfs_small", "b2_paper800_easy_cluster32",
         "b_delays_easy_small", "c4_sequence_delay_fcfs_small"]
REPLAYED = ["b3_paper800_easysjf_cluster32", "b5_paper800_batsched_easy_cluster32",
            "e2_kill_batsched_killer_seq_small", "e3_kill_batsched_killer2_delays_small",
            "e4_kill_pybatsim_fcfsKiller_seq_small", "e5_reject_batsched_rejecter_small"]


def same_both_ways(tmp: Path, spec: RunSpec, make: Callable[[], DecisionProcess],
                   monkeypatch: pytest.MonkeyPatch) -> tuple[list, Any, str]:
    """Run round by round and with the shortcuts; assert both agree. The calls, the
    simulation with shortcuts and the error (if any)."""
    rounds = run_with(tmp / "rounds", spec, make, {simulation.SHORTCUTS: "0"}, monkeypatch)
    quiet = run_with(tmp / "quiet", spec, make, {simulation.SHORTCUTS: None}, monkeypatch)
    assert rounds.sim.quiet_replies == rounds.sim.quiet_wakes == 0
    assert_same(rounds, quiet)
    return quiet.calls, quiet.sim, quiet.error


def _case_spec(case: str) -> tuple[RunSpec, dict]:
    return lean_case_spec(case, "batsim", with_energy=True)


@pytest.mark.parametrize("case", IN_PROCESS)
def test_reference_cases_in_process(case: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    spec, raw = _case_spec(case)
    name = EQUIVALENT[raw["scheduler"]["name"]]
    _, sim, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler(name)),
                               monkeypatch)
    if case in TAKEN:
        assert sim.quiet_replies > 0 and sim.quiet_wakes > 0


@pytest.mark.parametrize("case", REPLAYED)
def test_reference_cases_replayed(case: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _case_spec(case)
    transcript = str(REFERENCE / case / "transcript.jsonl")
    same_both_ways(tmp_path, spec, lambda: ReplayPeer(transcript), monkeypatch)


def test_energy_takes_no_shortcut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The energy plugin updates hosts at every transfer's end: no shortcut, same run."""
    spec, _ = _case_spec("d2_energy_easy_nonet128")
    _, sim, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler("easy")),
                               monkeypatch)
    assert sim.quiet_replies == sim.quiet_wakes == 0


# Delays around a message's transfer on small4 (tens of microseconds) and the 1 ms window.
SHORT = {**PROFILES, "us": {"type": "delay", "delay": 2e-5}, "us2": {"type": "delay",
                                                                      "delay": 1.3e-4}}


@pytest.mark.parametrize("scheduler", ["fcfs", "easy"])
def test_ties_short_delays_walltimes_two_workloads(scheduler: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs ending together and with submissions, jobs shorter than a transfer, than the
    clock's precision or within the 1 ms window, walltimes reached, composed sequences, two
    workloads submitting at the same dates."""
    jobs = _jobs(80, list(SHORT))
    paths = [_workload(tmp_path, f"w{k}", jobs[k::2], SHORT) for k in range(2)]
    calls, sim, _ = same_both_ways(tmp_path, RunSpec(SMALL4, paths, Options()),
                                   lambda: InProcess(get_scheduler(scheduler)), monkeypatch)
    assert sim.quiet_replies > 0
    states = {e.job_state for _, events in calls for e in events
              if isinstance(e, ev.JobCompleted)}
    assert {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"} <= states


def test_rejections_metadata_callbacks_kills_later_decisions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = {"d50": {"type": "delay", "delay": 50}, "d7": {"type": "delay", "delay": 7},
                "seq": {"type": "composed", "repeat": 3, "seq": ["d7", "d50"]},
                "tiny": {"type": "delay", "delay": 1e-10}}
    jobs = _jobs(40, list(profiles), step=5.0, group=2)
    path = _workload(tmp_path, "w", jobs, profiles)
    for later in (True, False):
        calls, sim, _ = same_both_ways(tmp_path / str(later), RunSpec(SMALL4, [path], Options()),
                                       lambda later=later: Busy(later=later), monkeypatch)
        kinds = {type(e) for _, events in calls for e in events}
        assert {ev.JobKilled, ev.RequestedCall} <= kinds
        assert sim.quiet_replies > 0


def test_external_events_and_parallel_tasks(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler = str(PROJECT / "examples" / "inprocess_fcfs.py") + ":AvailabilityFcfs"
    spec = RunSpec(SMALL4, [str(PROJECT / "workloads" / "delays_small.json")], Options(),
                   events=[str(PROJECT / "workloads" / "events_small.jsonl")])
    calls, _, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler(scheduler)),
                                 monkeypatch)
    assert any(isinstance(e, ev.Notify) and e.type == "event_machine_unavailable"
               for _, events in calls for e in events)


@pytest.mark.parametrize("scheduler, message", ERRORS)
def test_errors(scheduler: Callable[[], DecisionProcess], message: str, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, error = same_both_ways(tmp_path, errors_spec(tmp_path, "batsim"), scheduler,
                                 monkeypatch)
    assert message in error


@pytest.mark.parametrize("seed", range(6))
def test_random_runs(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _random_workload(tmp_path, seed)
    for name, make in (("fcfs", lambda: InProcess(get_scheduler("fcfs"))),
                       ("easy", lambda: InProcess(get_scheduler("easy"))),
                       ("busy", lambda: Busy(later=seed % 2 == 0))):
        same_both_ways(tmp_path / name, RunSpec(SMALL4, paths, Options()), make, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 86))
def test_many_random_runs(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    test_random_runs(seed, tmp_path, monkeypatch)


@pytest.mark.slow
def test_f_10k(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _case_spec("f_10k_easy_cluster128_quiet")
    calls, sim, _ = same_both_ways(tmp_path, spec, lambda: InProcess(get_scheduler("easy")),
                                   monkeypatch)
    assert sum(isinstance(e, ev.JobCompleted) for _, events in calls for e in events) == 10_000
    assert sim.quiet_replies > 19_000 and sim.quiet_wakes > 19_000
