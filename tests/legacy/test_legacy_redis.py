"""Job metadata through a real Redis server (Debian's redis-server): the legacy protocol's
versions 2-3 (seed-systems §5.1 group 5) and Batsim 4's `--enable-redis` JSON mode; the
private server of `--redis-server auto` is stopped on every exit path."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from legacy_harness import PLATFORMS, PROJECT, WORKLOADS, free_port, nop, run_legacy

from batsim_py.cli import main
from batsim_py.decision.redis_store import RedisServer
from batsim_py.legacy_client.fcfs import first_fit
from batsim_py.output.compare import compare

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (Debian: apt-get install "
                                "redis-server; .ci/run installs it)")
redis = pytest.importorskip("redis")


@pytest.fixture(scope="module")
def server():
    srv = RedisServer()
    yield srv
    srv.stop()


def inprocess_fcfs(tmp_path: Path, workload: str) -> str:
    prefix = str(tmp_path / "inprocess")
    assert main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(WORKLOADS / workload), "-q",
                 "--scheduler", "fcfs", "-e", prefix]) == 0
    return prefix


def header_time(text: str) -> str:
    return text.split("|")[0].split(":")[1]


class Batsched2017:
    """A client written to batsched-2017's documented behaviour (seed-systems §1.9): reads
    `nb_res` on `A` and `job_<id>` on `S` from Redis, replies `1:<max(msg time, last decision
    date)>` with one `J` event per job (`a-b,c`), `%f` dates, `N` when it has nothing to say;
    FCFS on the lowest consecutive free machines. Records what it checked."""

    def __init__(self, client, prefix: str) -> None:
        self.client, self.prefix = client, prefix
        self.problems: list[str] = []
        self.queue: list[tuple[str, int]] = []
        self.free: list[bool] = []
        self.running: dict[str, list[int]] = {}

    def get(self, key: str) -> str | None:
        value = self.client.get(f"{self.prefix}:{key}")
        return None if value is None else value.decode()

    def __call__(self, text: str) -> str:
        now = float(header_time(text))
        decisions = []
        for part in text.split("|")[1:]:
            date, stamp, *rest = part.split(":", 2)
            if stamp == "A":
                self.free = [True] * int(self.get("nb_res"))
            elif stamp == "S":
                job = self.get(f"job_{rest[0]}")
                if job is None:
                    self.problems.append(f"{rest[0]} not in Redis when S came")
                    continue
                desc = json.loads(job)
                if desc["id"] != rest[0]:
                    self.problems.append(f"job_{rest[0]} has id {desc['id']}")
                self.queue.append((rest[0], desc["res"]))
            elif stamp == "C":
                for m in self.running.pop(rest[0]):
                    self.free[m] = True
            elif stamp not in "ZNpFf":
                raise RuntimeError(f"batsched-2017 throws on {stamp!r}")
        while self.queue:
            job_id, res = self.queue[0]
            machines = first_fit(self.free, res)
            if machines is None:
                break
            for m in machines:
                self.free[m] = False
            self.running[job_id] = machines
            self.queue.pop(0)
            decisions.append(f"{now:f}:J:{job_id}={machines[0]}-{machines[-1]}"
                             if len(machines) > 1 else f"{now:f}:J:{job_id}={machines[0]}")
        return "|".join([f"1:{now:f}"] + (decisions or [f"{now:f}:N"]))


def test_legacy_metadata_in_redis(tmp_path: Path, server: RedisServer) -> None:
    client = redis.Redis(host=server.host, port=server.port)
    prefix = str(tmp_path / "sock3")  # the socket's absolute path (run_legacy's socket)
    batsched = Batsched2017(client, prefix)
    rc, out = run_legacy(tmp_path, "delays_small.json", batsched, version=3,
                         extra=["--enable-redis", "--redis-port", str(server.port)])
    assert rc == 0 and out.error is None and not batsched.problems, batsched.problems
    assert client.get(f"{prefix}:nb_res") == b"4"
    job = json.loads(client.get(f"{prefix}:job_w0!3"))
    workload = json.loads((WORKLOADS / "delays_small.json").read_text())
    assert job == {**workload["jobs"][3], "id": "w0!3"}
    profile = json.loads(client.get(f"{prefix}:profile_w0!{job['profile']}"))
    assert profile == workload["profiles"][job["profile"]]
    assert compare(str(tmp_path / "out"), inprocess_fcfs(tmp_path, "delays_small.json")
                   ).differences == []


def test_redis_server_auto_with_the_shipped_client(tmp_path: Path, caplog) -> None:
    caplog.set_level("INFO", logger="batsim_py.decision.redis_store")
    sock = tmp_path / "bat_socket"
    client = (f"{sys.executable} -m batsim_py.legacy_client.fcfs -s unix:{sock} --version 2")
    prefix = str(tmp_path / "legacy")
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(WORKLOADS / "mixed_small.json"),
               "-q", "--legacy-protocol", "2", "-s", f"unix:{sock}", "-e", prefix,
               "--redis-server", "auto", "--scheduler-command", client])
    assert rc == 0  # (the client had no -w: it read every job from Redis)
    assert compare(prefix, inprocess_fcfs(tmp_path, "mixed_small.json")).differences == []
    pid, port, folder = _started(caplog.text)
    assert not _alive(pid) and not _listening(port) and not os.path.exists(folder)


def json_mode_scheduler(endpoint: str, seen: dict) -> threading.Thread:
    """A Batsim 4 JSON scheduler using Redis as Batsim 4's docs/redis.rst says: FCFS."""
    import zmq

    def run() -> None:
        context = zmq.Context()
        sock = context.socket(zmq.REP)
        sock.bind(endpoint)
        client = None
        free: list[bool] = []
        queue: list[tuple[str, int]] = []
        running: dict[str, list[int]] = {}
        try:
            while True:
                message = json.loads(sock.recv())
                now = message["now"]
                out = []
                ended = False
                for event in message["events"]:
                    kind, data = event["type"], event["data"]
                    if kind == "SIMULATION_BEGINS":
                        cfg = data["config"]
                        seen["config"] = {k: v for k, v in cfg.items() if "redis" in k}
                        client = redis.Redis(host=cfg["redis-hostname"], port=cfg["redis-port"])
                        prefix = cfg["redis-prefix"]
                        seen["nb_res"] = client.get(f"{prefix}:nb_res")
                        free = [True] * data["nb_compute_resources"]
                    elif kind == "JOB_SUBMITTED":
                        seen.setdefault("submitted", []).append(sorted(data))
                        job = json.loads(client.get(f"{prefix}:job_{data['job_id']}"))
                        queue.append((data["job_id"], job["res"]))
                    elif kind == "JOB_COMPLETED":
                        for m in running.pop(data["job_id"]):
                            free[m] = True
                    elif kind == "SIMULATION_ENDS":
                        ended = True
                while queue:
                    machines = first_fit(free, queue[0][1])
                    if machines is None:
                        break
                    job_id = queue.pop(0)[0]
                    for m in machines:
                        free[m] = False
                    running[job_id] = machines
                    alloc = (f"{machines[0]}-{machines[-1]}" if len(machines) > 1
                             else str(machines[0]))
                    out.append({"timestamp": now, "type": "EXECUTE_JOB",
                                "data": {"job_id": job_id, "alloc": alloc}})
                sock.send_string(json.dumps({"now": now, "events": out}))
                if ended:
                    return
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            seen["error"] = exc
        finally:
            sock.close(linger=0)
            context.term()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("auto", [False, True])
def test_batsim4_enable_redis(tmp_path: Path, server: RedisServer, auto: bool) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    seen: dict = {}
    thread = json_mode_scheduler(endpoint, seen)
    prefix = str(tmp_path / "json_redis")
    redis_args = (["--redis-server", "auto"] if auto else
                  ["--enable-redis", "--redis-port", str(server.port), "--redis-prefix", "run7"])
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(WORKLOADS / "delays_small.json"),
               "-q", "-s", endpoint, "-e", prefix, "--scheduler-timeout", "20", *redis_args])
    thread.join(20)
    assert rc == 0 and "error" not in seen, seen.get("error")
    assert seen["config"]["redis-enabled"] is True
    assert seen["config"]["redis-prefix"] == ("default" if auto else "run7")
    assert seen["nb_res"] == b"4"
    assert seen["submitted"] and all(keys == ["job_id"] for keys in seen["submitted"])
    assert compare(prefix, inprocess_fcfs(tmp_path, "delays_small.json")).differences == []


def test_unreachable_redis_and_versions_without_redis(tmp_path: Path, capsys) -> None:
    rc, _ = run_legacy(tmp_path, "delays_small.json", nop, version=2,
                       extra=["--enable-redis", "--redis-port", str(free_port())])
    err = capsys.readouterr().err
    assert rc == 1 and "cannot reach the Redis server at 127.0.0.1:" in err
    assert "--redis-server auto" in err
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(WORKLOADS / "delays_small.json"),
               "--legacy-protocol", "1", "--redis-server", "auto", "-q"])
    assert rc == 1 and "version 1 had no Redis" in capsys.readouterr().err


def _started(log: str) -> tuple[int, int, str]:
    m = re.search(r"started redis-server \(pid (\d+)\) on 127\.0\.0\.1:(\d+), folder (\S+)",
                  log)
    assert m, log
    return int(m.group(1)), int(m.group(2)), m.group(3)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.mark.parametrize("how", ["sigterm", "error"])
def test_the_private_server_never_outlives_batsim_py(tmp_path: Path, how: str) -> None:
    args = [sys.executable, "-m", "batsim_py.cli", "-p", str(PLATFORMS / "small4.xml"),
            "-w", str(WORKLOADS / "delays_small.json"), "-e", str(tmp_path / "out"),
            "--legacy-protocol", "3", "-s", f"unix:{tmp_path}/sock", "--redis-server", "auto",
            "--scheduler-connect-timeout", "60" if how == "sigterm" else "1"]
    process = subprocess.Popen(args, cwd=PROJECT, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if "started redis-server" in line or not line:
            break
    pid, port, folder = _started("".join(lines))
    assert _alive(pid)
    if how == "sigterm":
        process.send_signal(signal.SIGTERM)
    rest = process.communicate(timeout=30)[1]
    assert process.returncode == (143 if how == "sigterm" else 1), rest
    assert not _alive(pid) and not _listening(port) and not os.path.exists(folder)


_IMPORT_PROBE = """
import signal, sys
seen = []
class Probe:  # records the signal mask while `redis` is being imported
    def find_spec(self, name, path=None, target=None):
        if name == "redis":
            seen.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        return None
sys.meta_path.insert(0, Probe())
from batsim_py.decision.redis_store import import_redis
import_redis()
after = signal.pthread_sigmask(signal.SIG_BLOCK, [])
print(len(seen), *(int(s) in seen[0] for s in (signal.SIGINT, signal.SIGTERM)),
      *(int(s) in after for s in (signal.SIGINT, signal.SIGTERM)))
"""


def test_the_redis_import_holds_the_stop_signals_back() -> None:
    """The redis package's long import (asyncio, ssl, cryptography...) runs with SIGINT and
    SIGTERM blocked: a SIGTERM that landed inside it made batsim-py exit by SIGINT (-2) or with
    an internal error instead of 143 (test_the_private_server_never_outlives_batsim_py, about
    one run in 25 under load); the mask is restored after it."""
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], cwd=PROJECT, timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True", "True", "False", "False"], done.stdout


def test_batsim4_registration_reads_jobs_and_profiles_from_redis(tmp_path: Path,
                                                                 server: RedisServer) -> None:
    """REGISTER_PROFILE and REGISTER_JOB without their objects: Batsim reads them from Redis."""
    import zmq

    endpoint = f"tcp://127.0.0.1:{free_port()}"
    seen: dict = {}

    def run() -> None:
        context = zmq.Context()
        sock = context.socket(zmq.REP)
        sock.bind(endpoint)
        client = redis.Redis(host=server.host, port=server.port)
        try:
            while True:
                message = json.loads(sock.recv())
                now = message["now"]
                types = [e["type"] for e in message["events"]]
                seen.setdefault("types", []).append(types)
                out = []
                if "SIMULATION_BEGINS" in types:
                    client.set("dyn7:profile_dyn!p", json.dumps({"type": "delay", "delay": 7}))
                    client.set("dyn7:job_dyn!1", json.dumps(
                        {"id": "dyn!1", "subtime": 0, "res": 2, "profile": "p"}))
                    out = [{"timestamp": now, "type": "REGISTER_PROFILE",
                            "data": {"workload_name": "dyn", "profile_name": "p"}},
                           {"timestamp": now, "type": "REGISTER_JOB",
                            "data": {"job_id": "dyn!1"}},
                           {"timestamp": now, "type": "EXECUTE_JOB",
                            "data": {"job_id": "dyn!1", "alloc": "0-1"}},
                           {"timestamp": now, "type": "NOTIFY",
                            "data": {"type": "registration_finished"}}]
                sock.send_string(json.dumps({"now": now, "events": out}))
                if "SIMULATION_ENDS" in types:
                    return
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            seen["error"] = exc
        finally:
            sock.close(linger=0)
            context.term()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"nb_res": 4, "jobs": [], "profiles": {}}))
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(empty), "-q", "-s", endpoint,
               "-e", str(tmp_path / "dyn"), "--enable-dynamic-jobs", "--enable-redis",
               "--redis-port", str(server.port), "--redis-prefix", "dyn7",
               "--scheduler-timeout", "20"])
    thread.join(20)
    assert rc == 0 and "error" not in seen, seen.get("error")
    import csv

    with open(tmp_path / "dyn_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    row = rows[0]
    assert row["workload_name"] == "dyn" and row["job_id"] == "1"
    assert float(row["execution_time"]) == pytest.approx(7, abs=1e-3)
    assert row["requested_number_of_resources"] == "2"
