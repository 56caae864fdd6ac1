"""Same inputs, same scheduler: byte-identical outputs (but the two wall-clock columns).

Ties between simultaneous events are broken as SimGrid does (see batsim_py/sim/engine.py):
activities completing in the same engine step wake their actors in creation order, and the
requests of the actors that ran in one round are handled in the order they ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.transcript import ReplayPeer
from batsim_py.run import run_simulation
from batsim_py.schedulers import get_scheduler
from conformance.cases import case_run_spec

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"
CASES = {
    "b2_paper800_easy_cluster32": "easy",
    "c5_ptask_cluster32_easy": "easy",
    "d2_energy_easy_nonet128": "easy",
    "e3_kill_batsched_killer2_delays_small": None,  # replayed
    "g2_extevents_batsched_filler_small": None,
}
WALL_CLOCK = ("scheduling_time", "simulation_time")


def run(case: str, scheduler: str | None, prefix: Path) -> None:
    peer = (InProcess(get_scheduler(scheduler)) if scheduler
            else ReplayPeer(str(REFERENCE / case / "transcript.jsonl")))
    run_simulation(case_run_spec(case, str(prefix)), peer)


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_runs_are_identical(case: str, tmp_path: Path) -> None:
    assert (REFERENCE / case).is_dir(), f"{case}: the shipped reference corpus is missing"
    run(case, CASES[case], tmp_path / "a")
    run(case, CASES[case], tmp_path / "b")
    files = sorted(p.name[2:] for p in tmp_path.glob("a_*.csv"))
    assert "jobs.csv" in files
    for name in files:
        a = (tmp_path / f"a_{name}").read_text()
        b = (tmp_path / f"b_{name}").read_text()
        if name == "schedule.csv":
            (ka, va), (_, vb) = (t.splitlines() for t in (a, b))
            keys = ka.split(",")
            skip = {keys.index(k) for k in WALL_CLOCK}
            a = [v for i, v in enumerate(va.split(",")) if i not in skip]
            b = [v for i, v in enumerate(vb.split(",")) if i not in skip]
        assert a == b, name
