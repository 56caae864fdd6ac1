"""First come, first served, as a Batsim 5 EDC (in-process or, via `serve`, a process).

Jobs run in submission order, each on the lowest-numbered free hosts; the queue's head waits
until enough hosts are free (no backfilling); a job asking for more hosts than the platform
has is rejected. Init data (JSON, optional): `{"format_binary": true}` speaks binary
flatbuffers instead of JSON, `{"format_objects": true}` hands Python dicts over without
serialising (in batsim-py's process only).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from batsim_py.edcs import kit

_state: dict[str, Any] = {}


def batsim_edc_init(init_data: bytes) -> tuple[int, bytes]:
    return kit.start(_state, init_data, "batsim-py-fcfs",
                     queue=deque(), free=[], nb_hosts=0, running={})


def batsim_edc_take_decisions(data: bytes) -> bytes:
    s = _state
    msg = s["codec"].decode(data)
    now = msg["now"]
    free: list[int] = s["free"]
    out: list[dict[str, Any]] = []
    for item in msg["events"]:
        kind = item["event_type"]
        e = item["event"]
        if kind == "SimulationBeginsEvent":
            s["nb_hosts"] = e["computation_host_number"]
            free[:] = [h["id"] for h in e["computation_hosts"]]
        elif kind == "JobSubmittedEvent":
            res = e["job"]["resource_request"]
            if res > s["nb_hosts"] or res <= 0:
                out.append(kit.reject_job(now, e["job_id"]))
            else:
                s["queue"].append((e["job_id"], res))
        elif kind == "JobCompletedEvent":
            free.extend(s["running"].pop(e["job_id"], ()))
    free.sort()
    queue = s["queue"]
    while queue and queue[0][1] <= len(free):
        job_id, res = queue.popleft()
        hosts, free[:] = free[:res], free[res:]
        s["running"][job_id] = hosts
        out.append(kit.execute_job(now, job_id, kit.format_hosts(hosts)))
    return s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit() -> None:
    _state.clear()
