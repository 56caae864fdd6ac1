"""The command line: one clear line per error, non-zero exit, outputs, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.cli import main

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(list(args))
    err = capsys.readouterr().err
    return rc, err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def workload(jobs: list[dict], profiles: dict | None = None) -> str:
    return json.dumps({"nb_res": 4, "jobs": jobs,
                       "profiles": profiles or {"p1": {"type": "delay", "delay": 1}}})


BAD_INPUTS = [
    ("missing platform", lambda t: ["-p", str(t / "nope.xml"), "-w", DELAYS],
     r"nope\.xml: platform file not found"),
    ("missing workload", lambda t: ["-p", SMALL4, "-w", str(t / "nope.json")],
     r"nope\.json: workload file not found"),
    ("bad unit", lambda t: ["-p", write(t, "u.xml", Path(SMALL4).read_text().replace(
        'speed="1Gf"', 'speed="1 Gf"')), "-w", DELAYS], r"u\.xml:\d+: <host id=\"node0\">"),
    ("invalid XML", lambda t: ["-p", write(t, "x.xml", "<platform version='4.1'><zone>"),
                               "-w", DELAYS], r"x\.xml:1: invalid XML"),
    ("unknown profile", lambda t: ["-p", SMALL4, "-w", write(t, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "p7"}]))],
     r"w\.json: job w0!1: profile 'p7' is not defined \(defined: p1\)"),
    ("duplicate id", lambda t: ["-p", SMALL4, "-w", write(t, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "p1"}] * 2))], r"job w0!1: duplicated"),
    ("walltime 0", lambda t: ["-p", SMALL4, "-w", write(t, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 1, "walltime": 0, "profile": "p1"}]))],
     r"'walltime' must be > 0"),
    ("invalid JSON", lambda t: ["-p", SMALL4, "-w", write(t, "w.json", '{"nb_res": 4,')],
     r"w\.json: .*line 1"),
    ("more machines than the platform", lambda t: ["-p", SMALL4, "--mmax", "9", "-w", DELAYS],
     r"only 4 compute machines"),
    ("unknown scheduler", lambda t: ["-p", SMALL4, "-w", DELAYS, "--scheduler", "nope"],
     r"unknown scheduler 'nope' \(known: .*fcfs"),
    ("unsupported flag", lambda t: ["-p", SMALL4, "-w", DELAYS, "--sg-cfg", "a:b"],
     r"--sg-cfg is not yet supported"),
    ("no-sched with a scheduler", lambda t: ["-p", SMALL4, "-w", DELAYS, "--no-sched"],
     r"--no-sched runs the workloads without a scheduler: --scheduler cannot come with it"),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_one_clear_line(case, tmp_path: Path, capsys) -> None:
    _, make_args, pattern = case
    args = make_args(tmp_path)
    if "--scheduler" not in args:
        args += ["--scheduler", "fcfs"]
    rc, err = run_cli(capsys, *args, "-e", str(tmp_path / "out"))
    assert rc != 0
    lines = [line for line in err.splitlines() if line.startswith("batsim-py: error")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    import re

    assert re.search(pattern, lines[0]), lines[0]


def test_a_run_writes_the_three_files(tmp_path: Path, capsys) -> None:
    rc, err = run_cli(capsys, "-p", SMALL4, "-w", DELAYS, "--scheduler", "easy", "-q",
                      "-e", str(tmp_path / "run"))
    assert rc == 0, err
    for suffix in ("jobs.csv", "schedule.csv", "machine_states.csv"):
        assert (tmp_path / f"run_{suffix}").stat().st_size > 0
    jobs = (tmp_path / "run_jobs.csv").read_text().splitlines()
    assert len(jobs) == 1 + 20


def test_two_runs_give_identical_outputs(tmp_path: Path) -> None:
    """Byte-identical files, but for the two wall-clock columns of schedule.csv."""
    outs = []
    for k in range(2):
        prefix = tmp_path / f"r{k}" / "out"
        subprocess.run(
            [sys.executable, "-m", "batsim_py.cli", "-q", "-p", SMALL4, "-w",
             str(PROJECT / "workloads" / "mixed_small.json"), "-w", DELAYS,
             "--scheduler", "easy", "-e", str(prefix)],
            check=True, capture_output=True,
        )
        outs.append(prefix)
    for suffix in ("jobs.csv", "machine_states.csv"):
        a = Path(f"{outs[0]}_{suffix}").read_bytes()
        assert a == Path(f"{outs[1]}_{suffix}").read_bytes()
    header, *rows = [Path(f"{p}_schedule.csv").read_text().splitlines() for p in outs][0]
    keys = header.split(",")
    wall = {keys.index("scheduling_time"), keys.index("simulation_time")}
    sa, sb = (Path(f"{p}_schedule.csv").read_text().splitlines()[1].split(",") for p in outs)
    assert [v for i, v in enumerate(sa) if i not in wall] == [
        v for i, v in enumerate(sb) if i not in wall
    ]


def test_compare_subcommand(tmp_path: Path, capsys) -> None:
    rc, _ = run_cli(capsys, "-p", SMALL4, "-w", DELAYS, "--scheduler", "fcfs", "-q",
                    "-e", str(tmp_path / "a"))
    assert rc == 0
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "a")]) == 0
    text = (tmp_path / "a_jobs.csv").read_text().replace("COMPLETED_SUCCESSFULLY", "X", 1)
    for suffix in ("schedule.csv", "machine_states.csv"):
        (tmp_path / f"b_{suffix}").write_text((tmp_path / f"a_{suffix}").read_text())
    (tmp_path / "b_jobs.csv").write_text(text)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert "final_state" in capsys.readouterr().out


def test_version_and_listing(capsys) -> None:
    assert main(["--version"]) == 0
    assert main(["--list-schedulers"]) == 0
    out = capsys.readouterr().out
    assert "easy" in out and "fcfs" in out
