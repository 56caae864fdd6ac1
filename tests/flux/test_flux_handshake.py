"""RFC 27 hello/ready, limits, the job path, free, held jobs, time-stepping (§5.4 items 1, 3, 6),
checked from a raw ZeroMQ client written from the RFC (raw_client.py)."""

from __future__ import annotations

import json

from raw_client import NodeFifo, R, delays, msg, platform, read_csv, run


def test_handshake_limit_and_free(tmp_path):
    fifo = NodeFifo({"mode": "limited", "limit": 2})

    def late_start(batch, state):
        """Say hello only at t=5, once the six jobs wait (a scheduler loaded late)."""
        if any(m["topic"] == "sim.hello" for m in batch["messages"]):
            return {"now": batch["now"], "messages": [], "wakeup": 5}
        if batch["now"] == 5 and not state.get("started"):
            state["started"] = True
            batch = {"now": 5, "messages": [msg("sim.hello", "request", {})]}
        return fifo(batch, state)

    work = delays(*[(0, 1, 10)] * 6)
    code, client = run(tmp_path, late_start, work, platform(4), "--timing", "ideal")
    assert code == 0
    batches = [b for b, _ in client.transcript]
    assert batches[0]["messages"] == [msg("sim.hello", "request", {"epoch": 0, "version": 1})]
    assert batches[1]["now"] == 5
    second = batches[2]["messages"]
    acquire = [m for m in second if m["topic"] == "resource.acquire"]
    assert acquire[0]["kind"] == "response" and acquire[0]["payload"]["up"] == "0-3"
    assert acquire[0]["payload"]["resources"]["execution"]["R_lite"] == [
        {"rank": "0-3", "children": {"core": "0"}}]
    assert acquire[0]["payload"]["resources"]["execution"]["nodelist"] == ["node[0-3]"]
    hello = [m for m in second if m["topic"] == "job-manager.sched-hello"]
    assert hello == [msg("job-manager.sched-hello", "response", None, 61)]  # ENODATA, no job
    assert not any(m["topic"] == "sched.alloc" for m in second)
    third = batches[3]["messages"]
    assert third[0] == msg("job-manager.sched-ready", "response", {"count": 6})
    assert [m["payload"]["id"] for m in third if m["topic"] == "sched.alloc"] == [1, 2]
    assert fifo.max_outstanding == 2
    alloc = [m for _, m in client.sent("sched.alloc")][0]["payload"]
    assert set(alloc) == {"id", "priority", "userid", "t_submit", "jobspec"}
    assert alloc["priority"] == 16 and alloc["userid"] == 0
    assert alloc["jobspec"]["resources"][0]["type"] == "node"
    frees = [m for _, m in client.sent("sched.free")]
    assert len(frees) == 6
    for free in frees:
        assert free["kind"] == "request" and free["payload"]["final"] is True
        assert free["payload"]["R"]["execution"]["R_lite"]
    jobs = read_csv(tmp_path / "out_jobs.csv")
    assert [j["final_state"] for j in jobs] == ["COMPLETED_SUCCESSFULLY"] * 6


def test_unlimited_order_held_jobs_never_sent(tmp_path):
    urg = {"1": {"urgency": 16}, "2": {"urgency": 20}, "3": {"urgency": 0},
           "4": {"urgency": 31}, "5": {"urgency": 16}}
    fifo = NodeFifo()
    work = delays(*[(0, 4, 10)] * 5, **urg)  # one job at a time on the 4 hosts
    events = [{"timestamp": 100, "type": "flux_cancel", "job_id": "w0!3"}]
    code, client = run(tmp_path, fifo, work, platform(4), events=events)
    assert code == 0
    allocs = [m["payload"] for _, m in client.sent("sched.alloc")]
    assert [a["id"] for a in allocs] == [4, 2, 1, 5]
    assert allocs[0]["priority"] == 4294967295
    flux = {r["job_id"]: r for r in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert flux["w0!3"]["result"] == "CANCELED" and flux["w0!3"]["exception_type"] == "cancel"
    jobs = {r["job_id"]: r for r in read_csv(tmp_path / "out_jobs.csv")}
    assert jobs["3"]["final_state"] == "REJECTED"
    assert [jobs[j]["starting_time"][:2] for j in "4215"] == ["0.", "10", "20", "30"]


def test_wakeup_time_stepping(tmp_path):
    """A client that answers `wakeup: t+30` and allocates at t+30: the job starts at t+30
    exactly (ideal timing), and that batch carries nothing else."""

    def script(batch, state):
        from raw_client import handshake

        out = handshake(batch, state, {"mode": "unlimited"}) or []
        reply = {"now": batch["now"], "messages": out}
        for m in batch["messages"]:
            if m["topic"] == "sched.alloc":
                state["job"] = m["payload"]["id"]
                reply["wakeup"] = batch["now"] + 30
        if batch["now"] == 30 and "job" in state:
            state["woken"] = batch["messages"]
            out.append(msg("sched.alloc", "response",
                           {"id": state.pop("job"), "type": 0, "R": R({0: "0"})}))
        return reply

    code, client = run(tmp_path, script, delays((0, 1, 10)), platform(4), "--timing", "ideal")
    assert code == 0
    assert client.state["woken"] == []
    job = read_csv(tmp_path / "out_jobs.csv")[0]
    assert job["starting_time"] == "30.000000" and job["finish_time"] == "40.000000"


def test_epoch_shifts_every_absolute_time(tmp_path):
    fifo = NodeFifo()
    code, client = run(tmp_path, fifo, delays((5, 1, 10)), platform(2), "--flux-epoch",
                       "1552593348", "--timing", "ideal")
    assert code == 0
    batches = [b for b, _ in client.transcript]
    assert batches[0]["now"] == 1552593348
    assert batches[0]["messages"][0]["payload"]["epoch"] == 1552593348
    alloc = client.sent("sched.alloc")[0]
    assert alloc[0] == 1552593353 and alloc[1]["payload"]["t_submit"] == 1552593353
    free = client.sent("sched.free")[0][1]["payload"]["R"]["execution"]
    assert free["starttime"] == 1552593353 and free["expiration"] == 1552593353 + 1000
    flux = read_csv(tmp_path / "out_flux_jobs.csv")[0]
    assert json.loads(json.dumps(flux["t_submit"])) == "1552593353.000000"


def test_reply_now_is_when_decisions_apply(tmp_path):
    """A scheduler that took 5 s to decide (its reply's now is t+5): the job starts at t+5."""
    fifo = NodeFifo()

    def slow(batch, state):
        reply = fifo(batch, state)
        if any(m["topic"] == "sched.alloc" for m in reply["messages"]):
            reply["now"] = batch["now"] + 5
        return reply

    code, _ = run(tmp_path, slow, delays((1, 1, 10)), platform(2), "--timing", "ideal")
    assert code == 0
    assert read_csv(tmp_path / "out_jobs.csv")[0]["starting_time"] == "6.000000"


def test_malformed_reply_stops_the_run_naming_it(tmp_path, capsys):
    def bad(batch, state):
        return {"now": batch["now"], "messages": [{"topic": "x", "kind": "answer"}]}

    code, _ = run(tmp_path, bad, delays((0, 1, 10)), platform(2))
    err = capsys.readouterr().err
    assert code == 1
    assert "message 0 (x): 'kind' must be \"request\" or \"response\"" in err


def test_same_inputs_same_outputs(tmp_path):
    outputs = []
    for name in ("a", "b"):
        fifo = NodeFifo({"mode": "limited", "limit": 2})
        (tmp_path / name).mkdir()
        code, _ = run(tmp_path / name, fifo, delays(*[(i, 1 + i % 2, 10 + i) for i in range(8)]),
                      platform(3), "--flux-eventlog")
        assert code == 0
        outputs.append([(tmp_path / name / f).read_bytes() for f in (
            "out_jobs.csv", "out_flux_jobs.csv", "out_flux_eventlog.jsonl")])
    assert outputs[0] == outputs[1]


def test_epoch_changes_no_simulated_time(tmp_path):
    """Times on the wire carry the epoch, the simulation's do not: a large epoch (where
    t + E - E != t in floating point) gives the same outputs as none."""
    from batsim_py.cli import main

    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    outputs = []
    for epoch in ("0", "1552593348"):
        prefix = tmp_path / f"e{epoch}"
        code = main(["-p", str(root / "platforms" / "small4.xml"), "-w",
                     str(root / "workloads" / "delays_small.json"), "-e", str(prefix), "-q",
                     "--protocol", "flux", "--flux-scheduler", "easy", "--flux-epoch", epoch])
        assert code == 0
        outputs.append([(tmp_path / f"e{epoch}_{f}").read_bytes()
                        for f in ("jobs.csv", "machine_states.csv")])
    assert outputs[0] == outputs[1]
