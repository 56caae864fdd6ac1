"""The client library's optional services (research/seed-systems.md §4.5): `feasibility_check`
(registered only when overridden; the shipped policies answer from their pool) and
`sched.resource-status`, against flux-core's documented answers: EOVERFLOW with the pool's text
for a request that can never fit, EINVAL for a jobspec that cannot be parsed, an empty
response when feasible; `{all, allocated, down}` as R objects."""

from __future__ import annotations

import csv
import json
import socket
import sys
from pathlib import Path

import batsim_py
from batsim_py.decision.flux_peer import flux_scheduler
from batsim_py.flux_client import Scheduler
from batsim_py.flux_client.fifo import FIFOScheduler
from batsim_py.protocol.flux import envelope as env

ROOT = Path(__file__).resolve().parents[2]
T2300 = ROOT / "examples" / "flux"


class Recording(FIFOScheduler):
    """The shipped fifo, noting every job it was asked to allocate."""

    def __init__(self, **options):
        super().__init__(**options)
        self.asked: list[int] = []

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        self.asked.append(jobid)
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)


def _t2300(tmp_path, scheduler, events=None, **options):
    prefix = str(tmp_path / "out")
    peer = flux_scheduler(scheduler, granularity="core", export_prefix=prefix, eventlog=True,
                          **options)
    sim = batsim_py.Simulator(
        str(T2300 / "two_by_two.xml"), [str(T2300 / "t2300.json")], scheduler=peer,
        events=[str(events or T2300 / "t2300_events.jsonl")], forward_unknown_events=True,
        allow_compute_sharing=True, timing="ideal", export=prefix)
    sim.run()
    with open(f"{prefix}_flux_jobs.csv") as f:
        flux = {r["job_id"]: r for r in csv.DictReader(f)}
    with open(f"{prefix}_flux_eventlog.jsonl") as f:
        log = [json.loads(line) for line in f]
    return peer, flux, log


def test_shipped_fifo_refuses_the_unsatisfiable_job_at_submission(tmp_path):
    """t2300's 1-slot-of-3-cores job on 2x2 cores: refused by the feasibility check at its
    submission (t=1) with the pool's "unsatisfiable request" text; fifo never sees its alloc
    and, as in Flux, the job has no eventlog (the submission failed)."""
    fifo = Recording()
    assert fifo.services() == ["feasibility"]
    _, flux, log = _t2300(tmp_path, fifo, feasibility=True)
    assert 6 not in fifo.asked and sorted(fifo.asked) == [1, 2, 3, 4, 5]
    assert flux["w0!6"]["exception_type"] == "feasibility"
    assert flux["w0!6"]["exception_note"].startswith("unsatisfiable request")
    assert [e for e in log if e["id"] == 6] == []
    assert flux["w0!5"]["resource_summary"] == "rank0/core1"  # the rest as in t2300


def test_without_the_override_nothing_is_registered_and_deny_remains(tmp_path):
    from batsim_py.plugins import load_object

    cls = load_object(str(T2300 / "smallest_first.py") + ":SmallestFirst", "Flux scheduler")
    plain = cls()
    assert plain.services() == [] and isinstance(plain, Scheduler)
    _, flux, _ = _t2300(tmp_path, plain, feasibility=True)
    assert flux["w0!6"]["exception_type"] == "alloc"  # denied at alloc time, as before


def _ready(scheduler):
    """Drive `scheduler` through the start-up by hand, as the job manager does."""
    first = scheduler.handle(env.Envelope(0, [env.request("sim.hello", {"epoch": 0})]))
    inventory = {"version": 1, "execution": {
        "R_lite": [{"rank": "0-1", "children": {"core": "0-1"}}],
        "nodelist": ["node[0-1]"], "starttime": 0, "expiration": 0}}
    scheduler.handle(env.Envelope(0, [
        env.response("service.add", None),
        env.response("resource.acquire", {"resources": inventory, "up": "0-1"}),
        env.error("job-manager.sched-hello", env.ENODATA)]))
    scheduler.handle(env.Envelope(0, [env.response("job-manager.sched-ready", {"count": 0})]))
    return first


def _slots(n, cores):
    return {"version": 1, "resources": [{"type": "slot", "count": n, "label": "task",
                                         "with": [{"type": "core", "count": cores}]}],
            "tasks": [{"command": ["x"], "slot": "task", "count": {"per_slot": 1}}],
            "attributes": {"system": {"duration": 0}}}


def test_registration_comes_first_and_checks_answer_as_flux_core():
    fifo = FIFOScheduler()
    first = _ready(fifo)
    assert [m.topic for m in first.messages] == [
        "service.add", "resource.acquire", "job-manager.sched-hello"]
    assert first.messages[0].payload == {"service": "feasibility"}
    reply = fifo.handle(env.Envelope(1, [
        env.request("feasibility.check", {"jobspec": _slots(4, 1)}),  # all four cores
        env.request("feasibility.check", {"jobspec": _slots(1, 3)}),  # no host has 3
        env.request("feasibility.check", {"jobspec": {"version": 1}}),  # unparseable
    ]))
    answers = [(m.topic, m.kind, m.payload, m.errnum) for m in reply.messages]
    assert answers[0] == ("feasibility.check", "response", None, 0)
    assert answers[1][3] == 75 and "unsatisfiable request" in reply.messages[1].errstr
    assert answers[2][3] == 22 and reply.messages[2].errstr


def test_a_scheduler_without_the_service_answers_enosys():
    class Plain(Scheduler):
        def schedule(self):
            pass

    sched = Plain()
    first = _ready(sched)
    assert [m.topic for m in first.messages] == ["resource.acquire", "job-manager.sched-hello"]
    reply = sched.handle(env.Envelope(1, [env.request("feasibility.check",
                                                      {"jobspec": _slots(1, 1)})]))
    assert reply.messages[0].errnum == env.ENOSYS


def test_resource_status_from_the_pool():
    fifo = FIFOScheduler()
    _ready(fifo)
    fifo.handle(env.Envelope(1, [
        env.request("sched.alloc", {"id": 1, "priority": 16, "userid": 0, "t_submit": 1,
                                    "jobspec": _slots(1, 1)}),
        env.response("resource.acquire", {"down": "1"})]))
    reply = fifo.handle(env.Envelope(2, [env.request("sched.resource-status", {})]))
    [answer] = reply.messages
    assert (answer.topic, answer.kind, answer.errnum) == ("sched.resource-status", "response", 0)
    lite = {k: v["execution"]["R_lite"] for k, v in answer.payload.items()}
    assert lite == {"all": [{"rank": "0-1", "children": {"core": "0-1"}}],
                    "allocated": [{"rank": "0", "children": {"core": "0"}}],
                    "down": [{"rank": "1", "children": {"core": "0-1"}}]}


def test_in_process_statuses_match_the_job_manager(tmp_path):
    """t2300 asked at 5 (four jobs on the four cores) and 105 (jobs 1, 2 and 4 ended at 100;
    only job 5, started at 10 on rank0/core1, still runs)."""
    events = tmp_path / "events.jsonl"
    events.write_text((T2300 / "t2300_events.jsonl").read_text() + "".join(
        json.dumps({"timestamp": t, "type": "flux_resource_status"}) + "\n"
        for t in (5, 105)))
    peer, _, _ = _t2300(tmp_path, "fifo", events=events)
    assert [(s["timestamp"], s["summary"]["allocated"], s["differences"])
            for s in peer.statuses] == [(5, "rank[0-1]/core[0-1]", []), (105, "rank0/core1", [])]
    assert (tmp_path / "out_flux_resource_status.jsonl").exists()


def test_shipped_easy_as_a_process_serves_both(tmp_path):
    """Over ZeroMQ (the client as a process): easy registers feasibility and answers it and
    sched.resource-status on the wire."""
    from batsim_py.cli import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"tcp://127.0.0.1:{port}"
    events = tmp_path / "events.jsonl"
    events.write_text((T2300 / "t2300_events.jsonl").read_text()
                      + json.dumps({"timestamp": 5, "type": "flux_resource_status"}) + "\n")
    code = main(["-p", str(T2300 / "two_by_two.xml"), "-w", str(T2300 / "t2300.json"),
                 "--events", str(events), "--protocol", "flux", "--flux-granularity", "core",
                 "--timing", "ideal", "--flux-feasibility", "-e", str(tmp_path / "out"), "-q",
                 "-s", endpoint, "--scheduler-command",
                 f"{sys.executable} -m batsim_py.flux_client easy -s {endpoint}"])
    assert code == 0
    with open(tmp_path / "out_flux_jobs.csv") as f:
        flux = {r["job_id"]: r for r in csv.DictReader(f)}
    assert flux["w0!6"]["exception_type"] == "feasibility"
    with open(tmp_path / "out_flux_resource_status.jsonl") as f:
        [status] = [json.loads(line) for line in f]
    assert status["summary"]["allocated"] == "rank[0-1]/core[0-1]"
    assert status["differences"] == []
