"""The closed-form catch-up of pending sleeps (sim/replay.py, issue 12 item 7) gives exactly
the value of SimGrid's step-by-step rounded subtraction, ties, binade crossings and floors
included; and N pending CALL_ME_LATERs no longer cost O(N^2)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from cost_bounds import best_seconds, cpu_seconds

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options
from batsim_py.sim.replay import DeltaReplay

PROJECT = Path(__file__).resolve().parents[2]


def sequential(rem: float, deltas: list[float]) -> float:
    for x in deltas:
        rem -= x
    return rem


@pytest.mark.parametrize("seed", range(8))
def test_fold_is_the_sequential_fold(seed: int) -> None:
    rng = random.Random(seed)
    n = 6000
    kinds = [lambda: rng.random() * 10 ** rng.randint(-7, 1), lambda: 1.5e-5,
             lambda: 0.99997,  # odd mantissa in [0.5, 1): a tie for values in [1, 2)
             lambda: 2.0 ** -rng.randint(1, 60), lambda: float(rng.randint(1, 3)),
             lambda: rng.choice([0.0, 5e-324, 1e-300])]
    deltas = np.array([rng.choice(kinds)() for _ in range(n)])
    replay = DeltaReplay()
    checked = 0
    for _ in range(60):
        u = rng.randrange(0, n - 300)
        k = rng.randrange(u + 300, n + 1)
        total = float(deltas[u:k].sum())
        for rem in (total + rng.choice([1e-9, 1e-6, 1e-3, 1.0, 1e3]), 2.0 ** rng.randint(0, 20),
                    total * rng.uniform(1.0001, 4)):
            got = replay.fold(rem, deltas, u, k)
            if got < 0:
                continue
            assert got == sequential(rem, deltas[u:k].tolist()), (seed, rem, u, k)
            checked += 1
    assert checked > 100


class ManyCalls(DecisionProcess):
    """Asks at t=0 to be called at 1, 2, ..., n."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls: list[float] = []

    def exchange(self, now: float, events: list) -> d.Reply:
        out: list = []
        for e in events:
            if isinstance(e, ev.SimulationBegins):
                out += [d.CallMeLater(now, float(t)) for t in range(1, self.n + 1)]
            elif isinstance(e, ev.JobSubmitted):
                out.append(d.ExecuteJob(now, e.job_id, (0,)))
            elif isinstance(e, ev.RequestedCall):
                self.calls.append(now)
        return d.Reply(now, tuple(out))


def run_calls(tmp_path: Path, n: int) -> tuple[float, list[float]]:
    """CPU seconds of a run whose scheduler asks at t=0 to be called at 1, 2, ..., n (the
    workload written and the platform file read beforehand), and the dates of the calls."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({
        "nb_res": 1, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 1}}}))
    sched = ManyCalls(n)
    spec = RunSpec(str(PROJECT / "platforms" / "small4.xml"), [str(workload)],
                   Options(export_prefix=str(tmp_path / f"o{n}")))
    seconds = cpu_seconds(lambda: run_simulation(spec, sched))
    return seconds, sched.calls


def test_pending_call_me_laters_scale_near_linearly(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 -> 12,000 pending calls: the catch-ups' lengths add up quadratically (every
    pending sleep is brought up to date over the steps since its last update: about 26 M steps
    for 3,000 calls, 497 M for 12,000), and beyond engine.REPLAY_FROM's 8,192 steps each takes
    the closed form (DeltaReplay.fold), never the replay of its steps.

    That is checked by counting, not by timing: every fold of the run must answer (the O(N^2)
    this guards against is fold answering -1.0, the caller then replaying every step; its CPU
    time ratio, 12-14x, was too close to the good one, 4-7x, to tell them apart under load).
    A CPU-time ratio stays as a backstop against any other quadratic cost (a Python loop over
    the steps: 16x and more): below 12, the sizes taking turns over up to 3 rounds, larger
    first, best time each (tests/cost_bounds.py)."""
    folds: dict[int, list[int]] = {12000: [0, 0, 0], 3000: [0, 0, 0]}  # calls, -1.0s, steps
    fold = DeltaReplay.fold

    def sample(n: int) -> float:
        count = folds[n]
        count[:] = [0, 0, 0]

        def counted(self: DeltaReplay, rem: float, deltas: object, u: int, k: int) -> float:
            value = fold(self, rem, deltas, u, k)
            count[0] += 1
            count[1] += value < 0.0
            count[2] += k - u
            return value

        with monkeypatch.context() as m:
            m.setattr(DeltaReplay, "fold", counted)
            seconds, calls = run_calls(tmp_path, n)
        assert len(calls) == n and all(abs(t - (i + 1)) < 1e-3 for i, t in enumerate(calls))
        return seconds

    best = best_seconds({12000: lambda: sample(12000), 3000: lambda: sample(3000)},
                        holds=lambda b: b[12000] / b[3000] < 12, rounds=3)
    for n, (calls, refused, _) in folds.items():
        assert calls > 0 and refused == 0, f"{n} pending calls: fold refused {refused} of {calls}"
    assert folds[12000][2] > 10 * folds[3000][2]  # (4x the calls, 19x the steps folded)
    ratio = best[12000] / best[3000]
    assert ratio < 12, (f"3,000 calls: {best[3000]:.2f} s, 12,000: {best[12000]:.2f} s "
                        f"({ratio:.1f}x)")
