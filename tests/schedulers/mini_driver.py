"""A tiny idealised event loop for exercising schedulers without the engine.

Delay jobs only, no Batsim message delays: submissions at `subtime`, completions at start + delay
(or walltime if shorter), all events at the same instant batched in one request. Good enough to
compare two schedulers or to time one; not a model of Batsim's timing.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from batsim_py.decision.decisions import ExecuteJob, RejectJob
from batsim_py.decision.events import (
    JobCompleted,
    JobSubmitted,
    Notify,
    Resource,
    SimulationBegins,
    SimulationEnds,
)
from batsim_py.decision.interface import DecisionProcess
from batsim_py.workload.model import Job


def make_job(i: int, subtime: float, res: int, walltime: float, delay: float) -> tuple[Job, float]:
    desc = {"id": f"w0!{i}", "subtime": subtime, "walltime": walltime, "res": res,
            "profile": f"d{delay}"}
    return Job(id=f"w0!{i}", workload="w0", name=str(i), subtime=float(subtime),
               walltime=float(walltime), res=res, profile=f"d{delay}", description=desc), delay


def begins(nb: int) -> SimulationBegins:
    res = tuple(Resource(i, f"h{i}", "idle", {"role": ""}, {}) for i in range(nb))
    config = {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
              "dynamic-jobs-acknowledged": False, "forward-unknown-events": False}
    return SimulationBegins(0.0, nb, nb, 0, False, True, config, res, (), {"w0": "w.json"}, {})


def run(sched: DecisionProcess, nb: int, jobs: Sequence[tuple[Job, float]]) -> list:
    """Returns every reply's decisions (the trace to compare)."""
    trace: list = []
    sched.exchange(0.0, [begins(nb)])
    queue: list = []  # (time, order, kind, payload)
    order = 0
    for job, delay in sorted(jobs, key=lambda jd: (jd[0].subtime, jd[0].id)):
        queue.append((job.subtime, order, "sub", (job, delay)))
        order += 1
    heapq.heapify(queue)
    delays = {job.id: delay for job, delay in jobs}
    walls = {job.id: job.walltime for job, _ in jobs}
    n_static = len(jobs)
    submitted = 0
    while queue:
        now = queue[0][0]
        events = []
        while queue and queue[0][0] == now:
            _, _, kind, payload = heapq.heappop(queue)
            if kind == "sub":
                events.append(JobSubmitted(now, payload[0]))
                submitted += 1
            else:
                events.append(JobCompleted(now, payload[0], payload[1], 0, payload[2]))
        if submitted == n_static and all(k != "sub" for _, _, k, _ in queue) and \
                not any(isinstance(e, Notify) for e in events) and n_static >= 0:
            events.append(Notify(now, "no_more_static_job_to_submit"))
            n_static = -1
        reply = sched.exchange(now, events)
        trace.append(reply)
        for d in reply.decisions:
            if isinstance(d, ExecuteJob):
                wall = walls[d.job_id]
                run_for = delays[d.job_id]
                state = "COMPLETED_SUCCESSFULLY"
                if 0 <= wall < run_for:
                    run_for, state = wall, "COMPLETED_WALLTIME_REACHED"
                heapq.heappush(queue, (now + run_for, order, "end", (d.job_id, state, d.alloc)))
                order += 1
            elif isinstance(d, RejectJob):
                pass
    trace.append(sched.exchange(trace[-1].now if trace else 0.0, [SimulationEnds(0.0)]))
    return trace
