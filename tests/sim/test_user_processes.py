"""User SimPy processes inside the kernel: equivalence with Batsim's own submitters, the
clock of `env.timeout`, signals, and a run without user code left untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import simpy

import batsim_py
from batsim_py.sim.engine import SLEEP, Engine
from batsim_py.sim.simpy_env import KernelEnvironment
from batsim_py.sim.submitter import submission_order
from batsim_py.workload.events import load_events
from batsim_py.workload.reader import load_workload

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = str(ROOT / "platforms" / "small4.xml")
WORKLOAD = str(ROOT / "workloads" / "delays_small.json")
MIXED = str(ROOT / "workloads" / "mixed_small.json")
SCHEDULER = str(ROOT / "examples" / "inprocess_fcfs.py") + ":AvailabilityFcfs"
# Batsim's reference events (g2): at 0, 10, 20, 250 and 300 s, on 4 machines.
EVENTS = """\
{"type": "machine_unavailable", "resources": "0", "timestamp" : 0}
{"type": "machine_available", "resources": "0", "timestamp" : 10}
{"type": "machine_unavailable", "resources": "0-1 3", "timestamp" : 20}
{"type": "machine_available", "resources": "0 1", "timestamp" : 250}
{"type": "machine_available", "resources": "3", "timestamp" : 300}
{"type": "machine_unavailable", "resources": "2", "timestamp" : 300}
{"type": "machine_available", "resources": "2", "timestamp" : 300.000001}
"""
WALL_CLOCK = ("scheduling_time", "simulation_time")


def outputs(prefix: Path) -> dict[str, str]:
    """Every output file of a run; schedule.csv without its wall-clock columns."""
    texts = {}
    for path in sorted(prefix.parent.glob(prefix.name + "_*")):
        text = path.read_text()
        if path.name.endswith("_schedule.csv"):
            header, row = text.splitlines()
            keep = [i for i, name in enumerate(header.split(",")) if name not in WALL_CLOCK]
            text = "\n".join(",".join(line.split(",")[i] for i in keep) for line in (header, row))
        texts[path.name.split("_", 1)[1]] = text
    return texts


def submitter_like(source, items, post):
    """Batsim's submitter loop (batsim-semantics 6.3), written as a SimPy process: wait for
    the hello; items due by the date last recorded go in one batch; before sleeping to a later
    date, post the batch and wait until the server got it; sleep from the recorded date."""

    def process(env, sim):
        yield source.ready
        current = env.now
        batch = []
        for item, due in items:
            if due > current:
                if batch:
                    yield post(batch)
                    batch = []
                yield env.timeout(due - current)
                current = env.now
            batch.append(item)
        if batch:
            yield post(batch)
        yield source.close()

    return process


def run_with_events_file(tmp_path: Path, **options) -> dict[str, str]:
    events = tmp_path / "events.txt"
    events.write_text(EVENTS)
    prefix = tmp_path / "file" / "out"
    batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler=SCHEDULER, events=[str(events)],
                        export=str(prefix), **options).run()
    return outputs(prefix)


def test_events_from_a_process_are_byte_identical_to_the_events_file(tmp_path):
    expected = run_with_events_file(tmp_path)
    prefix = tmp_path / "simpy" / "out"
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler=SCHEDULER, export=str(prefix))
    source = sim.event_source()
    events = load_events(str(tmp_path / "events.txt"), "we0").events  # Batsim's order
    items = [({"type": e.type, "resources": list(e.resources)}, e.timestamp) for e in events]
    sim.process(submitter_like(source, items, source.send))
    sim.run()
    got = outputs(prefix)
    assert set(got) == {"jobs.csv", "schedule.csv", "machine_states.csv", "schedule.trace"}
    for name in expected:
        assert got[name] == expected[name], name
    # The events did change the run (the test would catch a source that posts nothing).
    assert expected != outputs_without_events(tmp_path)


def outputs_without_events(tmp_path: Path) -> dict[str, str]:
    prefix = tmp_path / "none" / "out"
    batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler=SCHEDULER, export=str(prefix)).run()
    return outputs(prefix)


@pytest.mark.parametrize("workload,scheduler", [(WORKLOAD, "easy"), (MIXED, "fcfs")])
def test_jobs_from_a_process_give_the_jobs_csv_of_the_workload_file(tmp_path, workload,
                                                                    scheduler):
    file_prefix = tmp_path / "file" / "out"
    batsim_py.Simulator(PLATFORM, [workload], scheduler=scheduler,
                        export=str(file_prefix)).run()
    wl = load_workload(workload, "w0")
    prefix = tmp_path / "simpy" / "out"
    sim = batsim_py.Simulator(PLATFORM, [], scheduler=scheduler, export=str(prefix))
    source = sim.job_source(wl.profiles, name="w0", path=wl.path)
    items = [(job, job.subtime) for job in submission_order(wl)]
    sim.process(submitter_like(source, items, lambda jobs: source.submit_many(jobs)[0].received))
    sim.run()
    expected = (file_prefix.parent / "out_jobs.csv").read_text()
    assert expected.count("\n") == len(wl.jobs) + 1
    assert (prefix.parent / "out_jobs.csv").read_text() == expected


def test_an_idle_process_changes_nothing(tmp_path):
    plain = tmp_path / "plain" / "out"
    batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy", export=str(plain)).run()
    idle = tmp_path / "idle" / "out"
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy", export=str(idle))

    def waits_forever(env, sim):
        yield env.event()

    sim.process(waits_forever)
    sim.run()
    assert outputs(idle) == outputs(plain)


# ----------------------------------------------------------------------- the clock
AWKWARD = (0.1, 1e-7, 1e9 + 0.3)


def background(engine: Engine):
    """Kernel activity that makes the clock carry rounding: sleeps of 0.1 and 1/3."""
    def sleeper(d: float, n: int):
        for _ in range(n):
            yield (SLEEP, d)

    engine.spawn(sleeper(0.1, 7))
    engine.spawn(sleeper(1 / 3, 5))


def kernel_wake(start_after: int, d: float) -> tuple[float, float]:
    """The date a kernel actor's own sleep of d ends, started after `start_after` sleeps of
    0.1 (the kernel alone: no SimPy)."""
    engine = Engine()
    background(engine)
    seen = {}

    def actor():
        for _ in range(start_after):
            yield (SLEEP, 0.1)
        seen["t"] = engine.now
        yield (SLEEP, d)
        seen["wake"] = engine.now

    engine.spawn(actor())
    engine.run()
    return seen["t"], seen["wake"]


def simpy_wake(start_after: int, d: float) -> tuple[float, float]:
    engine = Engine()
    background(engine)
    env = KernelEnvironment(engine)
    seen = {}

    def process():
        for _ in range(start_after):
            yield env.timeout(0.1)
        seen["t"] = env.now
        yield env.timeout(d)
        seen["wake"] = env.now

    env.process(process())
    engine.run()
    return seen["t"], seen["wake"]


@pytest.mark.parametrize("d", AWKWARD)
@pytest.mark.parametrize("start_after", [0, 3, 7])
def test_a_timeout_wakes_where_the_kernels_own_sleep_does(d, start_after):
    t, wake = simpy_wake(start_after, d)
    assert (t, wake) == kernel_wake(start_after, d)
    assert wake - t == pytest.approx(d, rel=1e-6)


def test_the_clock_is_simgrids_not_simpys():
    """The kernel's dates carry the rounding of every step: a timeout from a date reached
    through several steps is not always `t + d` (the test above would catch SimPy's sum)."""
    differences = [simpy_wake(n, d) for n in (3, 7) for d in AWKWARD]
    assert any(wake != t + d for (t, wake), d in zip(differences, AWKWARD * 2, strict=True))


def test_simpy_primitives_work_inside_the_kernel():
    engine = Engine()
    env = KernelEnvironment(engine)
    log = []
    resource = simpy.Resource(env, capacity=1)
    store = simpy.Store(env)

    def user(name, hold):
        with resource.request() as req:
            yield req
            log.append((name, "got", env.now))
            yield env.timeout(hold)
        store.put(name)

    def collector():
        first = yield store.get()
        both = yield env.all_of([store.get(), env.timeout(10)])
        log.append(("collected", first, sorted(both.values(), key=str), env.now))
        either = yield env.any_of([env.timeout(1), env.event()])
        log.append(("any", len(either.todict()), env.now))

    env.process(user("a", 2))
    env.process(user("b", 3))
    env.process(collector())
    engine.run()
    assert log == [("a", "got", 0.0), ("b", "got", 2.0),
                   ("collected", "a", [None, "b"], 12.0), ("any", 1, 13.0)]


def test_signals_and_state_reads(tmp_path):
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy")
    seen = {"submitted": 0, "started": 0, "completed": 0, "calls": 0, "max_running": 0}
    first = {}

    def watcher(env, sim):
        submitted = sim.subscribe("job_submitted")
        started = sim.subscribe("job_started")
        completed = sim.subscribe("job_completed")
        calls = sim.subscribe("scheduler_called")

        def count(store, key):
            while True:
                yield store.get()
                seen[key] += 1
                seen["max_running"] = max(seen["max_running"], len(sim.running()))

        for store, key in ((submitted, "submitted"), (started, "started"),
                           (completed, "completed"), (calls, "calls")):
            env.process(count(store, key))
        record = yield sim.signal("job_completed")
        first["record"] = record
        first["now"] = env.now
        first["states"] = sim.machine_states()

    sim.process(watcher)
    results = sim.run()
    assert seen["submitted"] == seen["started"] == seen["completed"] == 20
    assert seen["calls"] > 20
    assert 1 <= seen["max_running"] <= 4
    record = first["record"]
    row = results.jobs[results.jobs.job_id == record.job.name].iloc[0]
    assert row.final_state == record.final_state == "COMPLETED_SUCCESSFULLY"
    assert first["now"] >= record.end_time
    assert set(first["states"]) <= {"idle", "computing"}


def test_stop_ends_the_run_and_keeps_what_was_simulated(tmp_path):
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy",
                              export=str(tmp_path / "out"))
    results = sim.run(until=100)
    assert results.stopped
    assert results.end_time == pytest.approx(100)
    full = batsim_py.simulate(PLATFORM, [WORKLOAD], scheduler="easy")
    assert 0 < len(results.jobs) < len(full.jobs)
    assert (results.jobs.finish_time <= 100).all()
    assert os.path.exists(tmp_path / "out_jobs.csv")


def test_an_exception_in_a_process_names_it():
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy")

    def broken(env, sim):
        yield env.timeout(5)
        return 1 / 0

    sim.process(broken)
    with pytest.raises(batsim_py.api.UserCodeError) as info:
        sim.run()
    message = str(info.value)
    assert "SimPy process 'broken'" in message
    assert "test_user_processes.py:" in message
    assert "t=5.000000" in message and "ZeroDivisionError" in message
    assert sim.results.jobs is not None  # results so far are there


def test_reading_energy_disturbs_nothing(tmp_path):
    """`sim.energy()` reads without an update point of the energy model: a process reading it
    at every job end leaves every output byte for byte (energy files included)."""
    energy_platform = str(ROOT / "platforms" / "energy8.xml")
    plain = tmp_path / "plain" / "out"
    batsim_py.Simulator(energy_platform, [MIXED], scheduler="easy", energy=True,
                        export=str(plain)).run()
    reader = tmp_path / "reader" / "out"
    sim = batsim_py.Simulator(energy_platform, [MIXED], scheduler="easy", energy=True,
                              export=str(reader))
    readings = []

    def read_energy(env, sim):
        ended = sim.subscribe("job_completed")
        while True:
            yield ended.get()
            readings.append((env.now, sim.energy()))

    sim.process(read_energy)
    sim.run()
    assert outputs(reader) == outputs(plain)
    assert "consumed_energy.csv" in outputs(plain)
    assert len(readings) > 3
    joules = [j for _, j in readings]
    assert joules == sorted(joules) and joules[0] > 0


def test_sources_created_during_the_run():
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler=SCHEDULER)
    late = {}

    def outage(env, sim):
        yield env.timeout(30)
        source = sim.event_source()  # during the run: says hello at once
        yield source.ready
        yield source.unavailable([1, 2])
        yield env.timeout(100)
        yield source.available([1, 2])
        yield source.close()

    def too_late(env, sim):
        yield sim.signal("scheduler_called")
        while sim.sim.nb_submitters_done < sim.sim.nb_submitters:
            yield sim.signal("scheduler_called")
        try:
            sim.job_source({"p": {"type": "delay", "delay": 1}})
        except batsim_py.api.UserCodeError as exc:
            late["error"] = str(exc)

    sim.process(outage)
    sim.process(too_late)
    results = sim.run()
    assert results.schedule.time_unavailable[0] == pytest.approx(200, rel=1e-3)
    assert "already told that no more jobs will come" in late["error"]


def test_generic_events_reach_the_scheduler():
    from batsim_py.decision.events import Notify
    from batsim_py.schedulers import get_scheduler

    class Recording:
        """EASY, recording the NOTIFY events it is handed."""

        def __init__(self):
            self.inner = get_scheduler("easy")
            self.notes = []

        def exchange(self, now, events):
            self.notes += [(now, e) for e in events if isinstance(e, Notify)]
            return self.inner.exchange(now, events)

        def close(self):
            pass

    scheduler = Recording()
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler=scheduler)
    source = sim.event_source()

    def cap(env, sim):
        yield source.ready
        yield env.timeout(42)
        yield source.generic({"type": "power_cap", "watts": 1200})

    sim.process(cap)
    sim.run()
    generic = [(t, e) for t, e in scheduler.notes if e.type == "generic"]
    assert len(generic) == 1
    t, event = generic[0]
    assert event.data == {"type": "power_cap", "watts": 1200}
    assert 42 < t < 42.001  # posted at 42, received after Batsim's message delay
    kinds = [e.type for _, e in scheduler.notes]
    assert "no_more_external_event_to_occur" in kinds  # the source was closed at the end


def test_env_run_runs_the_simulation_from_outside_only():
    sim = batsim_py.Simulator(PLATFORM, [WORKLOAD], scheduler="easy")
    env = sim.env
    errors = []

    def tries_to_run(env, sim):
        yield env.timeout(1)
        try:
            env.run()
        except batsim_py.api.UserCodeError as exc:
            errors.append(str(exc))

    sim.process(tries_to_run)
    env.run(until=50)  # SimPy's spelling of Simulator.run(until=50)
    results = sim.results
    assert results.stopped and results.end_time == pytest.approx(50)
    assert len(errors) == 1 and "from outside" in errors[0]
