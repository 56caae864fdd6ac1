"""`sched.resource-status` (flux-core, research/seed-systems.md §4.2: JM/CLI -> scheduler,
answered `{all, allocated, down}` as R objects), asked at `flux_resource_status` events,
checked from a raw ZeroMQ client that answers it from its own bookkeeping."""

from __future__ import annotations

import json

from raw_client import NodeFifo, delays, msg, platform, ranks_of, read_csv, run

ENOSYS = 38
WORK = delays((0, 2, 10), (0, 1, 10), (5, 2, 10))  # on 4 one-core hosts, rank 3 down at 2
EVENTS = [{"timestamp": 2, "type": "machine_unavailable", "resources": "3"},
          {"timestamp": 5, "type": "flux_resource_status"},
          {"timestamp": 10, "type": "flux_resource_status"}]


def R_of(ranks):
    return {"version": 1, "execution": {
        "R_lite": [{"rank": str(r), "children": {"core": "0"}} for r in ranks],
        "starttime": 0, "expiration": 0}}


def answering(view=None):
    """NodeFifo answering sched.resource-status from what it granted and what went down
    (`view(all, allocated, down)` may change the answer)."""
    fifo = NodeFifo()
    down: set[int] = set()

    def acquire(m, batch, out):
        if m["payload"] and "down" in m["payload"]:
            down.update(int(r) for r in m["payload"]["down"].split(","))
        return None

    def status(m, batch, out):
        every = ranks_of(fifo.__dict__["R"])
        busy = [r for r in every if r not in fifo.free_ranks and r not in down]
        answer = {"all": R_of(every), "allocated": R_of(busy), "down": R_of(sorted(down))}
        if view is not None:
            answer = view(answer)
        out.append(answer if "topic" in answer else  # (a whole message: an error)
                   msg("sched.resource-status", "response", answer))
        return True

    fifo.hooks["resource.acquire"] = acquire
    fifo.hooks["sched.resource-status"] = status

    def script(batch, state):
        fifo.__dict__["R"] = state.get("R", fifo.__dict__.get("R"))
        return fifo(batch, state)

    return script  # (the down rank stays in NodeFifo's free list: nothing here needs it)


def statuses(tmp_path):
    with open(tmp_path / "out_flux_resource_status.jsonl") as f:
        return [json.loads(line) for line in f]


def test_status_is_asked_at_the_event_and_recorded(tmp_path):
    code, client = run(tmp_path, answering(), WORK, platform(4), "--timing", "ideal",
                       events=EVENTS)
    assert code == 0
    asked = client.sent("sched.resource-status")
    assert [(t, m["kind"]) for t, m in asked] == [(5, "request"), (10, "request")]
    for t, m in asked:  # asked after everything else of its batch (the frees at 10)
        batch = next(b for b, _ in client.transcript if b["now"] == t and m in b["messages"])
        assert batch["messages"][-1] == m
    first, second = statuses(tmp_path)
    assert first["timestamp"] == 5 and first["differences"] == []
    assert first["all"] == R_of([0, 1, 2, 3])  # what the scheduler answered, as is
    assert first["summary"] == {"all": "rank[0-3]/core0", "allocated": "rank[0-2]/core0",
                                "down": "rank3/core0"}
    # At 10 jobs 1 and 2 end and are freed before the question: nothing is allocated (job 3
    # is granted in the same reply, after the answer).
    assert second["summary"]["allocated"] == "" and second["differences"] == []
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    assert jobs["3"]["starting_time"] == "10.000000"


def test_a_view_that_differs_is_reported(tmp_path):
    empty = {"version": 1, "execution": {"R_lite": []}}
    code, _ = run(tmp_path, answering(lambda a: {**a, "allocated": empty}), WORK, platform(4),
                  "--timing", "ideal", events=EVENTS)
    assert code == 0
    first = statuses(tmp_path)[0]
    assert first["differences"] == [
        {"set": "allocated", "scheduler": "", "job_manager": "rank[0-2]/core0"}]


def test_an_error_answer_is_recorded_and_the_run_goes_on(tmp_path):
    code, _ = run(tmp_path, answering(lambda a: {**msg("sched.resource-status", "response",
                                                       None, ENOSYS), "errstr": "no"}),
                  WORK, platform(4), events=EVENTS)
    assert code == 0
    assert [(s["timestamp"], s["errnum"], s["errstr"]) for s in statuses(tmp_path)] == [
        (5, ENOSYS, "no"), (10, ENOSYS, "no")]
    assert [j["final_state"] for j in read_csv(tmp_path / "out_jobs.csv")] == [
        "COMPLETED_SUCCESSFULLY"] * 3


def test_a_malformed_answer_stops_the_run_naming_it(tmp_path, capsys):
    code, _ = run(tmp_path, answering(lambda a: {"all": a["all"], "allocated": a["allocated"]}),
                  WORK, platform(4), events=EVENTS)
    err = capsys.readouterr().err
    assert code == 1
    assert "sched.resource-status without ['down']" in err and "--flux-tolerant" in err
    assert err.count("\n") == 1


def test_no_scheduler_online_nothing_is_asked(tmp_path):
    """A scheduler that loads at t=5 (it answers sim.hello with a wakeup): the question at 2
    is recorded as not asked (ENOSYS, as a broker without the service answers)."""
    fifo = answering()

    def late(batch, state):
        if any(m["topic"] == "sim.hello" for m in batch["messages"]):
            state["hello"] = batch
            return {"now": batch["now"], "messages": [], "wakeup": 5}
        if batch["now"] == 5 and "hello" in state:
            batch = {"now": 5, "messages": state.pop("hello")["messages"] + batch["messages"]}
        return fifo(batch, state)

    events = [{"timestamp": 2, "type": "flux_resource_status"}]
    code, client = run(tmp_path, late, delays((0, 1, 10)), platform(2), events=events)
    assert code == 0
    assert client.sent("sched.resource-status") == []
    [entry] = statuses(tmp_path)
    assert (entry["timestamp"], entry["errnum"]) == (2, ENOSYS)


def test_a_question_at_the_end_is_recorded_not_asked(tmp_path):
    """A question in the batch that ends the simulation would never be answered (sim.end's
    answer is the last word read): it is recorded as not asked, never left out."""
    from batsim_py.decision import events as ev
    from batsim_py.decision.flux_peer import FluxPeer

    class Transport:
        sent: list = []

        def exchange_text(self, text, ending=None):
            self.sent.append(json.loads(text))
            return json.dumps({"now": 7, "messages": [msg("sim.end", "response", {})]})

        def close(self):
            pass

    transport = Transport()
    peer = FluxPeer(transport, export_prefix=str(tmp_path / "out"))
    peer.set_hosts([("node0", 1)])
    peer.online = True  # (a scheduler past its sched-ready)
    peer.exchange(7, [ev.Notify(7, "generic", data={"type": "flux_resource_status"}),
                      ev.SimulationEnds(7)])
    assert [[m["topic"] for m in b["messages"]] for b in transport.sent] == [["sim.end"]]
    [entry] = statuses(tmp_path)
    assert (entry["timestamp"], entry["errnum"]) == (7, ENOSYS)
