"""Seeded random differential tests of the `easy` scheduler: the same decisions (jobs, machines,
order, times) as a plain reference written from pybatsim's EASY rules (easy_reference.py), and,
when pybatsim 3.2.1 is installed, as pybatsim's own `easyBackfill` run in-process.

The shipped scheduler takes its decisions through shortcuts (bit masks, held reservations,
memos of failed passes, compiled loops); the reference redoes every pass from scratch. The
workloads are drawn to reach the shortcuts' edge cases: platforms around the 62-bit and
255-size limits of the masks and size codes, bursts of simultaneous events, whole-platform
heads, walltimes missing (-1), shorter than the run (killed at the walltime) or far longer,
equal estimated ends, jobs too large or asking for nothing (rejected)."""

from __future__ import annotations

import random

import pytest
from easy_reference import ReferenceEasy
from mini_driver import make_job, run

from batsim_py.decision.inprocess import InProcess
from batsim_py.schedulers.easy import EasyBackfill


def _workload(seed: int, n: int, nb: int, empty: bool = True) -> list:
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.choice([0, 0, 0, 1, 2, 5, rng.random() * 4, 0.5])
        res = rng.choice([1, 1, 1, 2, 3, nb // 4 or 1, nb // 2 or 1, nb - 1 or 1, nb, nb,
                          rng.randint(1, nb), nb + 1, 0 if empty else 1])
        delay = rng.choice([1, 2, 3, 7, 20, 50, 100, round(rng.uniform(0.5, 60), 3)])
        wall = rng.choice([delay, delay, delay * 2, delay + 5, 60, 100, -1,
                           max(1, delay // 2), rng.randint(1, 200)])
        jobs.append(make_job(i, round(t, 6), res, wall, delay))
    return jobs


# Both are run as the simulator runs them (`InProcess`: times as a scheduler reads them from
# Batsim's messages, and its replies as Batsim reads them), as pybatsim's in-process peer does.


def _trace(replies: list) -> list:
    """Every reply's time and decisions, allocations as tuples (a range compares unequal)."""
    return [(r.now, [(type(d).__name__, d.job_id, d.timestamp, tuple(getattr(d, "alloc", ())))
                     for d in r.decisions]) for r in replies]


CASES = [(seed, nb) for nb in (1, 3, 8, 16, 61, 64, 130, 300) for seed in range(4)]


@pytest.mark.parametrize(("seed", "nb"), CASES)
def test_easy_decides_as_the_plain_reference(seed: int, nb: int) -> None:
    jobs = _workload(7919 * nb + seed, 300, nb)
    expected = _trace(run(InProcess(ReferenceEasy()), nb, jobs))
    assert sum(len(d) for _, d in expected) == len(jobs)  # every job started or rejected
    assert _trace(run(InProcess(EasyBackfill()), nb, jobs)) == expected


def _pybatsim_easy():  # -> a DecisionProcess running pybatsim's easyBackfill in-process
    pytest.importorskip("schedulers.easyBackfill", reason="pybatsim 3.2.1 is not installed")
    from batsim_py.decision.pybatsim_peer import PybatsimPeer

    return PybatsimPeer("easyBackfill", {})


@pytest.mark.parametrize(("seed", "nb"), [(s, nb) for nb in (3, 16, 64, 130) for s in range(2)])
def test_the_reference_and_easy_decide_as_pybatsim(seed: int, nb: int) -> None:
    """The reference is itself checked against pybatsim's code (when installed)."""
    jobs = _workload(104729 * nb + seed, 250, nb, empty=False)  # (pybatsim fails on res 0)
    expected = _trace(run(_pybatsim_easy(), nb, jobs))
    assert _trace(run(InProcess(ReferenceEasy()), nb, jobs)) == expected
    assert _trace(run(InProcess(EasyBackfill()), nb, jobs)) == expected
