"""Memory kept per job must not creep back up: a million-job run has to stay under 1 GB
(benchmarks/bench_million.py), so every byte a job keeps costs a megabyte there.

The bounds come from tracemalloc measurements of this code (the figures are in each test, a
margin of about 25% on top); a change that keeps, say, each job's JSON object again (400 bytes
more per job) or a per-job dict fails them. Measured on Python 3.11 x86-64: the sizes of
objects differ on other builds, so the tests only run there.
"""

from __future__ import annotations

import gc
import json
import os
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from batsim_py.workload.generate import generate_delay_workload
from batsim_py.workload.reader import load_workload

ROOT = Path(__file__).resolve().parents[2]
NB_JOBS = 20_000

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11) or struct.calcsize("P") != 8,
    reason="the bounds were measured with CPython 3.11 on a 64-bit build",
)


def _workload(tmp_path: Path, nb_res: int) -> Path:
    path = tmp_path / "w.json"
    # (runtimes up to 600 s: a few hundred profiles, whose share per job is then small)
    workload = generate_delay_workload(NB_JOBS, nb_res, seed=3, load=0.7, max_runtime=600)
    path.write_text(json.dumps(workload))
    return path


def _kept_by(load: object) -> tuple[object, float]:
    """What calling `load()` keeps alive, in bytes per job (and its result)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = load()  # type: ignore[operator]
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return result, kept / NB_JOBS


def test_a_loaded_job_keeps_little(tmp_path: Path) -> None:
    """Measured 198 bytes per job in a fresh process (the Job and its two floats 144, its id
    57, the profiles' share), 294 after other tests filled the reader's bounded caches of
    shared numbers; 251 (fresh) when each job kept its name (54), 562 when it kept its JSON
    object too."""
    path = _workload(tmp_path, 128)
    workload, per_job = _kept_by(lambda: load_workload(str(path), "w0"))
    assert len(workload.jobs) == NB_JOBS  # type: ignore[attr-defined]
    assert per_job < 340, f"a loaded job keeps {per_job:.0f} bytes"


def _simulated_per_job(workload: str, prefix: str) -> float:
    """Bytes per job a whole in-process EASY run keeps (see the test below)."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, build_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    spec = RunSpec(str(ROOT / "platforms" / "cluster128.xml"), [workload],
                   Options(export_prefix=prefix))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sim = build_simulation(spec, InProcess(get_scheduler("easy")))
        seen: list[int] = []

        def on_end() -> None:  # (where execute() writes the outputs: not needed here)
            seen.append(tracemalloc.get_traced_memory()[0])
            tracemalloc.stop()

        # (the simulation is compiled: its methods cannot be wrapped, its hook can be set)
        sim.on_end = on_end
        sim.run()
    finally:
        tracemalloc.stop()
    assert len(sim.job_records) == NB_JOBS
    return (seen[0] - before) / NB_JOBS


@pytest.mark.slow
def test_a_simulated_job_keeps_little(tmp_path: Path) -> None:
    """A whole in-process EASY run (batsim timing, every output recorded), measured at the
    moment the outputs are about to be written, when the run keeps the most: 569 bytes per
    job on 128 hosts (709 when each job kept its name and its allocation object, 1,089 when
    it kept its JSON object too); 581 in session 8.

    Measured in a fresh process (this file run as a script): in a test worker, what earlier
    tests left behind once made the same run count 958 bytes per job (CI-like full suite,
    session 8; not reproduced in any order tried since), a bound on this code and not on
    the worker's history."""
    path = _workload(tmp_path, 128)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, __file__, str(path), str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    per_job = float(done.stdout.split()[-1])
    assert per_job < 700, f"a simulated job keeps {per_job:.0f} bytes"


if __name__ == "__main__":
    print(_simulated_per_job(sys.argv[1], sys.argv[2]))
