"""Issue 21: termination is a property of the code. The solver bounds its literal rounds and
the kernel its steps without progress; reaching either is one clear error, never a spin."""

from __future__ import annotations

import numpy as np
import pytest

import batsim_py.sharing.solver as solver_module
import batsim_py.sim.engine as engine_module
from batsim_py.errors import SimulationError
from batsim_py.sharing.solver import Usage, fair_bottleneck_info
from batsim_py.sim.engine import EXEC, TASK, Actor, Engine


def test_the_solver_stops_at_its_round_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stale-increment case needs two literal rounds: with a bound of 1 it stops."""
    usage = Usage.from_dense([[1e7, 0, 1e7, 0], [1e7, 0, 0, 0], [1e7, 4e6, 0, 0],
                              [0, 1e7, 0, 2e7]])
    args = (usage, [1e7, 4e6, 1e6, 1e6], [False] * 4, [0.1, np.inf, np.inf, 0.05])
    _, info = fair_bottleneck_info(*args)
    assert info.literal == 2
    monkeypatch.setattr(solver_module, "MAX_ROUNDS", 1)
    with pytest.raises(SimulationError, match=r"did not settle after 1 rounds \(4 activities"):
        fair_bottleneck_info(*args)


def test_the_kernel_names_the_jobs_when_the_solver_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    from family_support import one_crowded_task

    row, network = one_crowded_task()
    engine = Engine()
    engine.network = network

    def job():
        yield (EXEC, row, -1.0)

    engine.spawn(job(), "w0!crowded")
    monkeypatch.setattr(solver_module, "MAX_ROUNDS", 1)
    with pytest.raises(SimulationError, match=r"^at t=0\.0, sharing the resources of job "
                       r"w0!crowded: the fair-bottleneck sharing did not settle after 1 rounds"):
        engine.run()


def test_the_kernel_stops_after_steps_without_progress() -> None:
    """The spin of issue 21 (a remaining amount of nan: never done, a zero step each time),
    planted directly: the kernel reports it after MAX_IDLE_STEPS instead of looping."""

    def idle():
        yield

    engine = Engine()
    stuck = engine_module._Action(TASK, 0.0, float("nan"), 1)
    stuck.rate = 1.0
    stuck.actor = Actor(idle(), "w0!stuck")
    engine._actions.append(stuck)
    with pytest.raises(SimulationError, match=r"made 1000 steps without progress \(job w0!stuck\)"):
        engine.run()
