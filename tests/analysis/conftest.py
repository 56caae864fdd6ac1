"""Small runs whose metrics are computed by hand in the tests, simulated once per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


def simulate(out: Path, jobs: list[dict], *, platform: str = "small4.xml", scheduler: str = "fcfs",
             energy: bool = False, workloads: list[list[dict]] | None = None) -> str:
    """Run batsim-py in-process (ideal timing: dates exactly as written); return the output
    prefix. The CLI path is exercised by the report/stats tests on these outputs."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    paths = []
    for i, wl in enumerate(workloads or [jobs]):
        profiles = {f"d{j['delay']}": {"type": "delay", "delay": j["delay"]} for j in wl}
        path = out / f"w{i}.json"
        path.write_text(json.dumps({
            "nb_res": 4,
            "jobs": [{"id": j["id"], "subtime": j["subtime"], "res": j["res"],
                      "walltime": j.get("walltime", 1000), "profile": f"d{j['delay']}"}
                     for j in wl],
            "profiles": profiles,
        }))
        paths.append(str(path))
    prefix = str(out / "out")
    run_simulation(RunSpec(str(PROJECT / "platforms" / platform), paths,
                           Options(export_prefix=prefix, timing="ideal", energy=energy)),
                   InProcess(get_scheduler(scheduler)))
    return prefix


# j1 takes 2 machines at 0; j2 needs all 4 and waits for j1; FCFS keeps j3 and j4 behind j2;
# j4 hits its walltime (20 s of its 40).
FOUR_JOBS = [
    {"id": "j1", "subtime": 0, "res": 2, "delay": 100},
    {"id": "j2", "subtime": 10, "res": 4, "delay": 50},
    {"id": "j3", "subtime": 20, "res": 1, "delay": 5},
    {"id": "j4", "subtime": 30, "res": 2, "delay": 40, "walltime": 20},
]


@pytest.fixture(scope="session")
def four_jobs(tmp_path_factory: pytest.TempPathFactory) -> str:
    return simulate(tmp_path_factory.mktemp("four"), FOUR_JOBS)


@pytest.fixture(scope="session")
def four_jobs_easy(tmp_path_factory: pytest.TempPathFactory) -> str:
    return simulate(tmp_path_factory.mktemp("easy"), FOUR_JOBS, scheduler="easy")


@pytest.fixture(scope="session")
def four_jobs_energy(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The four jobs on energy8 (8 machines, -E)."""
    return simulate(tmp_path_factory.mktemp("energy"), FOUR_JOBS, platform="energy8.xml",
                    energy=True)
