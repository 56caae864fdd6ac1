"""`--process` and `--scheduler` with user code: file and module forms, installed schedulers
(entry points), and one clear line naming the user code when it is missing or fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")
EXAMPLES = PROJECT / "examples"
AVAILABLE = f"{EXAMPLES / 'inprocess_fcfs.py'}:AvailabilityFcfs"


def cli(*args: str, cwd: Path | None = None, env: dict | None = None
        ) -> subprocess.CompletedProcess:
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT), environment.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "batsim_py.cli", "-q", *args],
                          capture_output=True, text=True, cwd=cwd or PROJECT, env=environment,
                          timeout=120)


def test_failures_process_and_user_scheduler_from_files(tmp_path):
    runs = []
    for k in range(2):
        prefix = tmp_path / f"run{k}"
        done = cli("-p", SMALL4, "-w", DELAYS, "--scheduler", AVAILABLE,
                   "--process", f"{EXAMPLES / 'failures.py'}:failures", "-e", str(prefix))
        assert done.returncode == 0, done.stderr
        runs.append({s: Path(f"{prefix}_{s}.csv").read_text()
                     for s in ("jobs", "machine_states")})
        schedule = Path(f"{prefix}_schedule.csv").read_text().splitlines()
        row = dict(zip(schedule[0].split(","), schedule[1].split(","), strict=True))
        assert float(row["time_unavailable"]) > 0  # machines did fail
        assert row["nb_jobs_success"] == "20"
    assert runs[0] == runs[1]  # seeded: deterministic


def test_process_as_an_importable_module(tmp_path):
    prefix = tmp_path / "out"
    done = cli("-p", SMALL4, "-w", DELAYS, "--scheduler", "easy",
               "--process", "examples.sampler:sample_utilisation", "-e", str(prefix))
    assert done.returncode == 0, done.stderr
    lines = Path(f"{prefix}_utilisation.csv").read_text().splitlines()
    assert lines[0] == "time,computing,idle,unavailable,queued_jobs,running_jobs"
    assert len(lines) > 5


def test_user_scheduler_module_form(tmp_path):
    prefix = tmp_path / "out"
    done = cli("-p", SMALL4, "-w", DELAYS,
               "--scheduler", "examples.inprocess_fcfs:AvailabilityFcfs", "-e", str(prefix))
    assert done.returncode == 0, done.stderr
    assert Path(f"{prefix}_jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") == 20


def test_installed_schedulers_are_listed_and_usable(tmp_path):
    """A package declaring `[batsim_py.schedulers]` entry points adds names."""
    site = tmp_path / "site"
    (site / "acme_sched-1.0.dist-info").mkdir(parents=True)
    (site / "acme_sched-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-sched\nVersion: 1.0\n")
    (site / "acme_sched-1.0.dist-info" / "entry_points.txt").write_text(
        "[batsim_py.schedulers]\nacme = acme_sched:AvailabilityFcfs\n")
    (site / "acme_sched.py").write_text((EXAMPLES / "inprocess_fcfs.py").read_text())
    env = {"PYTHONPATH": str(site)}
    listed = cli("--list-schedulers", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "acme" in listed.stdout.split() and "easy" in listed.stdout.split()
    prefix = tmp_path / "out"
    done = cli("-p", SMALL4, "-w", DELAYS, "--scheduler", "acme", "-e", str(prefix), env=env,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(f"{prefix}_jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") == 20


USER_FILE = '''\
def broken(env, sim):
    yield env.timeout(30)
    raise RuntimeError("the model broke")


def one_argument(env):
    pass


class NoExchange:
    pass


value = 3
'''


@pytest.mark.parametrize("flag,target,pattern", [
    ("--process", "nosuchmodule_xyz:f", "process 'nosuchmodule_xyz:f': no module named "
                                        "'nosuchmodule_xyz'"),
    ("--process", "{dir}/nope.py:f", "no file .*nope.py"),
    ("--process", "{file}:missing", "user.py defines no 'missing' \\(it defines: .*broken"),
    ("--process", "{file}:one_argument", "must take two arguments, \\(env, sim\\)"),
    ("--process", "{file}:value", "is a int, not a function"),
    ("--process", "{file}", "expected MODULE:NAME or path/to/file.py:NAME"),
    ("--scheduler", "{file}:NoExchange", "NoExchange has no exchange\\(now, events\\)"),
    ("--scheduler", "nosuchmodule_xyz:Sched", "no module named 'nosuchmodule_xyz'"),
    ("--scheduler", "nosuch", "unknown scheduler 'nosuch' \\(known: .*easy.*MODULE:CLASS"),
])
def test_missing_or_malformed_user_code_is_one_line(tmp_path, flag, target, pattern):
    import re

    user = tmp_path / "user.py"
    user.write_text(USER_FILE)
    target = target.format(dir=tmp_path, file=user)
    done = cli("-p", SMALL4, "-w", DELAYS, flag, target, "-e", str(tmp_path / "out"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("batsim-py: error: ")
    assert re.search(pattern, lines[0]), lines[0]


def test_an_exception_in_a_process_names_it_and_keeps_the_outputs(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(USER_FILE)
    prefix = tmp_path / "out"
    done = cli("-p", SMALL4, "-w", DELAYS, "--scheduler", "easy",
               "--process", f"{user}:broken", "-e", str(prefix))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"SimPy process 'broken' ({user}:3) failed at t=30.000000: RuntimeError: " \
           "the model broke" in lines[0]
    jobs = Path(f"{prefix}_jobs.csv").read_text().splitlines()
    assert 1 < len(jobs) < 21  # the jobs that ended before t=30 are there


def test_an_exception_in_a_user_scheduler_names_its_line(tmp_path):
    user = tmp_path / "sched.py"
    user.write_text("from batsim_py.decision.interface import DecisionProcess\n"
                    "class Bad(DecisionProcess):\n"
                    "    def exchange(self, now, events):\n"
                    "        return {}['nope']\n")
    done = cli("-p", SMALL4, "-w", DELAYS, "--scheduler", f"{user}:Bad",
               "-e", str(tmp_path / "out"))
    assert done.returncode == 1
    assert f"KeyError: 'nope' ({user}:4)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
