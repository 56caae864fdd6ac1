"""EASY backfilling as a Batsim 5 EDC (in-process or, via `serve`, a process).

The queue's head starts as soon as enough hosts are free; otherwise it gets a reservation at
the earliest time enough hosts are released by running jobs (their start plus walltime, the
"shadow time"), and later jobs start now on free hosts if they end before the shadow time
(by their walltime) or use only hosts the head will not need ("extra" hosts). Jobs without
walltime never end for the reservation's arithmetic. Hosts are taken lowest id first; a job
asking for more hosts than the platform has is rejected. Init data (JSON, optional):
`{"format_binary": true}` speaks binary flatbuffers instead of JSON, `{"format_objects": true}`
hands Python dicts over without serialising (in batsim-py's process only).
"""

from __future__ import annotations

import math
from typing import Any

from batsim_py.edcs import kit

_state: dict[str, Any] = {}


def batsim_edc_init(init_data: bytes) -> tuple[int, bytes]:
    return kit.start(_state, init_data, "batsim-py-easy",
                     queue=[], free=[], nb_hosts=0, running={})


def batsim_edc_take_decisions(data: bytes) -> bytes:
    s = _state
    msg = s["codec"].decode(data)
    now = msg["now"]
    free: list[int] = s["free"]
    running: dict[str, tuple[list[int], float]] = s["running"]
    out: list[dict[str, Any]] = []
    for item in msg["events"]:
        kind = item["event_type"]
        e = item["event"]
        if kind == "SimulationBeginsEvent":
            s["nb_hosts"] = e["computation_host_number"]
            free[:] = [h["id"] for h in e["computation_hosts"]]
        elif kind == "JobSubmittedEvent":
            job = e["job"]
            res = job["resource_request"]
            if res > s["nb_hosts"] or res <= 0:
                out.append(kit.reject_job(now, e["job_id"]))
            else:
                walltime = job.get("walltime")
                s["queue"].append((e["job_id"], res,
                                   math.inf if walltime is None else walltime))
        elif kind == "JobCompletedEvent":
            hosts, _ = running.pop(e["job_id"], ((), 0.0))
            free.extend(hosts)
    free.sort()
    _schedule(now, s["queue"], free, running, out)
    return s["codec"].encode(kit.message(now, out))


def _start(now: float, job: tuple[str, int, float], free: list[int],
           running: dict[str, tuple[list[int], float]], out: list[dict[str, Any]]) -> None:
    job_id, res, walltime = job
    hosts, free[:] = free[:res], free[res:]
    running[job_id] = (hosts, now + walltime)
    out.append(kit.execute_job(now, job_id, kit.format_hosts(hosts)))


def _schedule(now: float, queue: list[tuple[str, int, float]], free: list[int],
              running: dict[str, tuple[list[int], float]], out: list[dict[str, Any]]) -> None:
    while queue and queue[0][1] <= len(free):
        _start(now, queue.pop(0), free, running, out)
    if not queue:
        return
    head = queue[0]
    available = len(free)
    shadow = math.inf
    extra = 0
    for hosts, end in sorted(running.values(), key=lambda r: r[1]):
        available += len(hosts)
        if available >= head[1]:
            shadow = end
            extra = available - head[1]
            break
    i = 1
    while i < len(queue) and free:
        job = queue[i]
        _, res, walltime = job
        if res <= len(free) and (now + walltime <= shadow or res <= extra):
            if now + walltime > shadow:
                extra -= res
            _start(now, queue.pop(i), free, running, out)
        else:
            i += 1


def batsim_edc_deinit() -> None:
    _state.clear()
