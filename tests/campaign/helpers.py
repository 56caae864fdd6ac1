"""Shared by the campaign tests: small campaigns, the command-line twin of a run, output
comparison."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
WALL_CLOCK = ("scheduling_time", "simulation_time")  # the only columns that may differ


def small_campaign(**extra: Any) -> dict[str, Any]:
    """6 runs on the shipped 4-machine platform, well under a second each."""
    spec = {
        "name": "small",
        "platforms": ["small4"],
        "workloads": ["delays_small", {"generate": {"nb_jobs": 25, "nb_res": 4,
                                                    "max_runtime": 300}}],
        "schedulers": ["fcfs", "easy"],
        "seeds": [1, 2],
    }
    spec.update(extra)
    return spec


def write_spec(tmp_path: Path, spec: dict[str, Any], name: str = "c.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def cli(*args: str, timeout: float = 300, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    return subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=timeout, env=env, **kwargs)


def output_files(prefix: Path) -> dict[str, bytes]:
    """PREFIX_*.* of a run, by suffix, schedule.csv with its wall-clock columns blanked."""
    out = {}
    for path in sorted(prefix.parent.glob(prefix.name + "_*")):
        data = path.read_bytes()
        if path.name.endswith("_schedule.csv"):
            header, row = data.decode().splitlines()
            names = header.split(",")
            values = row.split(",")
            for col in WALL_CLOCK:
                values[names.index(col)] = "-"
            data = (header + "\n" + ",".join(values)).encode()
        out[path.name[len(prefix.name):]] = data
    return out


def alone_on_command_line(run_folder: Path, prefix: Path) -> subprocess.CompletedProcess[str]:
    """The run's command.txt, run as it says, with `-e prefix` instead of its own."""
    argv = shlex.split((run_folder / "command.txt").read_text())
    assert argv[0] == "batsim-py"
    argv[argv.index("-e") + 1] = str(prefix)
    return cli(*argv[1:])
