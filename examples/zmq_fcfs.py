"""A complete Batsim scheduler over ZeroMQ, in plain Python (pyzmq only): first come, first served.

It speaks the Batsim 4 JSON protocol, so it drives batsim-py and the real Batsim alike:

    python examples/zmq_fcfs.py tcp://127.0.0.1:28000 &
    batsim-py -p platforms/small4.xml -w workloads/delays_small.json -s tcp://127.0.0.1:28000

The scheduler binds a REP socket; the simulator connects and sends one message per call,
`{"now": T, "events": [...]}`, and waits for the reply `{"now": T, "events": [decisions]}`.
Policy: jobs start in submission order on the lowest free machines; the first job that does not
fit waits and everything behind it waits too; a job larger than the platform is rejected.
Machines made unavailable by external events (`--events`) are not used until they are
available again.
"""

from __future__ import annotations

import json
import sys

import zmq


def parse_ids(text: str) -> set[int]:
    """Batsim's interval sets: "0-3 7" -> {0, 1, 2, 3, 7}."""
    ids: set[int] = set()
    for token in text.split():
        lo, _, hi = token.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def format_ids(ids: list[int]) -> str:
    """{0, 1, 2, 3, 7} -> "0-3 7"."""
    parts: list[tuple[int, int]] = []
    for i in sorted(ids):
        if parts and parts[-1][1] == i - 1:
            parts[-1] = (parts[-1][0], i)
        else:
            parts.append((i, i))
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


class Fcfs:
    def __init__(self) -> None:
        self.machines: list[int] = []  # compute machine ids
        self.busy: set[int] = set()
        self.unavailable: set[int] = set()
        self.queue: list[tuple[str, int]] = []  # (job id, number of machines) in arrival order

    def handle(self, now: float, events: list[dict]) -> list[dict]:
        """React to one message's events; return the decisions (all taken at `now`)."""
        for event in events:
            kind, data = event["type"], event["data"]
            if kind == "SIMULATION_BEGINS":
                self.machines = [r["id"] for r in data["compute_resources"]]
            elif kind == "JOB_SUBMITTED":
                self.queue.append((data["job_id"], data["job"]["res"]))
            elif kind == "JOB_COMPLETED":
                self.busy -= parse_ids(data["alloc"])
            elif kind == "NOTIFY" and data["type"] == "event_machine_unavailable":
                self.unavailable |= parse_ids(data["resources"])
            elif kind == "NOTIFY" and data["type"] == "event_machine_available":
                self.unavailable -= parse_ids(data["resources"])
        decisions = []
        while self.queue:
            job_id, res = self.queue[0]
            if res > len(self.machines):
                decisions.append({"timestamp": now, "type": "REJECT_JOB",
                                  "data": {"job_id": job_id}})
                self.queue.pop(0)
                continue
            free = [m for m in self.machines if m not in self.busy and m not in self.unavailable]
            if len(free) < res:
                break  # strict FCFS: nothing overtakes the first waiting job
            alloc = free[:res]
            self.busy.update(alloc)
            decisions.append({"timestamp": now, "type": "EXECUTE_JOB",
                              "data": {"job_id": job_id, "alloc": format_ids(alloc)}})
            self.queue.pop(0)
        return decisions


def main(endpoint: str) -> None:
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)
    scheduler = Fcfs()
    try:
        while True:
            message = json.loads(socket.recv())
            now = message["now"]
            decisions = scheduler.handle(now, message["events"])
            socket.send_string(json.dumps({"now": now, "events": decisions}))
            if any(e["type"] == "SIMULATION_ENDS" for e in message["events"]):
                break
    finally:
        socket.close(linger=1000)  # let the last reply leave before exiting
        context.term()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tcp://127.0.0.1:28000")
