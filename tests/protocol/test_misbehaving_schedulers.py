"""Schedulers that misbehave over a real ZeroMQ socket on 127.0.0.1: a clear error, a non-zero
exit, outputs written; or, for a flood of decisions, a correct run."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_scheduler.py")
ARGS = ["-p", str(PROJECT / "platforms" / "small4.xml"),
        "-w", str(PROJECT / "workloads" / "delays_small.json")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(mode: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, mode])
    try:
        return subprocess.run(
            [sys.executable, "-m", "batsim_py.cli", *ARGS, "-s", endpoint,
             "-e", str(tmp_path / "out"), "-q", *extra],
            capture_output=True, text=True, timeout=60,
        )
    finally:
        sched.kill()
        sched.wait()


def assert_clean_failure(result: subprocess.CompletedProcess, tmp_path: Path, pattern: str):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and pattern in errors[0], result.stderr
    assert (tmp_path / "out_jobs.csv").read_text().startswith("job_id,")
    assert (tmp_path / "out_schedule.csv").exists()


def test_garbage_reply(tmp_path: Path) -> None:
    result = run("garbage", tmp_path)
    assert_clean_failure(result, tmp_path, "scheduler reply")


def test_scheduler_dies(tmp_path: Path) -> None:
    result = run("die", tmp_path, "--scheduler-timeout", "2")
    assert_clean_failure(result, tmp_path, "did not answer within 2 s")


def test_silent_scheduler(tmp_path: Path) -> None:
    result = run("silent", tmp_path, "--scheduler-timeout", "1")
    assert_clean_failure(result, tmp_path, "did not answer within 1 s")


def test_flood_of_decisions_is_a_correct_run(tmp_path: Path) -> None:
    result = run("flood", tmp_path)
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()[1:]
    assert len(rows) == 20 and all(",REJECTED," in r for r in rows)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_stop_cleanly_with_outputs(sig: int, tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    marker = tmp_path / "waiting"  # the scheduler got a request: the simulation runs
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent", str(marker)])
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "batsim_py.cli", *ARGS, "-s", endpoint,
             "-e", str(tmp_path / "out"), "-q"],
            stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60  # (a loaded machine can take seconds to start)
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the simulation never reached the scheduler"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        sched.kill()
        sched.wait()
    assert proc.returncode != 0
    assert "Traceback" not in err
    assert "interrupted" in err
    assert (tmp_path / "out_jobs.csv").exists()
