"""The shipped examples/ run and keep their promises (through the Python API; the command-line
forms are in tests/cli/test_user_code.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import batsim_py

PROJECT = Path(__file__).resolve().parents[1]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  PROJECT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


closed_loop = example("closed_loop")
sampler_module = example("sampler")
failures_module = example("failures")
AVAILABLE = example("inprocess_fcfs").AvailabilityFcfs


def run_population(seed: int, users: int = 6):
    """The closed loop, with the number of its jobs in the system checked at every change."""
    sim = batsim_py.Simulator(SMALL4, [], scheduler="easy")
    in_system = {"now": 0, "max": 0, "changes": 0}

    def monitor(env, sim):
        submitted = sim.subscribe("job_submitted")
        ended = sim.subscribe("job_completed")

        def count(store, step):
            while True:
                yield store.get()
                in_system["now"] += step
                in_system["changes"] += 1
                in_system["max"] = max(in_system["max"], in_system["now"])
                assert sim.nb_jobs_in_system() <= users

        env.process(count(submitted, +1))
        env.process(count(ended, -1))

    sim.process(monitor)
    sim.process(closed_loop.population, users, closed_loop.JOBS_PER_USER,
                closed_loop.THINK, seed)
    results = sim.run()
    return results, in_system


def test_closed_loop_never_has_more_jobs_than_users_and_is_deterministic():
    results, in_system = run_population(seed=7)
    jobs = results.jobs
    assert len(jobs) == closed_loop.USERS * closed_loop.JOBS_PER_USER
    assert (jobs.final_state == "COMPLETED_SUCCESSFULLY").all()
    assert in_system["changes"] == 2 * len(jobs)
    assert in_system["now"] == 0
    assert 1 < in_system["max"] <= closed_loop.USERS
    # Each user's next job is submitted after its previous one ended (think time >= 0).
    for u in range(closed_loop.USERS):
        mine = jobs[jobs.job_id.str.startswith(f"u{u}_")].sort_values("submission_time")
        assert (mine.submission_time.values[1:] >= mine.finish_time.values[:-1]).all()
    again, _ = run_population(seed=7)
    assert again.csv("jobs") == results.csv("jobs")
    other, _ = run_population(seed=8)
    assert other.csv("jobs") != results.csv("jobs")


def test_closed_loop_with_a_larger_population_than_machines():
    results, in_system = run_population(seed=3, users=10)
    assert in_system["max"] <= 10
    assert len(results.jobs) == 10 * closed_loop.JOBS_PER_USER


def test_the_sampler_gathers_a_dataframe():
    sampler = sampler_module.Sampler(period=30)
    sim = batsim_py.Simulator(SMALL4, [DELAYS], scheduler=AVAILABLE)
    sim.process(failures_module.failures)
    sim.process(sampler)
    results = sim.run()
    frame = sampler.frame
    assert list(frame.columns) == ["time", "computing", "idle", "unavailable", "queued_jobs",
                                   "running_jobs"]
    assert frame.time.iloc[0] == 0
    assert frame.time.diff().dropna().round(6).eq(30).all()
    assert (frame.computing + frame.idle + frame.unavailable == 4).all()
    assert frame.unavailable.max() >= 1  # the failures show
    assert frame.computing.max() >= 1
    assert frame.time.iloc[-1] <= results.end_time


@pytest.mark.parametrize("seed", [1, 2])
def test_failures_are_seeded(seed):
    def run():
        sim = batsim_py.Simulator(SMALL4, [DELAYS], scheduler=AVAILABLE)
        sim.process(failures_module.failures, 100.0, 30.0, seed)
        return sim.run()

    first, second = run(), run()
    assert first.csv("jobs") == second.csv("jobs")
    assert first.schedule.time_unavailable.iloc[0] > 0


def test_results_frames_have_the_output_files_columns(tmp_path):
    prefix = tmp_path / "out"
    results = batsim_py.simulate(SMALL4, [DELAYS], scheduler="easy", export=str(prefix))
    for name in ("jobs", "schedule", "machine_states"):
        header = Path(f"{prefix}_{name}.csv").read_text().splitlines()[0]
        assert list(results.frame(name).columns) == header.split(",")
        assert results.csv(name) == Path(f"{prefix}_{name}.csv").read_text() or name == "schedule"


def test_results_go_through_the_analysis_metrics_as_the_files_do(tmp_path):
    from batsim_py.analysis.load import load_run, read_jobs
    from batsim_py.analysis.metrics import job_metrics

    prefix = tmp_path / "out"
    results = batsim_py.simulate(SMALL4, [DELAYS], scheduler="easy", export=str(prefix))
    from_file = read_jobs(f"{prefix}_jobs.csv")
    assert results.jobs.dtypes.to_dict() == from_file.dtypes.to_dict()
    assert job_metrics(results.jobs, 4) == job_metrics(from_file, 4)
    run = results.analysis_run("api")
    assert run.nb_machines == 4
    assert run.schedule["makespan"] == load_run(str(prefix)).schedule["makespan"]


def test_objects_instead_of_files():
    from batsim_py.platform.reader import load_platform
    from batsim_py.schedulers import EasyBackfill
    from batsim_py.workload.reader import load_workload

    by_files = batsim_py.simulate(SMALL4, [DELAYS], scheduler="easy")
    by_objects = batsim_py.simulate(load_platform(SMALL4), [load_workload(DELAYS, "w0")],
                                    scheduler=EasyBackfill())
    assert by_objects.csv("jobs") == by_files.csv("jobs")
