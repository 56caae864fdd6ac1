"""One run of a campaign in a process of its own, so that a time limit can stop it.

Why a process: a run is CPU-bound Python (often compiled) code in a worker thread, which
nothing can interrupt safely from outside; a process can always be killed. So with a per-run
time limit (`run_time_limit`, `--run-time-limit`) the worker starts
`python -m batsim_py.campaign.child`, hands it the run (pickled on stdin), and kills its
process group once the limit is reached. The child runs exactly what the worker runs without
a limit (`worker._simulate`: the same Python API, the same output files) and prints one JSON
line, `{"metrics": {...}}` or `{"error": "..."}`, on stdout.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from typing import Any

import batsim_py
from batsim_py.campaign.spec import RunConfig

KILL_WAIT = 10.0
"""Seconds to wait for a killed child to be reaped (SIGKILL: it cannot refuse)."""


class RunTimedOut(Exception):
    """The run's process was stopped at the time limit."""


def run_in_child(config: RunConfig, root: str, limit: float) -> dict[str, Any]:
    """`worker._simulate(config, root)` in a child process stopped after `limit` seconds;
    its metrics, or RunTimedOut, or the run's error as RuntimeError(one line)."""
    from batsim_py.decision.child import _death_signal

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(batsim_py.__file__)))
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ,
           "PYTHONPATH": package_parent + (os.pathsep + path if path else "")}
    child = subprocess.Popen([sys.executable, "-m", "batsim_py.campaign.child"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, start_new_session=True,
                             preexec_fn=_death_signal())
    try:
        out, err = child.communicate(pickle.dumps((config, root)), timeout=limit)
    except subprocess.TimeoutExpired:
        _kill(child)
        raise RunTimedOut() from None
    except BaseException:  # interrupted (SIGTERM of the campaign): the child goes too
        _kill(child)
        raise
    lines = out.decode("utf-8", "replace").strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        why = err.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"internal error: the run's process exited with code "
                           f"{child.returncode} without a result"
                           f"{': ' + why[-1] if why else ''}") from None
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return answer["metrics"]


def _kill(child: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)  # the run and anything it started
    except OSError:
        pass
    try:
        child.communicate(timeout=KILL_WAIT)
    except subprocess.TimeoutExpired:
        pass


def main() -> int:
    from batsim_py.campaign.worker import _error_line, _simulate

    config, root = pickle.loads(sys.stdin.buffer.read())
    started = time.perf_counter()
    try:
        answer: dict[str, Any] = {"metrics": _simulate(config, root)}
    except Exception as exc:
        answer = {"error": _error_line(exc)}
    answer["seconds"] = round(time.perf_counter() - started, 6)
    sys.stdout.write(json.dumps(answer, allow_nan=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
