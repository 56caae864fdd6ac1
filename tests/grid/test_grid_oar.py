"""The local OAR of one cluster: queues, backfilling, best-effort on leftovers, best-effort
kills with a kill delay (hand-computed cases), and the invariant that best-effort jobs never
delay a local job beyond the kill delay (whole grid runs against their baseline)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from batsim_py.grid.oar import OarCluster, OarJob
from batsim_py.grid.run import run_grid
from batsim_py.workload.generate import generate_delay_workload

sys.path.insert(0, str(Path(__file__).parent))
from grid_helpers import make_grid  # noqa: E402


def _running(c: OarCluster, job_id: str, res: int, start: float, wall: float,
             queue: str = "default") -> OarJob:
    job = OarJob(job_id, queue, res, wall, start)
    c.submit(job, start)
    act = c.schedule(start)
    assert [s[0] for s in act.starts] == [job_id]
    return job


def _queue(c: OarCluster, job_id: str, res: int, wall: float, now: float,
           queue: str = "default") -> None:
    c.submit(OarJob(job_id, queue, res, wall, now), now)


@pytest.mark.parametrize("policy, started", [("fcfs", []), ("easy", ["D"]),
                                             ("conservative", [])])
def test_backfilling_policies(policy, started):
    # 4 machines; A (3 machines) runs until 100. B (2) heads the queue and starts at 100,
    # when 2 machines are spare (EASY's "extra"); C (4) would follow at 200; D (1 machine,
    # 1000 s) fits now. FCFS never backfills; EASY backfills D on the extra machines (it only
    # protects B); conservative also protects C (D would hold a machine at 200), so refuses.
    c = OarCluster("c", (0, 1, 2, 3), policy)
    _running(c, "A", 3, 0.0, 100.0)
    for job_id, res, wall in (("B", 2, 100.0), ("C", 4, 100.0), ("D", 1, 1000.0)):
        _queue(c, job_id, res, wall, 10.0)
    act = c.schedule(10.0)
    assert [s[0] for s in act.starts] == started
    c.ended("A", "COMPLETED_SUCCESSFULLY", 0, 100.0)
    act = c.schedule(100.0)
    assert "B" in [s[0] for s in act.starts]


def test_conservative_backfills_what_delays_nobody():
    c = OarCluster("c", (0, 1, 2, 3), "conservative")
    _running(c, "A", 3, 0.0, 100.0)
    _queue(c, "B", 4, 100.0, 10.0)
    _queue(c, "C", 1, 90.0, 10.0)  # ends at 100, when B starts: no delay
    _queue(c, "D", 1, 91.0, 10.0)  # would end at 101 > 100: refused
    act = c.schedule(10.0)
    assert [s[0] for s in act.starts] == ["C"]


def test_queue_priorities_and_besteffort_on_leftovers():
    c = OarCluster("c", (0, 1, 2, 3), "fcfs")
    _queue(c, "be", 1, 500.0, 0.0, "besteffort")
    _queue(c, "d", 3, 500.0, 0.0, "default")
    _queue(c, "a", 1, 500.0, 0.0, "admin")
    act = c.schedule(0.0)
    # admin first, then default; best-effort gets nothing (no machine left)
    assert [s[0] for s in act.starts] == ["a", "d"]
    assert c.jobs["be"].state == "Waiting"
    c.ended("a", "COMPLETED_SUCCESSFULLY", 0, 50.0)
    act = c.schedule(50.0)
    assert act.starts == [("be", (0,))]


def test_besteffort_kill_youngest_first_without_delay():
    c = OarCluster("c", (0, 1, 2, 3), "easy", kill_delay=0.0)
    _running(c, "x1", 1, 0.0, 1000.0, "besteffort")
    _running(c, "x2", 2, 10.0, 1000.0, "besteffort")
    _running(c, "x3", 1, 20.0, 1000.0, "besteffort")
    _queue(c, "n", 2, 100.0, 30.0)
    act = c.schedule(30.0)
    # youngest first: x3 (1 machine) is not enough, x2 (2 machines) too; x1 survives
    assert act.kills == ["x3", "x2"] and act.starts == []
    assert c.jobs["n"].state == "Launching" and c.jobs["n"].released == 30.0
    for victim in ("x3", "x2"):
        c.ended(victim, "COMPLETED_KILLED", -2, 30.0)
    act = c.schedule(30.0)
    assert [s[0] for s in act.starts] == ["n"] and len(act.starts[0][1]) == 2
    assert c.jobs["x3"].event == "BESTEFFORT_KILL" and c.jobs["x3"].state == "Error"
    assert c.jobs["n"].start == 30.0 and c.jobs["n"].nb_killed == 2
    assert len(c.free) == 1  # x2's second machine was not needed


def test_besteffort_kill_delay():
    c = OarCluster("c", (0, 1), "fcfs", kill_delay=5.0)
    _running(c, "be", 2, 0.0, 1000.0, "besteffort")
    _queue(c, "n", 1, 100.0, 30.0)
    act = c.schedule(30.0)
    assert act.kills == [] and act.wakeups == [35.0]
    act = c.schedule(34.0)
    assert act.kills == []
    act = c.schedule(35.0)
    assert act.kills == ["be"]
    c.ended("be", "COMPLETED_KILLED", -2, 35.0)
    act = c.schedule(35.0)
    assert [s[0] for s in act.starts] == ["n"]
    assert c.jobs["n"].start - c.jobs["n"].released == 5.0


def test_too_big_job_is_refused():
    c = OarCluster("c", (0, 1), "easy")
    _queue(c, "big", 3, 10.0, 0.0)
    act = c.schedule(0.0)
    assert act.rejects == ["big"] and c.jobs["big"].event == "TOO_BIG_FOR_CLUSTER"


def _loaded_grid(tmp_path: Path, kill_delay: float, policy: str) -> str:
    data = generate_delay_workload(40, 16, seed=3, load=0.8, min_runtime=60,
                                   max_runtime=3000, max_res=16)
    jobs = [(j["subtime"], j["res"], data["profiles"][j["profile"]]["delay"], j["walltime"])
            for j in data["jobs"]]
    return make_grid(tmp_path, [("alpha", 16), ("beta", 8)],
                     [{"name": "A", "nb_jobs": 400, "duration": {"uniform": [100, 400]},
                       "clusters": {"alpha": {}, "beta": {}}}],
                     local={"alpha": jobs},
                     cluster_settings={"alpha": {"policy": policy, "kill_delay": kill_delay}},
                     seed=7)


@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_no_local_delay_without_kill_delay(tmp_path, policy):
    """kill_delay 0: every local job starts and ends exactly as without CiGri, although
    best-effort jobs were killed for it."""
    grid = _loaded_grid(tmp_path, 0.0, policy)
    run = run_grid(grid)
    base = run_grid(grid, with_cigri=False)
    dates = [(j.id, j.start, j.stop) for _, j in run.rjms.local_jobs]
    assert dates == [(j.id, j.start, j.stop) for _, j in base.rjms.local_jobs]
    assert sum(j.nb_killed for _, j in run.rjms.local_jobs) > 0  # kills did happen
    assert all(t.state == "done" for t in run.cigri.tasks)


def test_local_delay_bounded_by_kill_delay(tmp_path):
    grid = _loaded_grid(tmp_path, 30.0, "easy")
    run = run_grid(grid)
    waits = [j.start - j.released for _, j in run.rjms.local_jobs]
    killers = [j for _, j in run.rjms.local_jobs if j.nb_killed]
    assert killers and max(waits) <= 30.0 + 1e-9
    assert all(j.start - j.released == pytest.approx(30.0) for j in killers)
    # and a job that needed no kill starts when released
    assert all(j.start == j.released for _, j in run.rjms.local_jobs if not j.nb_killed)


def test_deleted_launching_job_spares_its_victims():
    """A normal job waiting for its victims' kill delay is deleted (oardel): the kill due
    for it is not sent, the best-effort job keeps running."""
    c = OarCluster("c", (0, 1), "fcfs", kill_delay=5.0)
    _running(c, "be", 2, 0.0, 1000.0, "besteffort")
    _queue(c, "n", 1, 100.0, 30.0)
    c.schedule(30.0)
    assert c.delete("n", "USER_FRAG", 32.0) == "reject"
    act = c.schedule(35.0)
    assert act.kills == [] and c.jobs["be"].state == "Running" and not c.jobs["be"].killer
