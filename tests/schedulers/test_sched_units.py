"""Hand-made scenarios for the in-process schedulers (no reference files needed)."""

from __future__ import annotations

import random

import pytest
from mini_driver import begins, make_job, run

from batsim_py.decision.decisions import ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import JobCompleted, JobSubmitted, Notify
from batsim_py.errors import UsageError
from batsim_py.schedulers import SCHEDULERS, get_scheduler
from batsim_py.schedulers.easy import EasyBackfill


def _norm(decisions: tuple) -> tuple:
    """Allocations as tuples (schedulers may give a contiguous one as a range)."""
    import dataclasses

    return tuple(
        dataclasses.replace(d, alloc=tuple(d.alloc)) if hasattr(d, "alloc") else d
        for d in decisions
    )


def _sub(t: float, i: int, res: int, wall: float) -> JobSubmitted:
    return JobSubmitted(t, make_job(i, t, res, wall, 1.0)[0])


def test_registry() -> None:
    assert {"fcfs", "easy"} <= set(SCHEDULERS)
    with pytest.raises(UsageError, match="known: .*easy.*fcfs"):
        get_scheduler("nope")


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_first_message_and_empty_replies(name: str) -> None:
    s = get_scheduler(name)
    assert s.exchange(0.0, [begins(4)]) == Reply(0.0)
    assert s.exchange(1.5, [Notify(1.0, "no_more_static_job_to_submit")]) == Reply(1.5)


def test_fcfs_strict_order_consecutive_and_rejection() -> None:
    s = get_scheduler("fcfs")
    s.exchange(0.0, [begins(4)])
    r = s.exchange(1.0, [_sub(1.0, 1, 2, 20)])
    assert _norm(r.decisions) == (ExecuteJob(1.0, "w0!1", (0, 1)),)
    # needs 4: blocks; the 1-machine job behind it must wait (no backfilling)
    assert _norm(s.exchange(2.0, [_sub(2.0, 2, 4, 30), _sub(2.0, 3, 1, 5)]).decisions) == ()
    r = s.exchange(3.0, [_sub(3.0, 4, 8, 5)])
    assert r.decisions == ()  # oversize job only rejected when the walk reaches it
    r = s.exchange(11.0, [JobCompleted(11.0, "w0!1", "COMPLETED_SUCCESSFULLY", 0, (0, 1))])
    assert _norm(r.decisions) == (ExecuteJob(11.0, "w0!2", (0, 1, 2, 3)),)
    r = s.exchange(26.0, [JobCompleted(26.0, "w0!2", "COMPLETED_SUCCESSFULLY", 0, (0, 1, 2, 3))])
    assert _norm(r.decisions) == (ExecuteJob(26.0, "w0!3", (0,)), RejectJob(26.0, "w0!4"))


def test_fcfs_sched_delay_shows_at_tiny_now() -> None:
    s = get_scheduler("fcfs")
    s.exchange(0.0, [begins(4)])
    r = s.exchange(0.0, [_sub(0.0, 1, 1, 20)])
    assert r.now == 1e-21 and _norm(r.decisions) == (ExecuteJob(0.0, "w0!1", (0,)),)


def test_easy_rejects_at_submission_and_backfills() -> None:
    s = get_scheduler("easy")
    s.exchange(0.0, [begins(4)])
    assert _norm(s.exchange(1.0, [_sub(1.0, 9, 5, 10)]).decisions) == (RejectJob(1.0, "w0!9"),)
    got = _norm(s.exchange(1.0, [_sub(1.0, 1, 2, 20)]).decisions)
    assert got == (ExecuteJob(1.0, "w0!1", (0, 1)),)
    assert _norm(s.exchange(2.0, [_sub(2.0, 2, 4, 30)]).decisions) == ()
    # 2 free machines until the reservation of w0!2 at 21: a 5 s job fits, a 100 s one not
    got = _norm(s.exchange(3.0, [_sub(3.0, 3, 2, 5)]).decisions)
    assert got == (ExecuteJob(3.0, "w0!3", (2, 3)),)
    assert _norm(s.exchange(4.0, [_sub(4.0, 4, 1, 100)]).decisions) == ()


def _random_workload(seed: int, n: int, nb: int) -> list:
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.choice([0, 0, 1, 2, 5, 10])
        res = rng.choice([1, 1, 1, 2, 3, 4, nb // 2, nb, nb + 1])
        delay = rng.choice([1, 3, 7, 20, 50])
        wall = rng.choice([delay, delay * 2, delay + 5, -1 if rng.random() < 0.05 else 60])
        jobs.append(make_job(i, t, res, wall, delay))
    return jobs


@pytest.mark.parametrize("seed", range(8))
def test_easy_shortcuts_do_not_change_decisions(seed: int) -> None:
    jobs = _random_workload(seed, 400, 16)
    fast = run(EasyBackfill(), 16, jobs)
    slow = run(EasyBackfill(shortcuts=False), 16, jobs)
    assert fast == slow


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_every_job_ends_up_started_or_rejected(name: str) -> None:
    jobs = _random_workload(99, 200, 8)
    trace = run(get_scheduler(name), 8, jobs)
    decided = [d.job_id for r in trace for d in r.decisions]
    assert sorted(decided) == sorted(j.id for j, _ in jobs)


def _mixed_workload(seed: int, n: int, nb: int) -> list:
    """Bursty arrivals, many whole-platform jobs (the head then waits for every running job)
    and walltimes often far from the real duration: long queues, reservations that hold for
    many passes, jobs ending before and after the job the head waits for."""
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += rng.choice([0, 0, 0, 1, 3])
        res = rng.choice([1, 1, 2, 3, nb // 3, nb // 2, nb - 1, nb, nb, rng.randint(1, nb)])
        delay = rng.choice([1, 3, 7, 20, 50, 100])
        wall = rng.choice([delay, delay * 2, delay + 5, 60, rng.randint(1, 200)])
        jobs.append(make_job(i, t, res, wall, delay))
    return jobs


@pytest.mark.parametrize("nb", [5, 16, 64, 300])  # 300: sizes no longer fit one byte each
@pytest.mark.parametrize("seed", range(6))
def test_easy_shortcuts_on_mixed_workloads(seed: int, nb: int) -> None:
    jobs = _mixed_workload(1000 * nb + seed, 400, nb)
    assert run(EasyBackfill(), nb, jobs) == run(EasyBackfill(shortcuts=False), nb, jobs)


@pytest.mark.parametrize("seed", range(6))
def test_easy_mask_reservations_match_release_order(seed: int) -> None:
    """Every reservation made from bit masks (possibly held from an earlier pass) is the one
    found by releasing running jobs into a copy of the free list (the scheduler raises if not)."""
    nb = [16, 32, 128][seed % 3]
    jobs = _mixed_workload(seed, 400, nb)
    checked = EasyBackfill(check_reservations=True)
    assert run(checked, nb, jobs) == run(EasyBackfill(shortcuts=False), nb, jobs)
    assert checked.nb_checked_reservations > 100


def test_easy_reservation_moves_earlier_when_a_later_job_ends_early() -> None:
    """At 1 the head (4 machines) is reserved on 7-10 from 20, when job 5 ends. Job 3, estimated
    to end after job 5, ends at 5 on machines 3-4, away from that reservation: with machines
    1-2 released at 10 the head now fits earlier there, so the reservation held since 1 must go,
    and at 6 a job too long for the new window (until 10 on machines 3-4) has to wait."""
    jobs = [make_job(1, 0, 1, 1000, 0.5), make_job(2, 0, 2, 10, 10), make_job(3, 0, 2, 100, 5),
            make_job(4, 0, 2, 200, 200), make_job(5, 0, 4, 20, 20), make_job(6, 1, 4, 10, 10),
            make_job(7, 1, 1, 1000, 1000), make_job(8, 6, 1, 8, 8)]
    trace = run(EasyBackfill(), 11, jobs)
    assert trace == run(EasyBackfill(shortcuts=False), 11, jobs)
    started_at = {d.job_id: r.now for r in trace for d in r.decisions}
    assert started_at["w0!7"] == 1 and started_at["w0!8"] > 6
