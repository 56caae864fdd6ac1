"""A raw ZeroMQ Flux scheduler for tests, written from RFC 27 and the envelope of
research/seed-systems.md §4.4, not from batsim-py's code: it binds a REP socket, reads each
batch as plain JSON, and lets a test's `script(batch, state) -> reply` answer it. Every batch
and reply is kept in `transcript` for the assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq

from batsim_py.cli import main

Script = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
ENODATA = 61


def msg(topic: str, kind: str, payload: Any, errnum: int = 0) -> dict[str, Any]:
    return {"topic": topic, "kind": kind, "payload": payload, "errnum": errnum}


def handshake(batch: dict[str, Any], state: dict[str, Any], mode: dict[str, Any]
              ) -> list[dict[str, Any]] | None:
    """The RFC 27 start-up, as a scheduler performs it: on sim.hello ask resource.acquire and
    sched-hello; at ENODATA send sched-ready; returns the requests to send (None: not a
    handshake batch). Stores the inventory in state['R'] and the up idset in state['up']."""
    out = []
    for m in batch["messages"]:
        if m["topic"] == "sim.hello":
            out += [msg("resource.acquire", "request", {}),
                    msg("job-manager.sched-hello", "request", {})]
        elif m["topic"] == "resource.acquire" and m["payload"] and "resources" in m["payload"]:
            state["R"] = m["payload"]["resources"]
            state["up"] = m["payload"]["up"]
        elif m["topic"] == "job-manager.sched-hello" and m["errnum"] == ENODATA:
            out.append(msg("job-manager.sched-ready", "request", mode))
    return out or None


def R(rank_cores: dict[int, str]) -> dict[str, Any]:
    """An RFC 20 R: rank -> core idset."""
    return {"version": 1, "execution": {
        "R_lite": [{"rank": str(r), "children": {"core": c}} for r, c in rank_cores.items()],
        "starttime": 0, "expiration": 0}}


class RawClient:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.state: dict[str, Any] = {}
        self.transcript: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.error: BaseException | None = None
        self.stop = False
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 0)
        port = self.socket.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while True:
                waited = 0
                while not self.stop and waited < 20_000 and not self.socket.poll(100):
                    waited += 100
                if self.stop or waited >= 20_000:
                    return
                batch = json.loads(self.socket.recv())
                if any(m["topic"] == "sim.end" for m in batch["messages"]):
                    reply = {"now": batch["now"], "messages": [
                        msg("sim.end", "response", {})]}
                else:
                    reply = self.script(batch, self.state)
                self.transcript.append((batch, reply))
                self.socket.send_string(json.dumps(reply))
                if any(m["topic"] == "sim.end" for m in batch["messages"]):
                    return
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def close(self) -> None:
        self.stop = True
        self.thread.join(5)
        self.socket.close(0)
        self.context.term()

    def sent(self, topic: str) -> list[tuple[float, dict[str, Any]]]:
        """(now, message) of every message batsim-py sent on `topic`."""
        return [(b["now"], m) for b, _ in self.transcript for m in b["messages"]
                if m["topic"] == topic]


def run(tmp: Path, script: Script, workload: dict[str, Any], platform: str,
        *extra: str, events: list[dict[str, Any]] | None = None) -> tuple[int, RawClient]:
    """batsim-py --protocol flux against `script`; outputs in tmp/out_*."""
    (tmp / "p.xml").write_text(platform)
    (tmp / "w.json").write_text(json.dumps(workload))
    args = ["-p", str(tmp / "p.xml"), "-w", str(tmp / "w.json"), "-e", str(tmp / "out"),
            "-q", "--protocol", "flux", "--scheduler-timeout", "20",
            "--scheduler-connect-timeout", "20", *extra]
    if events is not None:
        (tmp / "e.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        args += ["--events", str(tmp / "e.jsonl")]
    client = RawClient(script)
    try:
        code = main([*args, "-s", client.endpoint])
    finally:
        client.close()
    if client.error is not None:
        raise client.error
    return code, client


def platform(hosts: int, cores: int = 1) -> str:
    """`hosts` compute hosts node0.. with `cores` cores, a master, Full routing."""
    lines = ['<?xml version="1.0"?>', '<platform version="4.1">',
             '<zone id="z" routing="Full">', '<host id="master_host" speed="1Gf"/>']
    lines += [f'<host id="node{i}" speed="1Gf" core="{cores}"/>' for i in range(hosts)]
    lines += ['<link id="l" bandwidth="1GBps" latency="0"/>']
    for i in range(hosts):
        lines.append(f'<route src="master_host" dst="node{i}"><link_ctn id="l"/></route>')
    lines += ["</zone>", "</platform>"]
    return "\n".join(lines) + "\n"


def delays(*jobs: tuple[float, int, float], **fields: Any) -> dict[str, Any]:
    """A workload of (subtime, res, delay) jobs with ids 1, 2, ... (walltime 1000)."""
    out = []
    for i, (sub, res, delay) in enumerate(jobs, start=1):
        job = {"id": i, "subtime": sub, "res": res, "walltime": 1000, "profile": f"d{delay:g}"}
        job.update(fields.get(str(i), {}))
        out.append(job)
    profiles = {f"d{delay:g}": {"type": "delay", "delay": delay} for _, _, delay in jobs}
    return {"nb_res": 4, "jobs": out, "profiles": profiles}


def read_csv(path: Path) -> list[dict[str, str]]:
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class NodeFifo:
    """A minimal RFC 27 scheduler for node granularity, from the RFC: allocs are kept in
    arrival order and granted lowest ranks first when enough ranks are free; frees give the
    ranks of R back. Tests tweak it through `hooks` (topic -> function) and `mode`."""

    def __init__(self, mode: dict[str, Any] | None = None) -> None:
        self.mode = mode or {"mode": "unlimited"}
        self.pending: list[dict[str, Any]] = []
        self.free_ranks: list[int] = []
        self.hooks: dict[str, Callable[..., Any]] = {}
        self.outstanding = 0
        self.max_outstanding = 0

    def __call__(self, batch: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        out = handshake(batch, state, self.mode) or []
        if "R" in state and not self.free_ranks and not state.get("counted"):
            state["counted"] = True
            self.free_ranks = ranks_of(state["R"])
        for m in batch["messages"]:
            hook = self.hooks.get(m["topic"])
            if hook is not None and hook(m, batch, out) is not None:
                continue
            if m["topic"] == "sched.alloc" and m["kind"] == "request":
                self.pending.append(m["payload"])
                self.outstanding += 1
            elif m["topic"] == "sched.free":
                self.free_ranks = sorted(self.free_ranks + ranks_of(m["payload"]["R"]))
            elif m["topic"] == "sched.cancel":
                for p in self.pending:
                    if p["id"] == m["payload"]["id"]:
                        self.pending.remove(p)
                        self.outstanding -= 1
                        out.append(msg("sched.alloc", "response", {"id": p["id"], "type": 3}))
                        break
        self.max_outstanding = max(self.max_outstanding, self.outstanding)
        while self.pending:
            need = self.pending[0]["jobspec"]["resources"][0]["count"]
            if need > len(self.free_ranks):
                break
            p = self.pending.pop(0)
            ranks, self.free_ranks = self.free_ranks[:need], self.free_ranks[need:]
            out.append(msg("sched.alloc", "response", {
                "id": p["id"], "type": 0, "R": R({r: "0" for r in ranks})}))
            self.outstanding -= 1
        return {"now": batch["now"], "messages": out}


def ranks_of(R: dict[str, Any]) -> list[int]:
    ranks = []
    for entry in R["execution"]["R_lite"]:
        for part in entry["rank"].split(","):
            lo, _, hi = part.partition("-")
            ranks += range(int(lo), int(hi or lo) + 1)
    return sorted(ranks)
