"""Seeded workload generation and JSON writing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workload_testlib import REPO

from batsim_py.errors import UsageError
from batsim_py.tools.genworkload import main as genworkload_main
from batsim_py.workload.generate import generate_delay_workload
from batsim_py.workload.reader import load_workload, parse_workload
from batsim_py.workload.writer import workload_json_text


def test_deterministic() -> None:
    a = generate_delay_workload(200, 32, seed=5)
    b = generate_delay_workload(200, 32, seed=5)
    c = generate_delay_workload(200, 32, seed=6)
    assert a == b
    assert a["jobs"] != c["jobs"]


def test_valid_and_within_bounds() -> None:
    data = generate_delay_workload(500, 16, seed=1, min_runtime=10, max_runtime=1000)
    w = parse_workload(data, name="w0", path="/x.json", source="gen")
    assert len(w.jobs) == 500 and w.nb_res == 16
    assert all(1 <= j.res <= 16 for j in w.jobs)
    subtimes = [j.subtime for j in w.jobs]
    assert subtimes == sorted(subtimes) and subtimes[0] == 0
    for j in w.jobs:
        delay = w.profiles[j.profile].delay
        assert 10 <= delay <= 1000
        assert j.walltime >= delay and j.walltime % 60 == 0


def test_target_load() -> None:
    data = generate_delay_workload(2000, 64, seed=3, load=0.5)
    profiles = data["profiles"]
    work = sum(j["res"] * profiles[j["profile"]]["delay"] for j in data["jobs"])
    span = data["jobs"][-1]["subtime"]
    assert 0.4 < work / (64 * span) < 0.6


def test_no_walltime() -> None:
    data = generate_delay_workload(10, 4, seed=0, walltime_factor=0)
    assert all("walltime" not in j for j in data["jobs"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nb_jobs": -1, "nb_res": 4},
        {"nb_jobs": 1, "nb_res": 0},
        {"nb_jobs": 1, "nb_res": 4, "load": 0},
        {"nb_jobs": 1, "nb_res": 4, "min_runtime": 0},
        {"nb_jobs": 1, "nb_res": 4, "max_res": 5},
    ],
)
def test_invalid_arguments(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        generate_delay_workload(**kwargs)


def test_writer_round_trip(tmp_path: Path) -> None:
    data = generate_delay_workload(50, 8, seed=2)
    data["profiles"]["x"] = {"type": "delay", "delay": 1.5}
    text = workload_json_text(data)
    assert json.loads(text) == data
    assert text.count("\n") == 50 + len(data["profiles"]) + 8  # one line per job and profile


def test_tool(tmp_path: Path) -> None:
    out = tmp_path / "g.json"
    assert genworkload_main([str(out), "-n", "30", "-r", "8", "--seed", "4"]) == 0
    assert len(load_workload(str(out), "w0").jobs) == 30
    assert genworkload_main([str(out), "-n", "3", "-r", "0"]) == 2
    assert genworkload_main([str(out)]) == 2


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("gen_delay_1k_128.json", ["-n", "1000", "-r", "128", "--seed", "42", "--load", "0.7"]),
        (
            "delays_small.json",
            ["-n", "20", "-r", "4", "--seed", "7", "--load", "0.8"]
            + ["--min-runtime", "5", "--max-runtime", "120"],
        ),
    ],
)
def test_shipped_generated_workloads_are_reproducible(
    tmp_path: Path, name: str, args: list[str]
) -> None:
    out = tmp_path / name
    assert genworkload_main([str(out), *args]) == 0
    assert out.read_text() == (REPO / "workloads" / name).read_text()
