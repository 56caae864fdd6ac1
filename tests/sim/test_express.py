"""The lean `--timing ideal` (sim/express.py) against the general kernel's ideal mode.

Each run is made by both kernels (`BATSIM_PY_EXPRESS=0` forces the general one): the scheduler
must get the same calls (every event of every batch, same timestamps) and every output file
must be the same, byte for byte (but schedule.csv's two wall-clock columns). `Simulation.kernel`
says which kernel ran, so each test also checks that the lean one did run where it should and
that runs it does not cover fall back to the general one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import BatsimPyError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim import express
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
EQUIVALENT = {"schedFcfs": "fcfs", "easyBackfill": "easy"}


class Recorder(DecisionProcess):
    """Keeps every call: its date and events (batches as the scheduler got them)."""

    def __init__(self, inner: DecisionProcess) -> None:
        self.inner = inner
        self.calls: list[tuple[float, tuple[Event, ...]]] = []

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self.calls.append((now, tuple(events)))
        return self.inner.exchange(now, events)

    def close(self) -> None:
        self.inner.close()


def _run(tmp: Path, platform: str, workloads: list[str], scheduler: Any, lean: bool,
         monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[str, list, dict, str]:
    """One run; (kernel, calls, output files, error text or "")."""
    prefix = tmp / ("express" if lean else "general") / "out"
    monkeypatch.setenv(express.SWITCH, "1" if lean else "0")
    decision = InProcess(get_scheduler(scheduler)) if isinstance(scheduler, str) else scheduler()
    recorder = Recorder(decision)
    mmax_workload = options.pop("mmax_workload", False)
    kernel = []
    error = ""
    try:
        run_simulation(RunSpec(platform, workloads,
                               Options(export_prefix=str(prefix), timing="ideal", **options),
                               mmax_workload=mmax_workload), recorder,
                       setup=lambda sim: kernel.append(sim))
    except BatsimPyError as exc:
        error = str(exc)
    assert kernel, f"the run did not start: {error}"
    files = {}
    for path in sorted(prefix.parent.iterdir()):
        data = path.read_bytes()
        if path.name.endswith("schedule.csv"):  # its two wall-clock columns vary
            header, row = data.decode().splitlines()
            names, values = header.split(","), row.split(",")
            data = ",".join(v for n, v in zip(names, values, strict=True)
                            if n not in ("simulation_time", "scheduling_time")).encode()
        files[path.name] = data
    return kernel[0].kernel, recorder.calls, files, error


def same_both_ways(tmp: Path, monkeypatch: pytest.MonkeyPatch, platform: str,
                   workloads: list[str], scheduler: Any, expect: str = "express",
                   **options: Any) -> tuple[list, str]:
    """Run with both kernels; the lean one must be `expect` ("general": it must step aside)."""
    k_old, calls_old, files_old, err_old = _run(tmp, platform, workloads, scheduler, False,
                                                monkeypatch, **dict(options))
    k_new, calls_new, files_new, err_new = _run(tmp, platform, workloads, scheduler, True,
                                                monkeypatch, **dict(options))
    assert k_old == "general"
    assert k_new == expect
    assert err_new == err_old
    assert "out_jobs.csv" in files_old and files_old.keys() == files_new.keys()
    assert len(calls_new) == len(calls_old)
    for k, (old, new) in enumerate(zip(calls_old, calls_new, strict=True)):
        assert new == old, f"call {k} differs"
    for name in files_old:
        assert files_new[name] == files_old[name], name
    return calls_new, err_new


def _covered(case: str) -> bool:
    spec = json.loads((REFERENCE / case / "case.json").read_text())
    return (spec["scheduler"]["name"] in EQUIVALENT and "--energy" not in spec["batsim_args"]
            and not spec.get("events"))


CASES = sorted(p.name for p in REFERENCE.iterdir() if (p / "case.json").is_file()
               and _covered(p.name))


def _case(case: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = REFERENCE / case
    spec = json.loads((folder / "case.json").read_text())
    workloads = [str(folder / w) for w in spec["workloads"]]
    loaded = [json.loads(Path(w).read_text()) for w in workloads]
    delays = all(p["type"] == "delay" for w in loaded for p in w["profiles"].values())
    same_both_ways(tmp, monkeypatch, str(folder / spec["platform"]), workloads,
                   EQUIVALENT[spec["scheduler"]["name"]],
                   expect="express" if delays else "general",
                   mmax_workload="--mmax-workload" in spec["batsim_args"])


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("f_")])
def test_reference_cases(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _case(case, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("f_")])
def test_large_reference_cases(case: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    _case(case, tmp_path, monkeypatch)


class Chaos(DecisionProcess):
    """Seeded random decisions of every kind the covered runs allow: executions on random free
    machines, rejections, kills (of running and of already finished jobs), job metadata,
    CALL_ME_LATERs (some 10 us away), NOTIFY, decisions dated after `now` (the reply is then
    applied over time, while jobs end and arrive) and replies whose `now` is later still."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.free: list[int] = []
        self.queue: list[Any] = []
        self.running: dict[str, tuple[int, ...]] = {}
        self.killed: set[str] = set()

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        rng = self.rng
        for e in events:
            if isinstance(e, ev.SimulationBegins):
                self.free = list(range(e.nb_compute_resources))
            elif isinstance(e, ev.JobSubmitted):
                self.queue.append(e.job)
            elif isinstance(e, ev.JobCompleted) and e.job_id in self.running:
                self.free = sorted(self.free + list(self.running.pop(e.job_id)))
        t = now
        out: list[Any] = []

        def later() -> float:
            nonlocal t
            if rng.random() < 0.2:
                t += rng.choice([1e-7, 1e-4, 0.25, 1.0])
            return t

        for job in list(self.queue):
            r = rng.random()
            if r < 0.1:
                out.append(d.RejectJob(later(), job.id))
                self.queue.remove(job)
            elif r < 0.8 and job.res <= len(self.free):
                alloc = tuple(sorted(rng.sample(self.free, job.res)))
                self.free = [m for m in self.free if m not in alloc]
                self.running[job.id] = alloc
                self.queue.remove(job)
                out.append(d.ExecuteJob(later(), job.id, alloc))
            elif r < 0.9:
                out.append(d.SetJobMetadata(later(), job.id, f"m{rng.randrange(9)}"))
        victims = [j for j in self.running if j not in self.killed]
        if victims and rng.random() < 0.2:
            victim = rng.choice(victims)
            self.killed.add(victim)
            out.append(d.KillJob(later(), (victim,)))
        if rng.random() < 0.05:
            out.append(d.NotifyDecision(later(), "registration_finished"))
        if self.queue or rng.random() < 0.2:
            t0 = later()
            out.append(d.CallMeLater(t0, t0 + rng.choice([1e-5, 0.5, 1.0, 3.7])))
        if rng.random() < 0.1:
            t += rng.choice([1e-7, 0.5])
        return Reply(t, tuple(out))


def _random_workloads(rng: random.Random, tmp: Path, nb: int) -> list[str]:
    profiles = {f"d{k}": {"type": "delay", "delay": v}
                for k, v in enumerate([1e-12, 1e-10, 1e-4, 0.5, 1, 2.5, 3, 7])}
    dates = [0, 0, 1, 1, 2.5, 2.5 + 1e-10, 3, 3.0001, 5, 10]
    paths = []
    for w in range(nb):
        jobs = [{"id": i, "subtime": rng.choice(dates),
                 "walltime": rng.choice([-1, -1, 1e-10, 1, 2.5, 3]),
                 "res": rng.randint(1, 3), "profile": rng.choice(list(profiles))}
                for i in range(rng.randint(1, 14))]
        path = tmp / f"w{w}.json"
        path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("seed", range(40))
def test_random_runs(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random small workloads (dates and ends that coincide, zero and sub-precision delays,
    walltimes, one to three workloads) under FCFS, EASY and a random scheduler."""
    rng = random.Random(seed)
    workloads = _random_workloads(rng, tmp_path, rng.randint(1, 3))
    scheduler = ["fcfs", "easy", "chaos", "chaos"][seed % 4]
    if scheduler == "chaos":
        calls, _ = same_both_ways(tmp_path, monkeypatch, SMALL4, workloads,
                                  lambda: InProcess(Chaos(seed)))
    else:
        calls, _ = same_both_ways(tmp_path, monkeypatch, SMALL4, workloads, scheduler)
    assert calls and isinstance(calls[-1][1][-1], ev.SimulationEnds)


def test_fallback_for_uncovered_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Energy, a profile that is not a delay, and the switch: the general kernel runs."""
    folder = REFERENCE / "d2_energy_easy_nonet128"
    spec = json.loads((folder / "case.json").read_text())
    same_both_ways(tmp_path / "energy", monkeypatch, str(folder / spec["platform"]),
                   [str(folder / w) for w in spec["workloads"]], "easy", expect="general",
                   mmax_workload=True, energy=True)
    profiles = {"d": {"type": "delay", "delay": 3},
                "task": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}
    jobs = [{"id": i, "subtime": i, "walltime": -1, "res": 1, "profile": ["d", "task"][i % 2]}
            for i in range(4)]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    same_both_ways(tmp_path / "task", monkeypatch, SMALL4, [str(path)], "fcfs",
                   expect="general")


def _zmq_fcfs(endpoint: str, stop: Any) -> None:
    """An FCFS scheduler over ZeroMQ speaking Batsim's JSON (the lowest free machines), with a
    CALL_ME_LATER 0.5 s after each submission: what a pybatsim scheduler's socket carries."""
    import zmq

    socket = zmq.Context.instance().socket(zmq.REP)
    socket.bind(endpoint)
    free: list[int] = []
    queue: list[tuple[str, int]] = []
    running: dict[str, list[int]] = {}
    try:
        while not stop.is_set():
            if not socket.poll(100):
                continue
            msg = json.loads(socket.recv())
            now = msg["now"]
            out: list[dict] = []
            for e in msg["events"]:
                if e["type"] == "SIMULATION_BEGINS":
                    free = list(range(e["data"]["nb_compute_resources"]))
                elif e["type"] == "JOB_SUBMITTED":
                    queue.append((e["data"]["job_id"], e["data"]["job"]["res"]))
                    out.append({"timestamp": now, "type": "CALL_ME_LATER",
                                "data": {"timestamp": now + 0.5}})
                elif e["type"] == "JOB_COMPLETED":
                    free = sorted(free + running.pop(e["data"]["job_id"]))
            while queue and queue[0][1] <= len(free):
                job_id, res = queue.pop(0)
                running[job_id], free = free[:res], free[res:]
                alloc = " ".join(str(m) for m in running[job_id])
                out.append({"timestamp": now, "type": "EXECUTE_JOB",
                            "data": {"job_id": job_id, "alloc": alloc}})
            socket.send(json.dumps({"now": now, "events": out}).encode())
    finally:
        socket.close(linger=0)


def test_zmq_scheduler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler over ZeroMQ: the times it sees and sends back went through the wire."""
    import threading

    from batsim_py.decision.zmq_peer import ZmqPeer

    rng = random.Random(7)
    workloads = _random_workloads(rng, tmp_path, 2)
    threads = []

    def peer() -> DecisionProcess:
        endpoint = f"ipc://{tmp_path}/sched{len(threads)}.sock"
        stop = threading.Event()
        thread = threading.Thread(target=_zmq_fcfs, args=(endpoint, stop), daemon=True)
        thread.start()
        threads.append((thread, stop))
        return ZmqPeer(endpoint, timeout=60, connect_timeout=30)

    try:
        same_both_ways(tmp_path, monkeypatch, SMALL4, workloads, peer)
    finally:
        for thread, stop in threads:
            stop.set()
            thread.join(5)


def test_pybatsim_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unchanged pybatsim scheduler in-process (`--scheduler pybatsim:easyBackfill`)."""
    pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed")
    from batsim_py.decision.pybatsim_peer import PybatsimPeer

    folder = REFERENCE / "b_delays_easy_small"
    spec = json.loads((folder / "case.json").read_text())
    same_both_ways(tmp_path, monkeypatch, str(folder / spec["platform"]),
                   [str(folder / w) for w in spec["workloads"]],
                   lambda: PybatsimPeer("easyBackfill", {}))
