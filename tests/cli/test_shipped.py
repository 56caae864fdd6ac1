"""Shipped platforms, workloads and event files: listed, usable by name, installed with the
package (a build without a checkout next to it still finds them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py import shipped

PROJECT = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path, pythonpath: Path = PROJECT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    return subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_project_input_is_listed_with_its_path(tmp_path: Path) -> None:
    p = _cli("--list-examples", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    expected = sorted(
        [f for f in (PROJECT / "platforms").iterdir() if f.suffix == ".xml"]
        + [f for f in (PROJECT / "workloads").iterdir() if f.suffix in (".json", ".jsonl")]
    )
    lines = p.stdout.splitlines()
    assert len(lines) == len(expected)
    listed = sorted(Path(line.split()[-1]) for line in lines)
    assert listed == expected
    kinds = {line.split()[1]: line.split()[0] for line in lines}
    assert kinds["small4"] == "platform" and kinds["delays_small"] == "workload"
    assert kinds["events_small"] == "events"


def test_names_run_like_paths(tmp_path: Path) -> None:
    by_name = _cli("-p", "small4", "-w", "delays_small.json", "--scheduler", "easy",
                   "-e", "named", "-q", cwd=tmp_path)
    assert by_name.returncode == 0, by_name.stderr
    by_path = _cli("-p", str(PROJECT / "platforms" / "small4.xml"),
                   "-w", str(PROJECT / "workloads" / "delays_small.json"),
                   "--scheduler", "easy", "-e", "paths", "-q", cwd=tmp_path)
    assert by_path.returncode == 0, by_path.stderr
    assert (tmp_path / "named_jobs.csv").read_bytes() == (tmp_path / "paths_jobs.csv").read_bytes()


def test_a_local_file_wins_over_a_shipped_name(tmp_path: Path) -> None:
    (tmp_path / "small4").write_text("not a platform")
    p = _cli("-p", "small4", "-w", "delays_small", "--scheduler", "easy", "-q", cwd=tmp_path)
    assert p.returncode != 0 and "small4" in p.stderr  # the local (bad) file was read


def test_unknown_names_are_left_alone() -> None:
    assert shipped.resolve("events_small", "events").endswith("events_small.jsonl")
    assert shipped.resolve("no_such_platform", "platform") == "no_such_platform"
    assert shipped.resolve("small4", "workload") == "small4"  # a platform, not a workload


def test_a_built_package_carries_its_inputs(tmp_path: Path) -> None:
    """setup.py's build_py copies the inputs into batsim_py/shipped/: a package built that way,
    with no checkout beside it, lists and runs them."""
    build = tmp_path / "build"
    env = dict(os.environ, BATSIM_PY_PURE="1")  # no compilation: only the files matter here
    src = tmp_path / "src"  # a copy, so that no build/ folder lands in the tree under test
    shutil.copytree(PROJECT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "outputs", "node_modules", "*.egg-info", "__pycache__", "*.so",
        ".*_cache", "benchmarks", "tests"))
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(build)],
                       cwd=src, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    shutil.rmtree(src)  # the checkout is gone: only the built package remains
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    listed = _cli("--list-examples", cwd=run_dir, pythonpath=build)
    assert listed.returncode == 0, listed.stderr
    paths = [Path(line.split()[-1]) for line in listed.stdout.splitlines()]
    assert paths and all(p.is_file() and build in p.parents for p in paths)
    ok = _cli("-p", "small4", "-w", "delays_small", "--scheduler", "fcfs", "-e", "out", "-q",
              cwd=run_dir, pythonpath=build)
    assert ok.returncode == 0, ok.stderr
    assert (run_dir / "out_jobs.csv").read_text().count("\n") == 21


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_no_shipped_copy_is_committed() -> None:
    tracked = subprocess.run(["git", "ls-files", "batsim_py/shipped"], cwd=PROJECT,
                             capture_output=True, text=True).stdout
    assert tracked == ""


@pytest.mark.parametrize("command", [
    "-m batsim_py.cli --list-examples",
    "-m batsim_py.cli compare {w}/out {w}/other",
])
def test_a_closed_pipe_is_not_an_error(tmp_path: Path, command: str) -> None:
    """`batsim-py --list-examples | head -1`: the reader leaves early; no traceback, no
    'internal error'."""
    import shlex

    for prefix in ("out", "other"):  # two different runs: compare prints many lines
        p = _cli("-p", "small4", "-w", "delays_small", "--scheduler",
                 "easy" if prefix == "out" else "fcfs", "-e", prefix, "-q", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
    args = command.format(w=tmp_path)
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    p = subprocess.run(f"{shlex.quote(sys.executable)} {args} | head -c 10 >/dev/null",
                       shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.stderr == ""
