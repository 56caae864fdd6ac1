"""The lean kernel's own step (`Lean.step`, a step that wakes one sleeper) against the
engine's (`Engine._step`): the same dates, the same step record, on a large reference case
and with the step record rebased every few steps (`engine.DELTAS` lowered)."""

from __future__ import annotations

import logging
from pathlib import Path

from conformance.cases import case_run_spec
from kernel_pair import output_files

import batsim_py.sim.engine as engine_module
from batsim_py.decision.inprocess import InProcess
from batsim_py.run import run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim import lean

CASE = "b4_hpc250_easy_nonet128"


def _run(tmp: Path, name: str) -> dict[str, bytes]:
    """The output files of b4 (250 jobs, in-process easy) in ideal timing."""
    prefix = tmp / name / "out"
    run_simulation(case_run_spec(CASE, str(prefix), timing="ideal"),
                   InProcess(get_scheduler("easy")))
    return output_files(prefix.parent)


def test_one_sleeper_steps_run_and_change_nothing(tmp_path, monkeypatch, caplog) -> None:
    """Most steps of a run at job granularity wake one sleeper: they take the quick path
    (counted in the kernel's debug line), and the files match the full engine's."""
    with caplog.at_level(logging.DEBUG, logger="batsim_py.sim.lean"):
        quick = _run(tmp_path, "quick")
    counts = [r.getMessage() for r in caplog.records if "steps of one sleeper" in r.getMessage()]
    assert len(counts) == 1
    steps = int(counts[0].split(", ")[-1].split()[0])
    assert steps > 250  # (b4: 250 jobs, a completion step each at least)
    monkeypatch.setenv(lean.SWITCH, "0")  # the full engine, every step its own
    assert _run(tmp_path, "engine") == quick


def test_rebasing_the_step_record_changes_no_date(tmp_path, monkeypatch) -> None:
    """With the step record rebased every 7 steps (the quick step records its delta through
    Engine.advance, which rebases as _step does), the dates are the same."""
    normal = _run(tmp_path, "normal")
    monkeypatch.setattr(engine_module, "DELTAS", 7)
    assert _run(tmp_path, "rebased") == normal
