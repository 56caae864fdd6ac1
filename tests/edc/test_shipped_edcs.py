"""The shipped Python EDCs: in-process and as ZeroMQ processes give the same outputs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from edc.helpers import PROJECT


def _cli(*args, check=True):
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _same_outputs(a, b):
    done = _cli("compare", str(a), str(b), check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_in_process_and_process_give_identical_outputs(tmp_path, name):
    module = f"batsim_py.edcs.{name}"
    common = ["-p", "platforms/small4.xml", "-w", "workloads/mixed_small.json", "-q"]
    _cli(*common, "-l", module, "{}", "-e", str(tmp_path / "inproc"))
    endpoint = f"ipc://{tmp_path}/edc.sock"
    server = subprocess.Popen([sys.executable, "-m", "batsim_py.edcs.serve", module, endpoint],
                              cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT)})
    try:
        _cli(*common, "--edc-socket-str", endpoint, "{}", "-e", str(tmp_path / "proc"))
        assert server.wait(10) == 0
    finally:
        if server.poll() is None:
            server.kill()
    _same_outputs(tmp_path / "inproc", tmp_path / "proc")
    jobs = (tmp_path / "inproc_jobs.csv").read_text().splitlines()
    assert len(jobs) > 5


def test_easy_backfills(tmp_path):
    """EASY starts a later job before the blocked head when it fits before the head's
    reservation: some job starts before a job submitted earlier (FCFS never does that)."""
    import pandas as pd

    for name in ("fcfs", "easy"):
        _cli("-p", "platforms/small4.xml", "-w", "workloads/delays_small.json", "-q", "-l",
             f"batsim_py.edcs.{name}", "{}", "-e", str(tmp_path / name))
    def overtakes(prefix):
        jobs = pd.read_csv(f"{prefix}_jobs.csv").sort_values("submission_time")
        starts = jobs["starting_time"].tolist()
        return sum(1 for i in range(len(starts)) for j in range(i) if starts[i] < starts[j])
    assert overtakes(tmp_path / "fcfs") == 0
    assert overtakes(tmp_path / "easy") > 0
