"""The incremental `fcfs` (issue 12 item 7) takes exactly the decisions of the full-scan one it
replaced (tests/schedulers/fcfs_reference.py, pybatsim's algorithm), and its cost grows with the
jobs, not with jobs x machines."""

from __future__ import annotations

import dataclasses
import heapq
import random
from collections.abc import Callable

import pytest
from cost_bounds import best_seconds, cpu_seconds
from fcfs_reference import ScanFcfs, find_consecutive

from batsim_py.decision.decisions import ExecuteJob, Reply
from batsim_py.decision.events import (
    JobCompleted,
    JobSubmitted,
    Notify,
    Resource,
    SimulationBegins,
    SimulationEnds,
)
from batsim_py.decision.interface import DecisionProcess
from batsim_py.schedulers.fcfs import Fcfs
from batsim_py.schedulers.free_runs import FreeRuns
from batsim_py.workload.model import Job


def _machine_ids(rng: random.Random, n: int) -> list[int]:
    """Machine lists as SIMULATION_BEGINS may give them: in order, reversed, with gaps,
    shuffled, or in blocks of consecutive ids in any order (runs break where ids jump)."""
    kind = rng.choice(["range", "reversed", "gaps", "shuffled", "blocks"])
    if kind == "range":
        return list(range(n))
    if kind == "reversed":
        return list(range(n))[::-1]
    if kind == "gaps":
        return sorted(rng.sample(range(2 * n + 2), n))
    if kind == "shuffled":
        ids = list(range(n))
        rng.shuffle(ids)
        return ids
    blocks: list[list[int]] = []
    start = 0
    while start < n:
        size = rng.randint(1, max(1, n // 2))
        block = list(range(start, min(n, start + size)))
        blocks.append(block[::-1] if rng.random() < 0.3 else block)
        start += size
    rng.shuffle(blocks)
    return [m for block in blocks for m in block]


def test_free_runs_answers_as_the_scan_over_random_histories() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        machines = _machine_ids(rng, rng.randint(1, 40 if seed % 3 else 300))
        runs = FreeRuns(machines)
        busy: set[int] = set()
        taken: list[tuple[int, ...]] = []
        for _ in range(200):
            if taken and rng.random() < 0.45:
                alloc = taken.pop(rng.randrange(len(taken)))
                runs.release(alloc)
                busy.difference_update(alloc)
                continue
            req = rng.randint(0, len(machines) + 1)
            want = find_consecutive(machines, busy, req)
            got = runs.take(req)
            assert (tuple(got) if got is not None else None) == want, \
                (seed, machines, sorted(busy), req)
            if got:
                busy.update(got)
                taken.append(got)
            longest = run = 0  # the longest run of free consecutive ids, by a plain walk
            for i, m in enumerate(machines):
                linked = i > 0 and abs(m - machines[i - 1]) == 1
                run = 0 if m in busy else run + 1 if linked else 1
                longest = max(longest, run)
            assert runs.largest() == longest, (seed, machines, sorted(busy))


def _random_case(seed: int) -> tuple[list[int], list[tuple[Job, float]]]:
    rng = random.Random(seed)
    machines = _machine_ids(rng, rng.randint(1, 24))
    nb = len(machines)
    jobs = []
    t = 0.0
    for i in range(rng.randint(1, 80)):
        t += rng.choice([0.0, 0.0, 1.0, 2.5, rng.uniform(0, 20)])
        roll = rng.random()
        res = 0 if roll < 0.04 else nb + rng.randint(1, 3) if roll < 0.08 else \
            rng.randint(1, max(1, nb // rng.choice([1, 2, 4])))
        desc: dict = {"id": f"w0!{i}", "subtime": t, "res": res, "profile": "p",
                      "walltime": rng.choice([-1, 5.0, 100.0])}
        if rng.random() < 0.25:  # dependencies: earlier, later, unknown, qualified or not
            deps = []
            for _ in range(rng.randint(1, 3)):
                target = rng.choice([rng.randint(0, i + 5), f"w0!{rng.randint(0, i)}", "ghost"])
                deps.append(str(target))
            desc["deps"] = deps
        if rng.random() < 0.01:  # a subtime in the future of its submission: never fits
            desc["subtime"] = t + 1000.0
        job = Job(id=f"w0!{i}", workload="w0", name=str(i), subtime=t,
                  walltime=float(desc["walltime"]), res=res, profile="p", description=desc)
        jobs.append((job, rng.choice([1.0, 3.0, 10.0, rng.uniform(0.5, 40)])))
    return machines, jobs


def _begins(machines: list[int]) -> SimulationBegins:
    res = tuple(Resource(m, f"h{m}", "idle", {"role": ""}, {}) for m in machines)
    config = {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
              "dynamic-jobs-acknowledged": False, "forward-unknown-events": False}
    n = len(machines)
    return SimulationBegins(0.0, n, n, 0, False, True, config, res, (), {"w0": "w.json"}, {})


def _drive(sched: DecisionProcess, machines: list[int],
           jobs: list[tuple[Job, float]]) -> list[Reply]:
    """Submissions at their times, completions at start + run time (or walltime), events of
    one instant in one request; returns every reply."""
    trace = [_plain(sched.exchange(0.0, [_begins(machines)]))]
    queue: list = []
    for order, (job, _delay) in enumerate(jobs):
        queue.append((job.subtime, order, "sub", job))
    heapq.heapify(queue)
    order = len(jobs)
    info = {job.id: (delay, job.walltime) for job, delay in jobs}
    left = len(jobs)
    while queue:
        now = queue[0][0]
        events: list = []
        while queue and queue[0][0] == now:
            _, _, kind, payload = heapq.heappop(queue)
            if kind == "sub":
                events.append(JobSubmitted(now, payload))
                left -= 1
            else:
                events.append(JobCompleted(now, payload[0], payload[1], 0, payload[2]))
        if left == 0:
            events.append(Notify(now, "no_more_static_job_to_submit"))
            left = -1
        reply = sched.exchange(now, events)
        trace.append(_plain(reply))
        for d in reply.decisions:
            if isinstance(d, ExecuteJob):
                delay, wall = info[d.job_id]
                state = "COMPLETED_SUCCESSFULLY"
                if 0 <= wall < delay:
                    delay, state = wall, "COMPLETED_WALLTIME_REACHED"
                heapq.heappush(queue, (now + delay, order, "end", (d.job_id, state, d.alloc)))
                order += 1
    trace.append(_plain(sched.exchange(trace[-1].now, [SimulationEnds(0.0)])))
    return trace


def _plain(reply: Reply) -> Reply:
    """Allocations as tuples (`fcfs` gives ranges, O(1) memory; the scan gave tuples), after
    checking they are increasing ids as decisions must carry."""
    decisions = []
    for d in reply.decisions:
        if isinstance(d, ExecuteJob):
            alloc = tuple(d.alloc)
            assert list(alloc) == sorted(set(alloc)), d
            d = dataclasses.replace(d, alloc=alloc)
        decisions.append(d)
    return dataclasses.replace(reply, decisions=tuple(decisions))


@pytest.mark.parametrize("block", range(4))
def test_fcfs_takes_the_decisions_of_the_full_scan_on_random_cases(block: int) -> None:
    kinds: dict[str, int] = {}
    for seed in range(block * 100, block * 100 + 100):
        machines, jobs = _random_case(seed)
        want = _drive(ScanFcfs(), machines, jobs)
        got = _drive(Fcfs(), machines, jobs)
        assert got == want, f"seed {seed}: machines {machines}"
        for reply in want:
            for d in reply.decisions:
                kinds[type(d).__name__] = kinds.get(type(d).__name__, 0) + 1
    assert kinds.get("ExecuteJob", 0) > 1000 and kinds.get("RejectJob", 0) > 50, kinds


def _scale_case(nb_jobs: int, nb_hosts: int, seed: int = 7) -> tuple[list[int],
                                                                       list[tuple[Job, float]]]:
    """A busy cluster (offered load 0.95): sizes 1-16, run times 10-1000 s, Poisson arrivals
    whose rate follows the host count, so per-job work does not depend on the platform."""
    rng = random.Random(seed)
    mean_work = 8.5 * 505.0
    rate = 0.95 * nb_hosts / mean_work
    jobs = []
    t = 0.0
    for i in range(nb_jobs):
        t += rng.expovariate(rate)
        res = rng.randint(1, 16)
        desc = {"id": f"w0!{i}", "subtime": t, "res": res, "profile": "p", "walltime": -1}
        jobs.append((Job(id=f"w0!{i}", workload="w0", name=str(i), subtime=t, walltime=-1.0,
                         res=res, profile="p", description=desc), rng.uniform(10, 1000)))
    return list(range(nb_hosts)), jobs


def _seconds(factory: type, sizes: list[tuple[int, int]],
             holds: Callable[[dict[tuple[int, int], float]], bool]) -> dict[tuple[int, int], float]:
    """Best CPU time of each (jobs, hosts) size over up to 5 rounds that take every size in
    turn, the largest first, 2 rounds at least (tests/cost_bounds.py): a burst of load from
    other processes (the suite runs on every core) then weighs on one round of all sizes, not on
    all the samples of one size."""
    cases = {size: _scale_case(*size) for size in sizes}

    def sample(size: tuple[int, int]) -> float:
        machines, jobs = cases[size]
        sched = factory()
        return cpu_seconds(lambda: _drive(sched, machines, jobs))

    return best_seconds({size: (lambda size=size: sample(size)) for size in sizes}, holds,
                        least=2)


@pytest.mark.slow
def test_fcfs_cost_grows_with_jobs_not_jobs_times_hosts() -> None:
    """Scheduler plus this test's event loop (which is linear): doubling both jobs and hosts
    doubles the time (the full scan made it about 4x), doubling hosts alone costs nearly
    nothing (the scan doubled it). Ratios of best CPU times, generous bounds for a loaded
    machine (the full scan measures about 1.7x for 2x hosts)."""
    base, both, hosts = (4000, 2000), (8000, 4000), (4000, 4000)

    def ratios(best: dict[tuple[int, int], float]) -> tuple[float, float]:
        return best[both] / best[base], best[hosts] / best[base]

    best = _seconds(Fcfs, [both, hosts, base],
                    holds=lambda b: ratios(b)[0] < 2.8 and ratios(b)[1] < 1.4)
    two_x_both, two_x_hosts = ratios(best)
    assert two_x_both < 2.8, f"2x jobs and 2x hosts: {two_x_both:.2f}x"
    assert two_x_hosts < 1.4, f"2x hosts: {two_x_hosts:.2f}x"
