"""`fcfs_sleep`, the shipped energy-aware policy, on the shipped energy platform."""

from __future__ import annotations

import csv
from pathlib import Path

from batsim_py.cli import main

PROJECT = Path(__file__).resolve().parents[2]
ARGS = ["-p", str(PROJECT / "platforms" / "energy8.xml"),
        "-w", str(PROJECT / "workloads" / "delays_small.json"), "-E", "-q"]


def joules(prefix: Path) -> float:
    with open(f"{prefix}_schedule.csv") as f:
        return float(next(csv.DictReader(f))["consumed_joules"])


def test_sleeping_idle_machines_saves_energy(tmp_path: Path) -> None:
    assert main([*ARGS, "--scheduler", "fcfs", "-e", str(tmp_path / "on")]) == 0
    assert main([*ARGS, "--scheduler", "fcfs_sleep", "--sched-cfg", '{"idle_timeout": 30}',
                 "-e", str(tmp_path / "sleep")]) == 0
    with open(tmp_path / "sleep_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 20 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    assert joules(tmp_path / "sleep") < 0.9 * joules(tmp_path / "on")
    changes = (tmp_path / "sleep_pstate_changes.csv").read_text().splitlines()
    assert any(line.endswith(",-2") for line in changes)  # switched off...
    assert any(line.endswith(",2") for line in changes)  # ...reached the sleep pstate
    assert any(line.endswith(",-1") for line in changes)  # woken for the queue
    with open(tmp_path / "sleep_schedule.csv") as f:
        schedule = next(csv.DictReader(f))
    assert float(schedule["time_sleeping"]) > 0 and int(schedule["nb_machine_switches"]) > 0


def test_it_needs_the_energy_model_which_is_checked_before_the_run(tmp_path: Path,
                                                                   capsys) -> None:
    """Not when it first switches a machine off, idle_timeout seconds into the run."""
    args = [a for a in ARGS if a != "-E"]
    rc = main([*args, "--scheduler", "fcfs_sleep", "--sched-cfg", '{"idle_timeout": 1}',
               "-e", str(tmp_path / "x")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "scheduler fcfs_sleep switches machines to sleep pstates, which needs the energy " \
        "model: run with -E/--energy" in err
    assert list(tmp_path.iterdir()) == []  # nothing simulated


def test_machines_without_sleep_pstates_are_refused_at_start(tmp_path: Path, capsys) -> None:
    small4 = str(Path(ARGS[ARGS.index("-p") + 1]).with_name("small4.xml"))
    args = [a if a != ARGS[ARGS.index("-p") + 1] else small4 for a in ARGS]
    rc = main([*args, "--scheduler", "fcfs_sleep", "-e", str(tmp_path / "x")])
    assert rc == 1
    assert "fcfs_sleep: machine 0 (node0) has no sleep_pstates property" in \
        capsys.readouterr().err
    jobs = (tmp_path / "x_jobs.csv").read_text().splitlines()
    assert len(jobs) == 1  # the header: no job started


def test_bad_options_are_refused(tmp_path: Path, capsys) -> None:
    rc = main([*ARGS, "--scheduler", "fcfs_sleep", "--sched-cfg", '{"idle_timeout": -1}',
               "-e", str(tmp_path / "x")])
    assert rc == 1
    assert "idle_timeout must be > 0" in capsys.readouterr().err
