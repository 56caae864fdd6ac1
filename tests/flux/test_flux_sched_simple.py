"""flux-core's t2300-sched-simple reference behaviour with the shipped sched-simple-like
client (§5.4 item 2), in-process and as a process; DENY's note in the outputs."""

from __future__ import annotations

import json
import sys

import pytest
from raw_client import delays, platform, read_csv

from batsim_py.cli import main

UNSATISFIABLE = {"version": 1, "resources": [
    {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 3}]}],
    "tasks": [{"command": ["x"], "slot": "task", "count": {"per_slot": 1}}],
    "attributes": {"system": {"duration": 0}}}


def _t2300(tmp_path, *how):
    (tmp_path / "p.xml").write_text(platform(2, cores=2))
    work = delays(*[(0, 1, 100)] * 5, (1, 1, 100), **{"6": {"jobspec": UNSATISFIABLE}})
    (tmp_path / "w.json").write_text(json.dumps(work))
    (tmp_path / "e.jsonl").write_text(
        json.dumps({"timestamp": 10, "type": "flux_cancel", "job_id": "w0!3"}) + "\n")
    code = main(["-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"), "-e",
                 str(tmp_path / "out"), "-q", "--timing", "ideal", "--protocol", "flux",
                 "--flux-granularity", "core", "--events", str(tmp_path / "e.jsonl"), *how])
    assert code == 0
    flux = {r["job_id"]: r for r in read_csv(tmp_path / "out_flux_jobs.csv")}
    jobs = {r["job_id"]: r for r in read_csv(tmp_path / "out_jobs.csv")}
    return flux, jobs


def _check(flux, jobs):
    summaries = [json.loads(flux[f"w0!{i}"]["annotations"])["sched"]["resource_summary"]
                 for i in range(1, 6)]
    assert summaries == ["rank0/core0", "rank1/core0", "rank0/core1", "rank1/core1",
                         "rank0/core1"]
    assert jobs["5"]["starting_time"] == "10.000000"  # pending until job 3 was cancelled
    assert jobs["3"]["final_state"] == "COMPLETED_KILLED"
    assert flux["w0!3"]["result"] == "CANCELED"
    assert jobs["6"]["final_state"] == "REJECTED"
    assert flux["w0!6"]["exception_type"] == "alloc"
    assert "unsatisfiable request" in flux["w0!6"]["exception_note"]
    assert jobs["1"]["allocated_resources"] == "0" and jobs["2"]["allocated_resources"] == "1"


@pytest.mark.parametrize("policy", ["fifo", "easy"])
def test_t2300_in_process(tmp_path, policy):
    """The EASY client takes the same decisions here: job 6 has no duration, so it never
    backfills, and is denied once it heads the queue."""
    _check(*_t2300(tmp_path, "--flux-scheduler", policy))


@pytest.mark.parametrize("policy", ["fifo", "easy"])
def test_t2300_shipped_client_as_a_process(tmp_path, policy):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"tcp://127.0.0.1:{port}"
    command = f"{sys.executable} -m batsim_py.flux_client {policy} -s {endpoint}"
    _check(*_t2300(tmp_path, "-s", endpoint, "--scheduler-command", command))


def test_t2300_through_the_python_api(tmp_path):
    import batsim_py
    from batsim_py.decision.flux_peer import flux_scheduler

    root = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "flux"
    prefix = str(tmp_path / "api")
    sim = batsim_py.Simulator(
        str(root / "two_by_two.xml"), [str(root / "t2300.json")],
        scheduler=flux_scheduler("fifo", granularity="core", export_prefix=prefix),
        events=[str(root / "t2300_events.jsonl")], allow_compute_sharing=True,
        forward_unknown_events=True,
        timing="ideal", export=prefix)
    results = sim.run()
    flux = {r["job_id"]: r for r in read_csv(tmp_path / "api_flux_jobs.csv")}
    jobs = {r["job_id"]: r for r in read_csv(tmp_path / "api_jobs.csv")}
    _check(flux, jobs)
    assert len(results.jobs) == 6


def test_client_process_errors_in_one_line():
    import subprocess

    done = subprocess.run([sys.executable, "-m", "batsim_py.flux_client", "nope.py:X", "-s",
                           "ipc://unused.sock"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("flux_client: error: ") and done.stderr.count("\n") == 1
