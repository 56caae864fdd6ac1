"""The `batsim` command behaves as Batsim 4.2.1 wherever a wrapper can tell (facts from
Batsim 4.2.1's src/batsim.cpp and docopt.cpp: default export prefix `out`, `--version` prints
the version alone, usage errors exit with 255 and print the usage on stdout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")


def batsim(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run([sys.executable, "-m", "batsim_py.batsim_alias", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_the_batsim_script_is_the_alias() -> None:
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["batsim"] == "batsim_py.batsim_alias:main"
    assert scripts["batsim-py"] == "batsim_py.cli:main"


def test_default_export_prefix_is_out(tmp_path: Path) -> None:
    done = batsim("-p", SMALL4, "-w", DELAYS, "--scheduler", "fcfs", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out_jobs.csv").is_file() and (tmp_path / "out_schedule.csv").is_file()
    assert not (tmp_path / "outputs").exists()


def test_an_explicit_export_prefix_is_kept(tmp_path: Path) -> None:
    done = batsim("-p", SMALL4, "-w", DELAYS, "--scheduler", "fcfs", "-q",
                  f"--export={tmp_path}/mine", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "mine_jobs.csv").is_file() and not (tmp_path / "out_jobs.csv").exists()


def test_dump_execution_context_shows_batsim_s_defaults() -> None:
    done = batsim("-p", SMALL4, "--dump-execution-context")
    context = json.loads(done.stdout)
    assert context["export_prefix"] == "out"
    assert context["socket_endpoint"] == "tcp://localhost:28000"
    assert context["external_scheduler"] is True


def test_version_is_batsim_s() -> None:
    assert batsim("--version").stdout == "4.2.1\n"
    assert batsim("--simgrid-version").stdout == "3.32.0\n"


def test_help_is_a_docopt_usage_that_says_what_runs() -> None:
    done = batsim("--help")
    assert done.returncode == 0
    text = done.stdout
    assert "Usage:\n  batsim -p <platform_file> [-w <workload_file>...]" in text
    assert "imitating Batsim 4.2.1" in text and "batsim-py" in text
    assert "-e, --export <prefix>" in text and "[default: out]" in text
    assert "[default: tcp://localhost:28000]" in text and "[default: master_host]" in text


def test_usage_errors_exit_255_with_the_usage_on_stdout() -> None:
    for args in (["-p", SMALL4, "--no-such-flag"], ["-w", DELAYS], []):
        done = batsim(*args)
        assert done.returncode == 255, args
        assert "Usage:" in done.stdout and done.stderr.strip(), args


def test_batsim_py_keeps_its_own_defaults() -> None:
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", SMALL4,
                           "--dump-execution-context"], cwd=PROJECT, capture_output=True,
                          text=True)
    assert json.loads(done.stdout)["export_prefix"] == "outputs/out"


def test_it_waits_for_an_external_scheduler_forever_as_batsim(monkeypatch) -> None:
    from batsim_py import batsim_alias

    seen: list[list[str]] = []
    monkeypatch.setattr(batsim_alias, "batsim_py_main", lambda argv: seen.append(argv) or 0)
    assert batsim_alias.main(["-p", SMALL4, "-w", DELAYS]) == 0
    args = seen[-1]
    assert args[args.index("--scheduler-timeout") + 1] == "inf"
    assert args[args.index("--scheduler-connect-timeout") + 1] == "inf"
    assert args[args.index("--export") + 1] == "out"
    assert batsim_alias.main(["-p", SMALL4, "--scheduler-timeout=5", "-eX"]) == 0
    assert "inf" in seen[-1] and "--export" not in seen[-1]  # (connect: inf; given ones kept)
    assert seen[-1].count("--scheduler-timeout") == 0


def test_dump_execution_context_says_whether_a_scheduler_process_is_needed() -> None:
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", SMALL4,
                           "--scheduler", "fcfs", "--dump-execution-context"], cwd=PROJECT,
                          capture_output=True, text=True)
    assert json.loads(done.stdout)["external_scheduler"] is False
