"""`send` / `recv` profiles (Batsim 4.2.1's SCHEDULER_SEND / SCHEDULER_RECV): times worked out
by hand with --timing ideal, and an unchanged pybatsim scheduler (schedSendRecv) over ZeroMQ."""

from __future__ import annotations

import csv
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

PLATFORM = """<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="node0" speed="1Gf"/>
  <link id="l" bandwidth="1GBps" latency="1ms"/>
  <route src="master_host" dst="node0"><link_ctn id="l"/></route>
</zone></platform>
"""

PROFILES = {
    "talk": {"type": "composed", "seq": ["send", "recv"]},
    "send": {"type": "send", "msg": {"type": "accept"}, "sleeptime": 2},
    "recv": {"type": "recv", "regex": "go.*", "success": "d10", "failure": "d100"},
    "recv_or_quit": {"type": "recv", "success": "d10", "timeout": "d1"},
    "d1": {"type": "delay", "delay": 1},
    "d10": {"type": "delay", "delay": 10},
    "d100": {"type": "delay", "delay": 100},
}


class Talker(DecisionProcess):
    """Starts every job; answers each FROM_JOB_MSG with `answer` (or nothing if None),
    `later` seconds after it (with a CALL_ME_LATER)."""

    def __init__(self, answer: str | None, later: float = 0.0) -> None:
        self.answer, self.later = answer, later
        self.pending: list[str] = []
        self.received: list[tuple[float, str, dict]] = []

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        out: list[d.Decision] = []
        for e in events:
            if isinstance(e, ev.JobSubmitted):
                out.append(d.ExecuteJob(now, e.job_id, (0,)))
            elif isinstance(e, ev.FromJobMsg):
                self.received.append((e.timestamp, e.job_id, dict(e.msg)))
                if self.answer is not None:
                    if self.later:
                        self.pending.append(e.job_id)
                        out.append(d.CallMeLater(now, now + self.later))
                    else:
                        out.append(d.ToJobMsg(now, e.job_id, self.answer))
            elif isinstance(e, ev.RequestedCall):
                out += [d.ToJobMsg(now, j, self.answer) for j in self.pending]
                self.pending.clear()
        return d.Reply(now, tuple(out))


def run(tmp_path: Path, profile: str, peer: DecisionProcess, walltime: float = -1,
        timing: str = "ideal") -> dict:
    (tmp_path / "p.xml").write_text(PLATFORM)
    job = {"id": 1, "subtime": 0, "res": 1, "profile": profile}
    if walltime > 0:
        job["walltime"] = walltime
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 1, "jobs": [job],
                                                 "profiles": PROFILES}))
    run_simulation(RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                           Options(export_prefix=str(tmp_path / "out"), timing=timing)), peer)
    with open(tmp_path / "out_jobs.csv") as f:
        return next(csv.DictReader(f))


def test_send_then_matching_recv_runs_success(tmp_path: Path) -> None:
    peer = Talker("go!")
    row = run(tmp_path, "talk", peer)
    # send at 0 (FROM_JOB_MSG at 0), sleeps 2; recv reads "go!" at 2, runs d10: ends at 12.
    assert peer.received == [(0.0, "w0!1", {"type": "accept"})]
    assert (row["final_state"], float(row["finish_time"])) == ("COMPLETED_SUCCESSFULLY", 12.0)


def test_recv_of_a_non_matching_message_runs_failure(tmp_path: Path) -> None:
    row = run(tmp_path, "talk", Talker("no"))
    assert float(row["finish_time"]) == 102.0


def test_recv_polls_until_the_message_comes(tmp_path: Path) -> None:
    # The answer comes at 7; the recv looks every 5 ms from 2 on: first look at or after 7.
    row = run(tmp_path, "talk", Talker("go", later=7.0))
    assert float(row["finish_time"]) == pytest.approx(17.0, abs=0.0051)
    assert float(row["finish_time"]) >= 17.0


def test_recv_without_message_polls_until_walltime(tmp_path: Path) -> None:
    row = run(tmp_path, "talk", Talker(None), walltime=5)
    assert (row["final_state"], float(row["finish_time"])) == ("COMPLETED_WALLTIME_REACHED",
                                                               5.0)


def test_recv_timeout_profile_runs_at_once(tmp_path: Path) -> None:
    """`timeout` names a profile run when no message is there yet: no waiting at all."""
    row = run(tmp_path, "recv_or_quit", Talker("go"))
    assert float(row["finish_time"]) == 1.0


def test_send_with_batsim_timing_goes_through_the_server(tmp_path: Path) -> None:
    """The message is a 1-byte internal message from the job's host to the master: it reaches
    the scheduler after the link's 1 ms latency (+ 1 ns for the byte), stamped 0.001000."""
    peer = Talker("go!")
    run(tmp_path, "talk", peer, timing="batsim")
    (stamp, job, msg), = peer.received
    assert job == "w0!1" and stamp == 0.001


@pytest.mark.skipif(shutil.which("pybatsim") is None, reason="pybatsim 3.2.1 is not installed")
def test_pybatsim_schedsendrecv(tmp_path: Path) -> None:
    """pybatsim's schedSendRecv answers 'accepted' to {"type": "accept"} messages, 'denied'
    otherwise: the recv's regex picks the branch."""
    profiles = dict(PROFILES)
    profiles["recv"] = {"type": "recv", "regex": "accepted", "success": "d10",
                        "failure": "d100"}
    profiles["talk_no"] = {"type": "composed", "seq": ["send_no", "recv"]}
    profiles["send_no"] = {"type": "send", "msg": {"type": "other"}, "sleeptime": 2}
    (tmp_path / "p.xml").write_text(PLATFORM.replace(
        '<host id="node0" speed="1Gf"/>', '<host id="node0" speed="1Gf"/>'
        '<host id="node1" speed="1Gf"/>').replace(
        '</zone>', '<route src="master_host" dst="node1"><link_ctn id="l"/></route></zone>'))
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 2, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "profile": "talk"},  # (batsim.sched: start > 0)
        {"id": 2, "subtime": 1, "res": 1, "profile": "talk_no"}], "profiles": profiles}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(tmp_path / "pybatsim.log", "w") as log:
        proc = subprocess.Popen([shutil.which("pybatsim"), "schedSendRecv", "-s",
                                 f"tcp://127.0.0.1:{port}", "-t", "0", "-v", "warning"],
                                stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            time.sleep(0.3)
            res = subprocess.run(
                [sys.executable, "-m", "batsim_py.cli", "-p", str(tmp_path / "p.xml"),
                 "-w", str(tmp_path / "w.json"), "-s", f"tcp://127.0.0.1:{port}", "-q",
                 "--scheduler-timeout", "20", "-e", str(tmp_path / "out")],
                capture_output=True, text=True, timeout=120)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert res.returncode == 0, res.stderr
    assert proc.returncode == 0, (tmp_path / "pybatsim.log").read_text()[-2000:]
    with open(tmp_path / "out_jobs.csv") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f)}
    runtime = {j: float(r["finish_time"]) - float(r["starting_time"]) for j, r in rows.items()}
    # A send blocks until its message is through (1 ms latency + 1 ns): job 1 sleeps from
    # 1.001; job 2's message waits for job 1's in the server's one-at-a-time mailbox.
    assert runtime["1"] == pytest.approx(12.001, abs=1e-5)
    assert runtime["2"] == pytest.approx(102.002, abs=1e-5)
