"""The progress line: drawn in a real terminal (tmux) and erased at the end, absent when stderr
is a pipe, and its content with a fake simulation."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from batsim_py.progress import ProgressDisplay

PROJECT = Path(__file__).resolve().parents[2]


def test_line_shows_jobs_rate_and_simulated_time() -> None:
    sim = SimpleNamespace(nb_completed=0, engine=SimpleNamespace(now=0.0),
                          workloads=[SimpleNamespace(jobs=[0] * 10)],
                          options=SimpleNamespace(dynamic_jobs=False))
    stream = io.StringIO()
    with ProgressDisplay(sim, stream, delay=0.0, interval=0.01):
        sim.nb_completed, sim.engine.now = 3, 1234.0
        time.sleep(0.3)
    text = stream.getvalue()
    assert "simulating" in text and "3/10" in text and "job/s" in text
    assert "simulated t=1,234 s" in text
    assert text.endswith("\r") or text.rstrip(" ").endswith("\r")  # erased: ends on a blank line


def test_short_run_shows_nothing() -> None:
    sim = SimpleNamespace(nb_completed=0, engine=SimpleNamespace(now=0.0), workloads=[],
                          options=SimpleNamespace(dynamic_jobs=False))
    stream = io.StringIO()
    with ProgressDisplay(sim, stream, delay=5.0):
        pass
    assert stream.getvalue() == ""


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Long enough to outlast the line's one-second delay with the compiled kernel (20,000 jobs
    # took 1.1 s there: the line came or not by a few milliseconds).
    path = tmp_path_factory.mktemp("progress") / "w100k.json"
    subprocess.run([sys.executable, "-m", "batsim_py.cli", "generate", str(path), "-n", "100000",
                    "-r", "128", "--seed", "1"], check=True, cwd=PROJECT, timeout=120,
                   stdout=subprocess.DEVNULL)
    return path


def _command(workload: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "batsim_py.cli", "-p", str(PROJECT / "platforms" /
            "cluster128.xml"), "-w", str(workload), "--scheduler", "easy", "-e", str(out),
            *extra]


@pytest.mark.slow
def test_absent_when_piped(workload: Path, tmp_path: Path) -> None:
    done = subprocess.run(_command(workload, tmp_path / "out"), cwd=PROJECT, timeout=300,
                          capture_output=True, text=True)
    assert done.returncode == 0
    assert "simulating" not in done.stderr and "job/s" not in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_a_real_terminal(workload: Path, tmp_path: Path) -> None:
    session = f"batsim-py-progress-{time.monotonic_ns()}"
    command = " ".join(_command(workload, tmp_path / "out")) + "; echo EXIT=$?; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "20",
                    "-c", str(PROJECT), command], check=True)
    try:
        seen = ""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            pane = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                  capture_output=True, text=True).stdout
            if "simulating" in pane and "job/s" in pane:
                seen = pane
            if "EXIT=" in pane:
                break
            time.sleep(0.1)
        assert "EXIT=0" in pane, pane
        assert seen, "the progress line never appeared"
        line = next(x for x in seen.splitlines() if "simulating" in x)
        assert "/100000" in line and "simulated t=" in line
        assert "simulating" not in pane  # erased at the end
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
