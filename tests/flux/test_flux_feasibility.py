"""The `feasibility` service (RFC 27 "Feasibility", research/seed-systems.md §4.2 and §4.4),
checked from a raw ZeroMQ client written from the RFC and flux-core's documented behaviour:

- a scheduler registers the service with the broker (flux-core `flux_service_register`:
  `service.add {"service": "feasibility"}`, an empty response on success; EEXIST for a name
  already registered, EINVAL for a name with a dot, ENOENT to remove an unknown name);
- `feasibility.check {jobspec}` is asked at submission (flux-core's job-ingest validator
  plugin `feasibility`, which the instance must enable: `--flux-feasibility` here); an empty
  response means feasible, ENOSYS too (the plugin ignores it), an error with a text rejects
  the job at submission: it never reaches the scheduler's `sched.alloc`.
"""

from __future__ import annotations

from raw_client import NodeFifo, delays, handshake, msg, platform, read_csv, run

EOVERFLOW = 75
ENOSYS = 38
FEASIBILITY = "--flux-feasibility"


def error(topic, errnum, errstr=None):
    out = msg(topic, "response", None, errnum)
    if errstr is not None:
        out["errstr"] = errstr
    return out


def registering(answer, fifo=None, service="feasibility"):
    """A NodeFifo that registers `service` in its reply to sim.hello (flux-core registers its
    services before anything else) and answers each feasibility.check with
    `answer(jobspec, batch, state)` (a response message, or None to answer later)."""
    fifo = fifo or NodeFifo()

    def check(m, batch, out):
        reply = answer(m["payload"]["jobspec"], batch, fifo.__dict__)
        if reply is not None:
            out.append(reply)
        return True

    fifo.hooks["feasibility.check"] = check

    def script(batch, state):
        reply = fifo(batch, state)
        if any(m["topic"] == "sim.hello" for m in batch["messages"]):
            reply["messages"].insert(0, msg("service.add", "request", {"service": service}))
        return reply

    return script


def nodes(jobspec):
    return jobspec["resources"][0]["count"]


def at_most_two_nodes(jobspec, batch, state):
    if nodes(jobspec) > 2:
        return error("feasibility.check", EOVERFLOW, f"{nodes(jobspec)} nodes: the policy "
                     "allows 2 at most")
    return msg("feasibility.check", "response", None)


WORK = delays((0, 1, 10), (0, 3, 10), (5, 2, 10), (5, 4, 10))  # all fit the 4 hosts


def allocated_ids(client):
    return [m["payload"]["id"] for _, m in client.sent("sched.alloc")]


def test_refused_jobs_are_rejected_at_submission_with_the_text(tmp_path):
    code, client = run(tmp_path, registering(at_most_two_nodes), WORK, platform(4),
                       "--timing", "ideal", FEASIBILITY)
    assert code == 0
    registered = [m for b, _ in client.transcript for m in b["messages"]
                  if m["topic"] == "service.add"]
    assert registered == [msg("service.add", "response", None)]  # empty success response
    checks = client.sent("feasibility.check")
    assert [(t, m["kind"], set(m["payload"])) for t, m in checks] == [
        (0, "request", {"jobspec"}), (0, "request", {"jobspec"}),
        (5, "request", {"jobspec"}), (5, "request", {"jobspec"})]  # at each submission
    assert [nodes(m["payload"]["jobspec"]) for _, m in checks] == [1, 3, 2, 4]
    assert allocated_ids(client) == [1, 3]  # never a sched.alloc for the refused ones
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    assert {k: j["final_state"] for k, j in jobs.items()} == {
        "1": "COMPLETED_SUCCESSFULLY", "2": "REJECTED", "3": "COMPLETED_SUCCESSFULLY",
        "4": "REJECTED"}
    assert jobs["3"]["starting_time"] == "5.000000"
    flux = {r["job_id"]: r for r in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert (flux["w0!2"]["result"], flux["w0!2"]["exception_note"]) == (
        "FAILED", "3 nodes: the policy allows 2 at most")
    assert flux["w0!4"]["exception_note"] == "4 nodes: the policy allows 2 at most"
    assert flux["w0!1"]["exception_note"] == flux["w0!3"]["exception_note"] == ""


def test_a_scheduler_without_the_service_is_never_asked(tmp_path):
    fifo = NodeFifo()
    code, client = run(tmp_path, fifo, WORK, platform(4), "--timing", "ideal", FEASIBILITY)
    assert code == 0
    assert client.sent("feasibility.check") == []
    assert allocated_ids(client) == [1, 2, 3, 4]
    assert [j["final_state"] for j in read_csv(tmp_path / "out_jobs.csv")] == [
        "COMPLETED_SUCCESSFULLY"] * 4


def test_without_the_instance_option_no_check_is_made(tmp_path):
    """flux-core's default validator plugins are ["jobspec"]: the feasibility plugin is the
    instance's choice, registered service or not."""
    code, client = run(tmp_path, registering(at_most_two_nodes), WORK, platform(4))
    assert code == 0
    assert client.sent("feasibility.check") == []
    assert allocated_ids(client) == [1, 2, 3, 4]


def test_enosys_is_feasible_and_a_bare_error_still_rejects(tmp_path):
    def answer(jobspec, batch, state):
        if nodes(jobspec) == 3:
            return error("feasibility.check", ENOSYS)  # (as if no service: ignored)
        if nodes(jobspec) == 4:
            return error("feasibility.check", EOVERFLOW)  # no text
        return msg("feasibility.check", "response", {})  # an empty object is empty too

    code, client = run(tmp_path, registering(answer), WORK, platform(4), FEASIBILITY)
    assert code == 0
    assert allocated_ids(client) == [1, 2, 3]
    flux = {r["job_id"]: r for r in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert flux["w0!4"]["result"] == "FAILED" and "75" in flux["w0!4"]["exception_note"]
    jobs = {j["job_id"]: j["final_state"] for j in read_csv(tmp_path / "out_jobs.csv")}
    assert jobs["4"] == "REJECTED"


def test_a_job_waits_for_its_answer_and_can_be_cancelled_meanwhile(tmp_path):
    """Ingest waits for the check: a check answered at t=7 (the scheduler asked a wakeup)
    lets its job be allocated at 7, not before; a job cancelled while being checked never
    reaches sched.alloc."""
    def answer(jobspec, batch, state):
        state.setdefault("waiting", []).append(jobspec)
        return None

    fifo = NodeFifo()
    script = registering(answer, fifo)

    def later(batch, state):
        reply = script(batch, state)
        if batch["now"] == 0 and fifo.__dict__.get("waiting"):
            reply["wakeup"] = 7
        if batch["now"] == 7:
            reply["messages"] += [msg("feasibility.check", "response", None)
                                  for _ in fifo.__dict__.pop("waiting", [])]
        return reply

    events = [{"timestamp": 3, "type": "flux_cancel", "job_id": "w0!2"}]
    code, client = run(tmp_path, later, delays((0, 1, 10), (0, 1, 10)), platform(2),
                       "--timing", "ideal", FEASIBILITY, events=events)
    assert code == 0
    assert [(t, m["payload"]["id"]) for t, m in client.sent("sched.alloc")] == [(7, 1)]
    jobs = {j["job_id"]: j for j in read_csv(tmp_path / "out_jobs.csv")}
    assert (jobs["1"]["starting_time"], jobs["2"]["final_state"]) == ("7.000000", "REJECTED")
    assert read_csv(tmp_path / "out_flux_jobs.csv")[1]["result"] == "CANCELED"


def _stops(tmp_path, capsys, script, text):
    code, _ = run(tmp_path, script, WORK, platform(4), FEASIBILITY)
    err = capsys.readouterr().err
    assert code == 1, err
    assert text in err and "--flux-tolerant" in err
    assert err.count("\n") == 1  # one line
    assert (tmp_path / "out_jobs.csv").exists() and (tmp_path / "out_flux_jobs.csv").exists()


def test_a_success_with_a_payload_stops_the_run_naming_it(tmp_path, capsys):
    """RFC 27: "The response SHALL consist of an empty payload on success"."""
    _stops(tmp_path, capsys, registering(
        lambda j, b, s: msg("feasibility.check", "response", {"feasible": False})),
        "answered feasibility.check with a success response whose payload is "
        '{"feasible":false}')


def test_an_unasked_response_stops_the_run(tmp_path, capsys):
    fifo = NodeFifo()

    def script(batch, state):
        reply = fifo(batch, state)
        if any(m["topic"] == "sched.alloc" for m in batch["messages"]):
            reply["messages"].append(msg("feasibility.check", "response", None))
        return reply

    _stops(tmp_path, capsys, script, "answered feasibility.check, which the job manager did "
           "not ask")


def test_tolerant_a_faulty_check_accepts_the_job_and_drops_the_service(tmp_path):
    """Under --flux-tolerant a fault means the scheduler is gone, and its services with it:
    the job being checked is accepted (the validator takes ENOSYS for feasible), later jobs
    are not checked until the restarted scheduler registers again."""
    fifo = NodeFifo()
    script = registering(
        lambda j, b, s: msg("feasibility.check", "response", {"oops": 1}), fifo)

    def restart(batch, state):
        reply = script(batch, state)
        if batch["now"] == 0 and any(m["topic"] == "feasibility.check"
                                     for m in batch["messages"]) and not state.get("again"):
            state["again"] = True  # the restart: hello, then ready at its ENODATA
            reply["messages"].append(msg("job-manager.sched-hello", "request", {}))
        return reply

    code, client = run(tmp_path, restart, WORK, platform(4), "--timing", "ideal",
                       FEASIBILITY, "--flux-tolerant")
    assert code == 0
    checks = client.sent("feasibility.check")
    assert [t for t, _ in checks] == [0, 0]  # jobs 1 and 2, in flight at the fault
    assert sorted(allocated_ids(client)) == [1, 2, 3, 4]
    assert [j["final_state"] for j in read_csv(tmp_path / "out_jobs.csv")] == [
        "COMPLETED_SUCCESSFULLY"] * 4


def test_service_registration_answers_as_the_broker(tmp_path):
    def script(batch, state):
        out = handshake(batch, state, {"mode": "unlimited"}) or []
        if any(m["topic"] == "sim.hello" for m in batch["messages"]):
            out = [msg("service.add", "request", {"service": "feasibility"}),
                   msg("service.add", "request", {"service": "feasibility"}),
                   msg("service.add", "request", {"service": "feasibility.check"}),
                   msg("service.remove", "request", {"service": "nothing"}),
                   msg("service.add", "request", {"name": "feasibility"}),
                   msg("service.remove", "request", {"service": "feasibility"}), *out]
        for m in batch["messages"]:
            if m["topic"] == "sched.alloc":
                out.append(msg("sched.alloc", "response", {
                    "id": m["payload"]["id"], "type": 0, "R": {"version": 1, "execution": {
                        "R_lite": [{"rank": "0", "children": {"core": "0"}}]}}}))
        return {"now": batch["now"], "messages": out}

    code, client = run(tmp_path, script, delays((0, 1, 10)), platform(1), FEASIBILITY)
    assert code == 0
    answers = [(m["topic"], m["errnum"]) for b, _ in client.transcript
               for m in b["messages"] if m["topic"].startswith("service.")]
    assert answers == [("service.add", 0), ("service.add", 17), ("service.add", 22),
                       ("service.remove", 2), ("service.add", 71), ("service.remove", 0)]
    assert client.sent("feasibility.check") == []  # removed before any job came
