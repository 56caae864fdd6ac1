"""Priorities, expirations, nodes going down, the eventlog (§5.4 item 5 and §4.4's job path)."""

from __future__ import annotations

import json

from raw_client import NodeFifo, delays, msg, platform, read_csv, run


def test_prioritize_and_limited_mode_cancel(tmp_path):
    """One host, limit 2: job 1 runs, allocs 2 and 3 wait. Job 3's new urgency reaches the
    scheduler as sched.prioritize; queued job 4 made urgent outranks the lowest pending alloc
    (job 2), which is cancelled to make room (flux-core alloc_queue_recalc_pending)."""
    fifo = NodeFifo({"mode": "limited", "limit": 2})
    events = [{"timestamp": 5, "type": "flux_urgency", "job_id": "w0!3", "urgency": 20},
              {"timestamp": 6, "type": "flux_urgency", "job_id": "w0!4", "urgency": 31}]
    code, client = run(tmp_path, fifo, delays(*[(0, 1, 100)] * 4), platform(1), "--timing",
                       "ideal", events=events)
    assert code == 0
    assert client.sent("sched.prioritize") == [
        (5, msg("sched.prioritize", "request", {"jobs": [[3, 20]]}))]
    assert client.sent("sched.cancel") == [(6, msg("sched.cancel", "request", {"id": 2}))]
    allocs = [(t, m["payload"]["id"], m["payload"]["priority"])
              for t, m in client.sent("sched.alloc")]
    assert allocs == [(0, 1, 16), (0, 2, 16), (0, 3, 16), (6, 4, 4294967295), (100, 2, 16)]
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    # the NodeFifo client grants allocs in arrival order: 3, then 4, then 2
    assert [jobs[i]["starting_time"] for i in "1342"] == [
        "0.000000", "100.000000", "200.000000", "300.000000"]


def _expiration_client(answer):
    fifo = NodeFifo()

    def hook(m, batch, out):
        if m["kind"] == "request":
            out.append(answer(m))
            return True
        return None

    fifo.hooks["sched.expiration"] = hook
    return fifo


def test_expiration_enosys_applied(tmp_path):
    fifo = _expiration_client(lambda m: {**msg("sched.expiration", "response", None, 38),
                                         "errstr": "not implemented"})
    events = [{"timestamp": 5, "type": "flux_expiration", "job_id": "w0!1", "expiration": 50}]
    code, client = run(tmp_path, fifo, delays((0, 1, 100), (0, 1, 100)), platform(2),
                       "--timing", "ideal", events=events)
    assert code == 0
    assert client.sent("sched.expiration") == [
        (5, msg("sched.expiration", "request", {"id": 1, "expiration": 50}))]
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    assert (jobs["1"]["final_state"], jobs["1"]["finish_time"]) == ("COMPLETED_KILLED",
                                                                    "50.000000")
    assert jobs["2"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    flux = {j["job_id"]: j for j in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert (flux["w0!1"]["result"], flux["w0!1"]["exception_type"]) == ("TIMEOUT", "timeout")


def test_expiration_einval_rejected(tmp_path):
    fifo = _expiration_client(lambda m: {**msg("sched.expiration", "response", None, 22),
                                         "errstr": "would invalidate a reservation"})
    events = [{"timestamp": 5, "type": "flux_expiration", "job_id": "w0!1", "expiration": 50}]
    code, _ = run(tmp_path, fifo, delays((0, 1, 100)), platform(2), "--timing", "ideal",
                  events=events)
    assert code == 0
    job = read_csv(tmp_path / "out_jobs.csv")[0]
    assert (job["final_state"], job["finish_time"]) == ("COMPLETED_SUCCESSFULLY", "100.000000")


def test_walltime_is_the_expiration(tmp_path):
    fifo = NodeFifo()
    work = delays((0, 1, 100))
    work["jobs"][0]["walltime"] = 30
    code, client = run(tmp_path, fifo, work, platform(2), "--timing", "ideal")
    assert code == 0
    alloc = client.sent("sched.alloc")[0][1]["payload"]
    assert alloc["jobspec"]["attributes"]["system"]["duration"] == 30
    job = read_csv(tmp_path / "out_jobs.csv")[0]
    assert (job["final_state"], job["finish_time"]) == ("COMPLETED_WALLTIME_REACHED",
                                                        "30.000000")
    assert read_csv(tmp_path / "out_flux_jobs.csv")[0]["result"] == "TIMEOUT"


def test_node_down_and_up(tmp_path):
    fifo = NodeFifo()
    events = [{"timestamp": 5, "type": "machine_unavailable", "resources": "0"},
              {"timestamp": 50, "type": "machine_available", "resources": "0"}]
    code, client = run(tmp_path, fifo, delays((0, 1, 100), (0, 1, 100)), platform(2),
                       "--timing", "ideal", "--flux-eventlog", events=events)
    assert code == 0
    updates = [(t, m["payload"]) for t, m in client.sent("resource.acquire")][1:]
    assert updates == [(5, {"down": "0"}), (50, {"up": "0"})]
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    assert (jobs["1"]["final_state"], jobs["1"]["finish_time"]) == ("COMPLETED_KILLED",
                                                                    "5.000000")
    flux = {j["job_id"]: j for j in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert flux["w0!1"]["exception_type"] == "node-fail"
    log = [json.loads(line) for line in (tmp_path / "out_flux_eventlog.jsonl").open()]
    names = [e["name"] for e in log if e["id"] == 1]
    assert names == ["submit", "priority", "depend", "alloc", "start", "exception", "finish",
                     "release", "free", "clean"]
    assert all(set(e) == {"id", "job_id", "timestamp", "name", "context"} for e in log)


def test_a_job_asking_for_nothing_is_rejected_unsent(tmp_path):
    fifo = NodeFifo()
    code, client = run(tmp_path, fifo, delays((0, 0, 10), (0, 1, 10)), platform(2))
    assert code == 0
    assert [m["payload"]["id"] for _, m in client.sent("sched.alloc")] == [2]
    jobs = {j["job_id"]: j["final_state"] for j in read_csv(tmp_path / "out_jobs.csv")}
    assert jobs == {"1": "REJECTED", "2": "COMPLETED_SUCCESSFULLY"}
