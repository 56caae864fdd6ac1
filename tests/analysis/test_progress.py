"""The progress line: drawn in a real terminal (tmux) and erased at the end, absent when stderr
is a pipe, and its content with a fake simulation."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from batsim_py.progress import DELAY, ProgressDisplay, delay_from_env

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


JOBS = 20_000


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The line shows at once (BATSIM_PY_PROGRESS_DELAY=0, _command), so the run need only last
    # long enough for the terminal to be looked at while it is drawn: 20,000 jobs take about a
    # second on the compiled kernel (the pane is read every 0.1 s), more on the pure one.
    path = tmp_path_factory.mktemp("progress") / "w20k.json"
    subprocess.run([sys.executable, "-m", "batsim_py.cli", "generate", str(path), "-n", str(JOBS),
                    "-r", "128", "--seed", "1"], check=True, cwd=PROJECT, timeout=120,
                   stdout=subprocess.DEVNULL)
    return path


def _command(workload: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "batsim_py.cli", "-p", str(PROJECT / "platforms" /
            "cluster128.xml"), "-w", str(workload), "--scheduler", "easy", "-e", str(out),
            *extra]


NO_DELAY = {"BATSIM_PY_PROGRESS_DELAY": "0"}  # the line from the first instant


def test_delay_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATSIM_PY_PROGRESS_DELAY", raising=False)
    assert ProgressDisplay(SimpleNamespace()).delay == DELAY == 1.0
    for text, value in [("0", 0.0), ("2.5", 2.5), ("-1", DELAY), ("nan", DELAY), ("x", DELAY),
                        ("inf", DELAY), ("", DELAY)]:
        monkeypatch.setenv("BATSIM_PY_PROGRESS_DELAY", text)
        assert delay_from_env() == value, text
    assert ProgressDisplay(SimpleNamespace(), delay=3.0).delay == 3.0  # (the argument wins)


@pytest.mark.slow
def test_absent_when_piped(workload: Path, tmp_path: Path) -> None:
    done = subprocess.run(_command(workload, tmp_path / "out"), cwd=PROJECT, timeout=300,
                          capture_output=True, text=True, env={**os.environ, **NO_DELAY})
    assert done.returncode == 0
    assert "simulating" not in done.stderr and "job/s" not in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_a_real_terminal(workload: Path, tmp_path: Path) -> None:
    session = f"batsim-py-progress-{time.monotonic_ns()}"
    # (the variable in the command: a tmux server already running keeps its own environment)
    command = "BATSIM_PY_PROGRESS_DELAY=0 " + " ".join(_command(workload, tmp_path / "out")) \
        + "; echo EXIT=$?; sleep 60"
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
        assert f"/{JOBS}" in line and "simulated t=" in line
        assert "simulating" not in pane  # erased at the end
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
