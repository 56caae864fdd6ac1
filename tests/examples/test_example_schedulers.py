"""The three example schedulers of docs/schedulers.md (in-process, Python over ZeroMQ, Node.js
over ZeroMQ) run to the end, honour the shipped external events, and take the same decisions.

The policy is strict FCFS on the lowest free, available machines; on small4 with
delays_small and events_small (machines 2-3 unavailable from t=10 to t=50), what must hold is
checked from the jobs' rows, not from another run of the same code: no job on 2-3 during the
outage, start order = submission order, never more than 4 machines in use.
"""

from __future__ import annotations

import csv
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py import intervalset
from batsim_py.output.compare import compare

PROJECT = Path(__file__).resolve().parents[2]
PLATFORM = str(PROJECT / "platforms" / "small4.xml")
WORKLOAD = str(PROJECT / "workloads" / "delays_small.json")
EVENTS = str(PROJECT / "workloads" / "events_small.jsonl")
NODE_DIR = PROJECT / "examples" / "node-scheduler"
TIMEOUT = 60


def _free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(PROJECT) + (os.pathsep + env["PYTHONPATH"]
                                        if env.get("PYTHONPATH") else "")
    return env


def _run_external(command: list[str], prefix: Path) -> None:
    """Start the scheduler, run batsim-py against it, both must end by themselves."""
    endpoint = _free_endpoint()
    scheduler = subprocess.Popen(command + [endpoint], env=_env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        sim = subprocess.run(
            [sys.executable, "-m", "batsim_py.cli", "-p", PLATFORM, "-w", WORKLOAD,
             "--events", EVENTS, "-s", endpoint, "--scheduler-timeout", "30",
             "-e", str(prefix), "-q"],
            env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
        assert sim.returncode == 0, sim.stderr
        assert scheduler.wait(timeout=10) == 0, scheduler.stdout.read() if scheduler.stdout else ""
    finally:
        if scheduler.poll() is None:
            scheduler.kill()
            scheduler.wait()


def _check_policy(prefix: Path) -> None:
    with open(f"{prefix}_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    submitted = json.loads(Path(WORKLOAD).read_text())["jobs"]
    assert len(rows) == len(submitted)
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    # Start order follows submission order (ties in subtime broken by id, as submitted).
    by_id = {r["job_id"]: r for r in rows}
    starts = [float(by_id[str(j["id"])]["starting_time"]) for j in submitted]
    assert starts == sorted(starts)
    for r in rows:
        machines = set(intervalset.parse(r["allocated_resources"]))
        start, end = float(r["starting_time"]), float(r["finish_time"])
        assert len(machines) == int(r["requested_number_of_resources"])
        if machines & {2, 3}:  # the outage of events_small.jsonl: [10, 50]
            assert end <= 10.001 or start >= 50, (r["job_id"], start, end, machines)
    # At no time two jobs share a machine.
    spans = [(float(r["starting_time"]), float(r["finish_time"]),
              set(intervalset.parse(r["allocated_resources"]))) for r in rows]
    for i, (s1, e1, m1) in enumerate(spans):
        for s2, e2, m2 in spans[i + 1:]:
            if s1 < e2 and s2 < e1:
                assert not m1 & m2


@pytest.fixture(scope="module")
def inprocess_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("inproc") / "out"
    p = subprocess.run(
        [sys.executable, str(PROJECT / "examples" / "inprocess_fcfs.py"), PLATFORM, WORKLOAD,
         str(prefix), EVENTS], env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return prefix


def test_inprocess_example_follows_its_policy(inprocess_run: Path) -> None:
    _check_policy(inprocess_run)


def test_python_zmq_example_matches_the_inprocess_one(inprocess_run: Path, tmp_path: Path) -> None:
    _run_external([sys.executable, str(PROJECT / "examples" / "zmq_fcfs.py")], tmp_path / "py")
    _check_policy(tmp_path / "py")
    result = compare(str(inprocess_run), str(tmp_path / "py"))
    assert result.ok, result.table()


def node_missing_reason() -> str | None:
    """Why the Node.js example cannot run here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed (Debian: apt-get install nodejs npm)"
    probe = subprocess.run(["node", "-e", "require('zeromq')"], cwd=NODE_DIR,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return ("the zeromq npm package is not installed: run "
                "`npm install --prefix examples/node-scheduler` (.ci/run does)")
    return None


def test_node_example_matches_the_inprocess_one(inprocess_run: Path, tmp_path: Path) -> None:
    reason = node_missing_reason()
    if reason:
        pytest.skip(reason)
    _run_external(["node", str(NODE_DIR / "scheduler.js")], tmp_path / "node")
    _check_policy(tmp_path / "node")
    result = compare(str(inprocess_run), str(tmp_path / "node"))
    assert result.ok, result.table()
