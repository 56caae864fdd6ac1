"""The scheduler's side of the legacy protocol: connection, messages, job metadata.

Self-contained on purpose (it shares no code with batsim-py's server side): a scheduler that
speaks only what the seed documents is the fairest test of the server. It sends what
pybatsim 2016 sent: `0:<received time>|<date>:<stamp>[:<content>]|...` with the decisions
dated at the time of the message they answer, or `0:T|T:N` when it has nothing to say.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

SIZE = struct.Struct("=I")  # u32, native byte order


@dataclass
class Job:
    id: str  # as the protocol names it: "3" (versions 0-1) or "w0!3" (versions 2-3)
    res: int
    subtime: float = 0.0
    walltime: float = -1.0
    profile: str = ""


def machines_text(ids: Iterable[int], ordered: bool = False) -> str:
    """`0-3,7`; `ordered`: keep the given order (the executors' placement), runs only when
    ascending."""
    ids = list(ids) if ordered else sorted(set(ids))
    runs: list[list[int]] = []
    for i in ids:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def parse_machines(text: str) -> list[int]:
    ids: list[int] = []
    for token in text.split(","):
        lo, _, hi = token.partition("-")
        ids.extend(range(int(lo), int(hi or lo) + 1))
    return ids


class LegacyScheduler:
    """Override the hooks; call the actions. `self.now` is the current message's time,
    `self.nb_res` the number of compute machines, `self.jobs` every job seen by id."""

    def __init__(self) -> None:
        self.now = 0.0
        self.nb_res = 0
        self.jobs: dict[str, Job] = {}
        self._out: list[tuple[float, str, str | None]] = []

    # ---------------------------------------------------------------- hooks
    def on_simulation_begins(self) -> None:
        """Before the first message is handled (`A` in version 3)."""

    def on_job_submission(self, job: Job) -> None:
        """`S`"""

    def on_job_completion(self, job: Job) -> None:
        """`C` (finished, whatever the reason)"""

    def on_nop(self) -> None:
        """`N`: a `wake_me_up_at` timer fired."""

    def on_machine_pstate_changed(self, machines: list[int], pstate: int) -> None:
        """`p`"""

    def on_report_energy_consumed(self, joules: float) -> None:
        """`e`"""

    def on_machines_failed(self, machines: list[int]) -> None:
        """`F` (only if batsim-py runs with --legacy-failure-stamps)"""

    def on_machines_repaired(self, machines: list[int]) -> None:
        """`f`"""

    def on_simulation_ends(self) -> None:
        """`Z` (version 3), or the connection closed."""

    def on_message_handled(self) -> None:
        """After every event of a message was handled: schedule here if you batch."""

    # ---------------------------------------------------------------- actions
    def start_jobs(self, allocations: Sequence[tuple[Job, Sequence[int]]]) -> None:
        """One `J` event: each job on its machines (the order given places the executors)."""
        content = ";".join(f"{job.id}={machines_text(m, ordered=True)}"
                           for job, m in allocations)
        self._out.append((self.now, "J", content))

    def reject_job(self, job: Job) -> None:
        self._out.append((self.now, "R", job.id))

    def wake_me_up_at(self, at: float) -> None:
        self._out.append((self.now, "n", "%f" % at))

    def change_pstates(self, machines: Iterable[int], pstate: int) -> None:
        self._out.append((self.now, "P", f"{machines_text(machines)}={pstate}"))

    def request_consumed_energy(self) -> None:
        self._out.append((self.now, "E", None))


class Connection:
    """One side of the conversation: `receive()` a text, `send(text)`."""

    def __init__(self, endpoint: str, version: int, timeout: float = 30.0) -> None:
        self.zmq: Any = None
        self.sock: socket.socket | None = None
        if endpoint.startswith(("zmq:", "tcp://", "ipc://")):
            import zmq

            self.context = zmq.Context()
            self.zmq = self.context.socket(zmq.REP)
            self.zmq.setsockopt(zmq.LINGER, 0)
            self.zmq.bind(endpoint[4:] if endpoint.startswith("zmq:") else endpoint)
            return
        path = endpoint[5:] if endpoint.startswith("unix:") else endpoint
        if version == 0:  # 2015: the scheduler is the server
            if os.path.exists(path):
                os.unlink(path)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)
            server.settimeout(timeout)
            self.sock, _ = server.accept()
            server.close()
            os.unlink(path)
            return
        deadline = time.monotonic() + timeout
        while True:  # batsim-py may not listen yet
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                self.sock = sock
                return
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def receive(self) -> str | None:
        """The next message, None once the simulator closed the connection."""
        if self.zmq is not None:
            return self.zmq.recv().decode()
        header = self._read(4)
        if header is None:
            return None
        body = self._read(SIZE.unpack(header)[0])
        return None if body is None else body.decode()

    def _read(self, n: int) -> bytes | None:
        assert self.sock is not None
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def send(self, text: str) -> None:
        if self.zmq is not None:
            self.zmq.send(text.encode())
            return
        assert self.sock is not None
        body = text.encode()
        self.sock.sendall(SIZE.pack(len(body)) + body)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        if self.zmq is not None:
            self.zmq.close(linger=0)
            self.context.term()


class JobSource:
    """Job metadata: the workload file (what v0/v1 schedulers read) or Redis (v2/v3)."""

    def __init__(self, version: int, workload: str | None, redis_port: int | None,
                 redis_host: str, prefix: str) -> None:
        self.version = version
        self.redis: Any = None
        self.prefix = prefix
        self.jobs: dict[str, dict[str, Any]] = {}
        self.nb_res = 0
        self.nb_res_override: int | None = None
        if redis_port is not None:
            import redis

            self.redis = redis.Redis(host=redis_host, port=redis_port)
        elif workload is not None:
            with open(workload, encoding="utf-8") as f:
                data = json.load(f)
            self.nb_res = int(data.get("nb_res", 0))
            for job in data["jobs"]:
                name = str(job["id"])
                self.jobs[name if version <= 1 else f"w0!{name}"] = job
        else:
            raise SystemExit("give the workload file (-w) or the Redis port (--redis-port)")

    def begin(self) -> int:
        if self.nb_res_override:
            return self.nb_res_override
        if self.redis is not None:
            self.nb_res = int(self.redis.get(f"{self.prefix}:nb_res"))
        return self.nb_res

    def job(self, job_id: str) -> Job:
        if self.redis is not None:
            raw = self.redis.get(f"{self.prefix}:job_{job_id}")
            if raw is None:
                raise RuntimeError(f"job {job_id} is not in Redis ({self.prefix}:job_{job_id})")
            desc = json.loads(raw)
        else:
            desc = self.jobs[job_id]
        return Job(job_id, int(desc["res"]), float(desc.get("subtime", 0)),
                   float(desc.get("walltime", -1)), str(desc.get("profile", "")))


def handle(scheduler: LegacyScheduler, source: JobSource, text: str) -> tuple[str, bool]:
    """The reply to one message, and whether it held `Z`."""
    parts = text.split("|")
    scheduler.now = float(parts[0].split(":")[1])
    scheduler._out = []
    ended = False
    for event in parts[1:]:
        date, stamp, *rest = event.split(":", 2)
        content = rest[0] if rest else None
        if stamp == "A":
            scheduler.nb_res = source.begin()
            scheduler.on_simulation_begins()
        elif stamp == "S":
            assert content is not None
            job = source.job(content)
            scheduler.jobs[job.id] = job
            scheduler.on_job_submission(job)
        elif stamp == "C":
            assert content is not None
            scheduler.on_job_completion(scheduler.jobs[content])
        elif stamp == "N":
            scheduler.on_nop()
        elif stamp == "p":
            assert content is not None
            machines, _, pstate = content.partition("=")
            scheduler.on_machine_pstate_changed(parse_machines(machines), int(pstate))
        elif stamp == "e":
            assert content is not None
            scheduler.on_report_energy_consumed(float(content))
        elif stamp == "F":
            assert content is not None
            scheduler.on_machines_failed(parse_machines(content))
        elif stamp == "f":
            assert content is not None
            scheduler.on_machines_repaired(parse_machines(content))
        elif stamp == "Z":
            ended = True
        else:
            raise RuntimeError(f"unknown stamp {stamp!r} in {text!r}")
    scheduler.on_message_handled()
    out = scheduler._out or [(scheduler.now, "N", None)]
    out.sort(key=lambda e: e[0])  # dated events in chronological order
    reply = "|".join([f"0:{scheduler.now:f}"] + [
        f"{date:f}:{stamp}" + ("" if content is None else f":{content}")
        for date, stamp, content in out])
    return reply, ended


def run_scheduler(scheduler: LegacyScheduler, argv: Sequence[str] | None = None) -> int:
    """Parse the command line (`-s`, `--version`, `-w` or `--redis-port`), then answer every
    message until the simulator closes the connection."""
    parser = argparse.ArgumentParser(description=type(scheduler).__doc__)
    parser.add_argument("-s", "--socket", default="unix:/tmp/bat_socket",
                        help="unix:PATH (default unix:/tmp/bat_socket) or zmq:ENDPOINT (v3)")
    parser.add_argument("--version", type=int, default=1, choices=(0, 1, 2, 3),
                        help="protocol version (default 1)")
    parser.add_argument("-w", "--workload", help="the workload file (job metadata without "
                        "Redis; its jobs are w0!ID in versions 2-3)")
    parser.add_argument("--nb-res", type=int, help="compute machines (default: the "
                        "workload's nb_res, or Redis' nb_res)")
    env = os.environ  # set by batsim-py for a scheduler it starts (--scheduler-command)
    port = env.get("BATSIM_REDIS_PORT")
    parser.add_argument("--redis-port", type=int, default=int(port) if port else None,
                        help="read job metadata from Redis (default: $BATSIM_REDIS_PORT)")
    parser.add_argument("--redis-host", default=env.get("BATSIM_REDIS_HOST", "127.0.0.1"))
    parser.add_argument("--redis-prefix", default=env.get("BATSIM_REDIS_PREFIX"),
                        help="key prefix (default: $BATSIM_REDIS_PREFIX, or the socket's "
                        "absolute path)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for the simulator to listen/connect")
    args = parser.parse_args(argv)
    path = args.socket[5:] if args.socket.startswith("unix:") else args.socket
    prefix = args.redis_prefix or os.path.abspath(path)
    source = JobSource(args.version, args.workload, args.redis_port, args.redis_host, prefix)
    conn = Connection(args.socket, args.version, args.timeout)
    begun = False
    try:
        while True:
            text = conn.receive()
            if text is None:
                break
            if not begun:  # Redis is filled before the first message (`A` in version 3)
                begun = True
                source.nb_res_override = args.nb_res
                if args.version < 3:
                    scheduler.nb_res = source.begin()
                    scheduler.on_simulation_begins()
            reply, ended = handle(scheduler, source, text)
            conn.send(reply)
            if ended:
                if conn.zmq is not None:
                    break  # ZeroMQ has no EOF: Z is the end
        scheduler.on_simulation_ends()
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit("run a scheduler: python -m batsim_py.legacy_client.fcfs --help")
