"""What a run read (before it) and its survivors (after it, a record per job) are not left in
the collector's young generations: run.py's `build_simulation` and `execute` move them to the
oldest one, so the collector does not rescan them all at its next collection of a young
generation for nothing (f_50k's inputs: 62,000 objects; a million jobs' records: 0.6 s)."""

from __future__ import annotations

import gc
from pathlib import Path

from batsim_py import run as run_module
from batsim_py.decision.inprocess import InProcess
from batsim_py.run import RunSpec, build_simulation, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

ROOT = Path(__file__).resolve().parents[2]


def test_the_run_leaves_no_survivors_to_rescan(monkeypatch, tmp_path: Path) -> None:  # noqa: ANN001
    # Frequent collections of the young objects during the run (each moves the survivors up
    # a generation), none of the middle generation: all survivors end there without the fix.
    monkeypatch.setattr(run_module, "RUN_GC_THRESHOLDS", (100, 10_000, 10_000))
    sizes: list[int] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 1:
            sizes.append(len(gc.get_objects(generation=1)))

    spec = RunSpec(str(ROOT / "platforms" / "cluster128.xml"),
                   [str(ROOT / "workloads" / "gen_delay_1k_128.json")],
                   Options(export_prefix=str(tmp_path / "out")), write_outputs=False)
    gc.callbacks.append(watch)
    try:
        sim = run_simulation(spec, InProcess(get_scheduler("easy")))
        del sizes[:]  # (collections during the run, if any)
        gc.collect(1)  # the next collection of the middle generation, as the thresholds do
    finally:
        gc.callbacks.remove(watch)
    assert len(sim.job_records) == 1000
    assert sizes and sizes[-1] < 200  # (without the fix: the 1,000 records and more)


def test_the_inputs_read_are_not_left_young(tmp_path: Path) -> None:
    # Reading pauses the collector; re-enabled with everything read counted as young, its next
    # allocation would scan all of it (f_50k: 62,000 objects) for nothing. build_simulation
    # moves what it read to the oldest generation.
    spec = RunSpec(str(ROOT / "platforms" / "cluster128.xml"),
                   [str(ROOT / "workloads" / "gen_delay_1k_128.json")],
                   Options(export_prefix=str(tmp_path / "out")), write_outputs=False)
    gc.collect()
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 10, 10)  # (no collection of its own during the test)
    try:
        sim = build_simulation(spec, InProcess(get_scheduler("easy")))
        young = gc.get_count()[0]
        jobs_young = sum(1 for o in gc.get_objects(generation=0) if type(o).__name__ == "Job")
    finally:
        gc.set_threshold(*thresholds)
    assert len(sim.workloads[0].jobs) == 1000
    assert jobs_young == 0 and young < 200  # (without it: the 1,000 jobs and more)
