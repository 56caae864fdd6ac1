"""CiGri on simulated time, research §5.3's acceptance list: tap dynamics, preemption and
resubmission, ordering (test mode, users' priorities), Nikita's remote-waiting timeout,
max_jobs. Expected values are worked by hand from CiGri 3's code (comments say how)."""

from __future__ import annotations

import csv
import filecmp
import sys
from pathlib import Path

from batsim_py.grid.run import run_grid

sys.path.insert(0, str(Path(__file__).parent))
from grid_helpers import make_grid, submissions  # noqa: E402


def _campaign(name, nb, duration, clusters, **extra):
    return {"name": name, "nb_jobs": nb, "duration": duration,
            "clusters": {c: {} for c in clusters}, **extra}


def test_taps_open_on_an_idle_cluster(tmp_path):
    """5,000 x 600 s best-effort tasks on an idle 1,000-machine cluster: one runner cycle
    every 15 s (RUNNER_MIN_CYCLE_DURATION) submits the tap's rate, which grows x1.5 after each
    submission from 3 (cigri.conf) to 100. The runner starts at 0 (almighty.rb), the first
    metascheduler pass is at 0.5 + 3 s, so the first submission is the runner's second cycle,
    at 15 s."""
    grid = make_grid(tmp_path, [("big", 1000)], [_campaign("A", 5000, 600, ["big"])])
    run = run_grid(grid, until=200)
    subs = submissions(run)
    assert [n for _, n in subs] == [3, 4, 6, 9, 13, 19, 28, 42, 63, 94, 100, 100, 100]
    assert [t for t, _ in subs] == [15.0 * k for k in range(1, 14)]


def test_tap_closes_and_decays_under_load(tmp_path):
    """The same cluster at full speed (rate 100) when a local job takes all of it at 200 s:
    OAR kills the best-effort jobs, the runner's next cycle (210) resubmits 100 jobs that
    wait, the cycle at 225 sees them waiting and closes the tap; nothing is submitted while
    it is closed; 60 s after the close (285) the rate decays by 1.5 per cycle, 100, 66, 44,
    29, 19, 12, 8, 5, 3, never below 3."""
    grid = make_grid(tmp_path, [("big", 1000)], [_campaign("A", 5000, 600, ["big"])],
                     local={"big": [(200.0, 1000, 2000.0, 3000.0)]})
    run = run_grid(grid, until=700)
    rows = [r for r in run.cigri.tap_rows if r[5] in ("close", "decrease", "open")]
    assert rows[0][:5] == (225.0, "big", "A", 100, "closed")
    decays = [(t, rate) for t, _, _, rate, _, why in rows if why == "decrease"]
    assert decays == [(285.0 + 15 * k, r) for k, r in enumerate([66, 44, 29, 19, 12, 8, 5, 3])]
    assert not [t for t, _ in submissions(run) if t > 210.0]


def test_tap_reopens_when_nothing_waits(tmp_path):
    """100 machines, tasks of 1,000 s: 3+4+...+42 = 124 jobs by 120 s, 24 wait; the cycle at
    135 closes the tap (rate 63), which decays from 195 to 3 at 285; the first tasks end at
    1,015, the waiting ones start, the cycle at 1,035 sees none waiting, re-opens the tap and
    submits 3; increases resume: 4, 6, 9, ..."""
    grid = make_grid(tmp_path, [("c", 100)],
                     [_campaign("A", 400, 1000, ["c"], walltime=2000)])
    run = run_grid(grid, until=1100)
    rows = run.cigri.tap_rows
    assert (135.0, "c", "A", 63, "closed", "close") in rows
    assert [r[3] for r in rows if r[5] == "decrease"] == [42, 28, 18, 12, 8, 5, 3]
    assert (1035.0, "c", "A", 3, "open", "open") in rows
    assert submissions(run)[8:12] == [(1035.0, 3), (1050.0, 4), (1065.0, 6), (1080.0, 9)]


def test_preemption_and_resubmission(tmp_path):
    """8 machines full of best-effort CiGri jobs; a local job of all 8 machines arrives at
    300 s with a kill delay of 10 s: it starts at 310 exactly; the killed tasks come back at
    priority 20 and run again; every task completes exactly once successfully; the kills are
    in cigri_jobs.csv as BESTEFFORT_KILL."""
    grid = make_grid(tmp_path, [("c", 8)], [_campaign("A", 60, 250, ["c"])],
                     local={"c": [(300.0, 8, 100.0, 200.0)]},
                     cluster_settings={"c": {"kill_delay": 10}})
    run = run_grid(grid, export=str(tmp_path / "out" / "run"))
    (_, local), = run.rjms.local_jobs
    assert (local.released, local.start, local.stop) == (300.0, 310.0, 410.0)
    with open(tmp_path / "out" / "run_cigri_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    killed = [r for r in rows if r["event"] == "BESTEFFORT_KILL"]
    assert len(killed) == 8 and all(r["resubmitted"] == "1" for r in killed)
    assert all(float(r["stop_time"]) == 310.0 for r in killed)
    again = [r for r in rows if r["task"] in {k["task"] for k in killed}
             and r["event"] == ""]
    assert len(again) == 8 and all(r["priority"] == "20" for r in again)
    ok = [r["task"] for r in rows if r["cigri_state"] == "terminated"
          and r["oar_state"] == "Terminated"]
    assert sorted(ok, key=int) == [str(i) for i in range(60)]  # each task once
    with open(tmp_path / "out" / "run_cigri_campaigns.csv") as f:
        (camp,) = list(csv.DictReader(f))
    assert camp["besteffort_kills"] == "8" and camp["tasks_done"] == "60"
    assert float(camp["wasted_work"]) > 0


def test_test_campaign_first_and_one_job_per_cluster(tmp_path):
    """A and B run on two idle clusters; C, in test mode, arrives at 140 s: it gets one
    non-best-effort job per cluster (max_jobs 1), and on each cluster its job is submitted
    before any job of A or B queued after it (compute_campaigns_orders puts test campaigns
    first; get_next takes the queue in (priority, order_num, id) order: CiGri 3 still
    submits the jobs of A and B that were queued before C's, at most 10 x rate)."""
    grid = make_grid(tmp_path, [("alpha", 500), ("beta", 500)],
                     [_campaign("A", 3000, 60, ["alpha", "beta"], user="alice"),
                      _campaign("B", 3000, 60, ["alpha", "beta"], user="bob",
                                submission_time=100),
                      _campaign("C", 5, 60, ["alpha", "beta"], user="carol",
                                submission_time=140, test_mode=True)])
    run = run_grid(grid, until=600)
    cigri = run.cigri
    for cluster in ("alpha", "beta"):
        jobs = [j for j in cigri.jobs if j.cluster == cluster]
        tests = [j for j in jobs if cigri.campaign(j.task.campaign).spec.name == "C"]
        assert tests and not any(j.besteffort for j in tests)
        first = tests[0]
        later = [j for j in jobs if j.queue_seq > first.queue_seq and j not in tests]
        assert later and all(j.submission_time > first.submission_time for j in later)
        # never two test jobs at once on a cluster
        spans = sorted((run.rjms.job(j.oar_id).submit, run.rjms.job(j.oar_id).stop)
                       for j in tests)
        assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:], strict=False))


def test_user_priority_per_cluster(tmp_path):
    """users_priority gives bob 10 on alpha: compute_campaigns_orders ranks B (bob,
    submitted second) before A on alpha, while FIFO keeps A first on beta; a test-mode
    campaign comes first everywhere. On alpha the runner takes B's first jobs before any job
    of A queued after B's arrival; on beta A's jobs still go first."""
    grid = make_grid(tmp_path, [("alpha", 500), ("beta", 500)],
                     [_campaign("A", 3000, 60, ["alpha", "beta"], user="alice"),
                      _campaign("B", 3000, 60, ["alpha", "beta"], user="bob",
                                submission_time=100),
                      _campaign("T", 3, 60, ["alpha", "beta"], user="carol",
                                submission_time=100000, test_mode=True)],
                     users_priority={"alpha": {"bob": 10}})
    run = run_grid(grid, until=400)
    cigri = run.cigri
    orders = [(cluster, cid) for cluster, cid, _ in cigri.compute_campaigns_orders(400)]
    assert orders == [("alpha", 2), ("alpha", 1), ("beta", 1), ("beta", 2)]
    cigri.campaign(3).state = "running"  # the test campaign, as if submitted now
    orders = [(cluster, cid) for cluster, cid, _ in cigri.compute_campaigns_orders(400)]
    assert orders == [("alpha", 3), ("alpha", 2), ("alpha", 1),
                      ("beta", 3), ("beta", 1), ("beta", 2)]
    alpha = [j for j in cigri.jobs if j.cluster == "alpha" and j.queuing_date > 100]
    first_b = min(j.submission_time for j in alpha if j.task.campaign == 2)
    assert all(j.submission_time > first_b for j in alpha if j.task.campaign == 1)
    beta = sorted((j.submission_time, j.task.campaign) for j in cigri.jobs
                  if j.cluster == "beta" and j.submission_time > 100)
    assert beta[0][1] == 1


def test_remote_waiting_timeout(tmp_path):
    """A local job holds both machines for 3,000 s: CiGri's best-effort jobs wait in OAR;
    Nikita kills those waiting for more than 900 s since their submission
    (REMOTE_WAITING_FRAG) and they are resubmitted; all tasks end once the cluster frees."""
    grid = make_grid(tmp_path, [("c", 2)], [_campaign("A", 6, 100, ["c"], submission_time=10)],
                     local={"c": [(0.0, 2, 3000.0, 3000.0)]})
    run = run_grid(grid)
    frags = [j for j in run.cigri.jobs if j.event == "REMOTE_WAITING_FRAG"]
    assert frags and all(j.resubmitted for j in frags)
    for j in frags:
        oar = run.rjms.job(j.oar_id)
        assert oar.state == "Error" and oar.start < 0  # deleted while waiting
        assert 900 < oar.stop - j.submission_time <= 900 + 10 + 15  # a nikita pass later
    assert all(t.state == "done" for t in run.cigri.tasks)


def test_max_jobs_caps_active_jobs(tmp_path):
    """max_jobs 5 on an idle 100-machine cluster: never more than 5 of the campaign's jobs
    are in OAR (waiting or running) at once, and 5 are."""
    grid = make_grid(tmp_path, [("c", 100)],
                     [_campaign("A", 40, 100, ["c"], max_jobs=5)])
    run = run_grid(grid)
    events = []
    for j in run.cigri.jobs:
        oar = run.rjms.job(j.oar_id)
        events += [(oar.submit, 1), (oar.stop, -1)]
    level, peak = 0, 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        level += delta
        peak = max(peak, level)
    assert peak == 5
    assert all(t.state == "done" for t in run.cigri.tasks)


def test_outputs_are_deterministic(tmp_path):
    grid = make_grid(tmp_path, [("alpha", 6), ("beta", 4)],
                     [_campaign("A", 50, {"exponential": 120}, ["alpha", "beta"])],
                     local={"alpha": [(50.0, 6, 400.0, 500.0), (60.0, 3, 100.0, 200.0)]},
                     seed=5)
    for name in ("a", "b"):
        run_grid(grid, export=str(tmp_path / name / "run"))
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert "run_cigri_taps.csv" in files and "run_grid_usage.csv" in files
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "a", tmp_path / "b", files,
                                               shallow=False)
    # schedule.csv holds wall-clock columns
    assert mismatch == ["run_schedule.csv"] or mismatch == [] and not errors


def test_every_flow_control_completes_each_task_once(tmp_path):
    """The 2.x predictors and the PI controller drive the same runner: whatever the control,
    every task ends successfully exactly once and the run ends."""
    base = {"name": "A", "nb_jobs": 60, "duration": 90, "clusters": {"alpha": {}, "beta": {}}}
    local = {"alpha": [(30.0, 4, 300.0, 400.0), (500.0, 2, 200.0, 300.0)]}
    for kind in ("simple", "tcp", "two_way", "adaptive_down_exp_up", "pi"):
        folder = tmp_path / kind
        folder.mkdir()
        grid = make_grid(folder, [("alpha", 4), ("beta", 4)], [base], local=local,
                         flow_control={"type": kind, **({"reference": 3} if kind == "pi"
                                                         else {})})
        run = run_grid(grid)
        done = [j.task.id for j in run.cigri.jobs if j.state == "terminated"]
        assert sorted(done) == list(range(60)), kind
        assert run.cigri.tap_rows and {r[4] for r in run.cigri.tap_rows} == {kind}


def test_swf_local_workload(tmp_path):
    """A cluster's local workload may be a Standard Workload Format trace."""
    (tmp_path / "local.swf").write_text(
        "; MaxProcs: 4\n"
        "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 50 -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    grid = make_grid(tmp_path, [("alpha", 4)],
                     [{"name": "A", "nb_jobs": 10, "duration": 40, "clusters": {"alpha": {}}}],
                     cluster_settings={"alpha": {"workload": "local.swf"}})
    run = run_grid(grid)
    assert [(j.id, j.start, j.stop) for _, j in run.rjms.local_jobs] == [
        ("w0!1", 0.0, 100.0), ("w0!2", 100.0, 200.0)]
    assert all(t.state == "done" for t in run.cigri.tasks)


def test_exit_status_66_and_67_are_resubmitted(tmp_path):
    """colombolib: a run ending with exit status 66 goes back to the bag at priority 20, one
    ending with 67 at priority 0 (RESUBMIT_END); each task still completes exactly once."""
    grid = make_grid(tmp_path, [("c", 4)],
                     [_campaign("A", 40, 50, ["c"], exit_66_rate=0.3, exit_67_rate=0.2)],
                     seed=4)
    run = run_grid(grid, export=str(tmp_path / "out" / "run"))
    jobs = run.cigri.jobs
    e66 = [j for j in jobs if j.event == "EXIT_66"]
    e67 = [j for j in jobs if j.event == "EXIT_67"]
    assert e66 and e67 and all(j.resubmitted for j in e66 + e67)
    assert all(run.rjms.job(j.oar_id).exit_code == 66 for j in e66)
    after = {}
    for j in jobs:
        after.setdefault(j.task.id, []).append(j)
    for runs in after.values():
        for first, second in zip(runs, runs[1:], strict=False):
            assert second.priority == (0 if first.event == "EXIT_67" else 20)
    done = sorted(j.task.id for j in jobs if j.state == "terminated")
    assert done == list(range(40))
    with open(tmp_path / "out" / "run_cigri_campaigns.csv") as f:
        (camp,) = list(csv.DictReader(f))
    assert int(camp["exit_66"]) == len(e66) and int(camp["exit_67"]) == len(e67)


def test_no_queuing_while_a_cluster_is_under_stress(tmp_path):
    """compute_campaigns_orders skips clusters under stress: while beta is (100 s to 400 s),
    the metascheduler queues nothing there; the runner still submits what was queued."""
    grid = make_grid(tmp_path, [("alpha", 50), ("beta", 50)],
                     [_campaign("A", 2000, 60, ["alpha", "beta"])],
                     stress={"beta": [[100, 400]]})
    run = run_grid(grid, until=600)
    beta = [j.queuing_date for j in run.cigri.jobs if j.cluster == "beta"]
    alpha = [j.queuing_date for j in run.cigri.jobs if j.cluster == "alpha"]
    assert not [t for t in beta if 100 <= t < 400]
    assert [t for t in beta if t >= 400] and [t for t in alpha if 100 <= t < 400]
