"""Campaigns on dask.distributed: the Python API, the command line, resume, determinism."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import batsim_py.campaign
from batsim_py.campaign import execute, store
from batsim_py.campaign.spec import CampaignError, load_spec

from .helpers import (
    PROJECT,
    alone_on_command_line,
    cli,
    output_files,
    small_campaign,
    write_spec,
)


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}
                      ) as cluster, Client(cluster) as c:
        yield c


def attempts(root: Path) -> dict[str, int]:
    return {p.parent.name: p.read_text().count("\n")
            for p in (root / "runs").glob("*/attempts.log")}


def markers(root: Path) -> set[str]:
    return {p.parent.name for p in (root / "runs").glob("*/result.json")}


def test_python_api_runs_the_campaign_and_resumes(tmp_path: Path, client: object) -> None:
    spec = small_campaign(schedulers=["fcfs", "easy", "fcfs_sleep"])
    table = batsim_py.campaign.run(spec, client, output=str(tmp_path))
    runs = load_spec(spec).runs
    assert list(table["run_id"]) == [r.run_id for r in runs]
    assert table["run_id"].is_unique
    # fcfs_sleep without the energy model fails: recorded, the others are ok
    failed = table[table["status"] == "failed"]
    assert set(failed["scheduler"]) == {"fcfs_sleep"} and len(failed) == 3
    assert (table.loc[table["status"] == "ok", "nb_jobs"] > 0).all()
    # the table on disk, Parquet and CSV, is the returned one
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "metrics.parquet"), table)
    assert len(pd.read_csv(tmp_path / "metrics.csv")) == len(runs)
    # resumed: nothing is run again, same table
    before = attempts(tmp_path)
    assert set(before.values()) == {1}
    again = batsim_py.campaign.run(spec, client, output=str(tmp_path))
    assert attempts(tmp_path) == before
    pd.testing.assert_frame_equal(again, table)
    # --retry-failed: only the failed runs again
    batsim_py.campaign.run(spec, client, output=str(tmp_path), retry_failed=True)
    after = attempts(tmp_path)
    assert {k for k, n in after.items() if n == 2} == set(failed["run_id"])


def test_command_line_campaign_with_report(tmp_path: Path) -> None:
    path = write_spec(tmp_path, small_campaign())
    out = tmp_path / "out"
    result = cli("campaign", str(path), "-o", str(out), "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("campaign small: 6 runs, 6 ok, 0 failed; written: ")
    # progress lines (stderr is not a terminal: one line per tenth)
    assert "campaign: 6/6 runs done, 0 failed" in result.stderr
    page = (out / "report.html").read_text()
    assert "Schedulers side by side" in page and "By scheduler" in page
    assert "data:image/png;base64," in page
    table = pd.read_parquet(out / "metrics.parquet")
    assert len(table) == 6 and set(table["status"]) == {"ok"}
    # every run equals the same run alone on the command line
    for run_id in table["run_id"][:2]:
        alone = tmp_path / "alone" / run_id
        done = alone_on_command_line(out / "runs" / run_id, alone)
        assert done.returncode == 0, done.stderr
        assert output_files(out / "runs" / run_id / "out") == output_files(alone)
    listed = cli("campaign", str(path), "-o", str(out), "--list")
    assert listed.returncode == 0
    assert listed.stdout.count("  ok  ") == 6


def test_command_line_errors_are_one_line(tmp_path: Path) -> None:
    bad = write_spec(tmp_path, {"platforms": ["small4"], "workload": ["delays_small"]})
    result = cli("campaign", str(bad), "-o", str(tmp_path / "o"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"batsim-py: error: {bad}: unknown key(s) workload (known: name, platforms, "
        "workloads, schedulers, timing, energy, seeds, replications, batch_size, "
        "run_time_limit)"]
    assert cli("campaign").returncode == 2


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(execute, "CONNECT_TIMEOUT", 2.0)
    started = time.monotonic()
    with pytest.raises(CampaignError, match=f"tcp://127.0.0.1:{port}: cannot reach a Dask "
                       "scheduler there"):
        batsim_py.campaign.run(small_campaign(), output=str(tmp_path),
                               scheduler_address=f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - started < 30


# ----------------------------------------------------------------------- interruptions

def longer_campaign(n_seeds: int) -> dict:
    """Runs of a few tenths of a second each (1,000 jobs on 128 machines)."""
    return {"name": "longer", "platforms": ["cluster128"],
            "workloads": [{"generate": {"nb_jobs": 1000, "nb_res": 128, "max_runtime": 3600}}],
            "schedulers": ["easy"], "seeds": list(range(n_seeds))}


def start(path: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    return subprocess.Popen([sys.executable, "-m", "batsim_py.cli", "campaign", str(path),
                             "-o", str(out), "--no-report", *args], cwd=PROJECT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigterm_then_resume(tmp_path: Path) -> None:
    path = write_spec(tmp_path, longer_campaign(24))
    out = tmp_path / "out"
    proc = start(path, out, "--workers", "2", "--batch-size", "2")
    try:
        wait_for(lambda: len(markers(out)) >= 3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "campaign interrupted by SIGTERM: the finished runs are recorded" in err
    done_before = markers(out)
    assert 3 <= len(done_before) < 24, err
    tries_before = attempts(out)
    table = pd.read_csv(out / "metrics.csv")  # written at the interruption too
    assert set(table.loc[table["status"] == "ok", "run_id"]) == done_before
    assert set(table.loc[table["status"] == "pending", "run_id"]) == (
        set(table["run_id"]) - done_before)
    # resume
    proc = start(path, out, "--workers", "2")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert len(markers(out)) == 24
    tries = attempts(out)
    assert all(tries[r] == tries_before[r] == 1 for r in done_before)  # none run twice
    table = pd.read_parquet(out / "metrics.parquet")
    assert table["run_id"].is_unique and len(table) == 24
    assert set(table["status"]) == {"ok"}
    # a run interrupted mid-way and redone equals the same run alone
    redone = [r for r, n in tries.items() if n > 1] or sorted(set(tries) - done_before)
    alone = tmp_path / "alone"
    assert alone_on_command_line(out / "runs" / redone[0], alone).returncode == 0
    assert output_files(out / "runs" / redone[0] / "out") == output_files(alone)


@pytest.mark.slow
def test_sigkill_of_a_worker_is_retried_by_dask(tmp_path: Path) -> None:
    path = write_spec(tmp_path, longer_campaign(10))
    out = tmp_path / "out"
    proc = start(path, out, "--workers", "2", "--batch-size", "3")
    victim: dict[str, int] = {}

    def a_run_in_progress() -> bool:
        if len(markers(out)) < 2:
            return False
        for run_id in attempts(out):
            if run_id not in markers(out):
                line = (out / "runs" / run_id / "attempts.log").read_text().splitlines()[-1]
                victim[run_id] = int(line.rsplit(":", 1)[1])
                return True
        return False

    try:
        wait_for(a_run_in_progress)
        (run_id, pid), = victim.items()
        os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert len(markers(out)) == 10
    tries = attempts(out)
    table = pd.read_parquet(out / "metrics.parquet")
    assert table["run_id"].is_unique and set(table["status"]) == {"ok"}
    if run_id not in markers(out) or tries[run_id] == 1:
        pytest.fail(f"the killed run {run_id} was not redone: {tries}")
    assert tries[run_id] == 2
    assert sum(tries.values()) == 11  # only the killed run ran twice
    alone = tmp_path / "alone"
    assert alone_on_command_line(out / "runs" / run_id, alone).returncode == 0
    assert output_files(out / "runs" / run_id / "out") == output_files(alone)


@pytest.mark.slow
def test_one_or_four_workers_give_the_same_table_and_outputs(tmp_path: Path) -> None:
    spec = small_campaign(schedulers=["fcfs", "easy"], seeds=[1, 2, 3])
    tables = {}
    for n in (1, 4):
        tables[n] = batsim_py.campaign.run(spec, output=str(tmp_path / f"w{n}"), workers=n,
                                           batch_size=1)
    pd.testing.assert_frame_equal(tables[1], tables[4])
    assert (tmp_path / "w1" / "metrics.csv").read_bytes() == (
        tmp_path / "w4" / "metrics.csv").read_bytes()
    workers = {n: {store.read_marker(str(tmp_path / f"w{n}"), r)["worker"]
                   for r in tables[n]["run_id"]} for n in (1, 4)}
    assert len(workers[1]) == 1 and len(workers[4]) > 1  # (really spread)
    for run_id in tables[1]["run_id"]:
        four = output_files(tmp_path / "w4" / "runs" / run_id / "out")
        assert output_files(tmp_path / "w1" / "runs" / run_id / "out") == four
        # and each equals the same run alone on the command line
        alone = tmp_path / "alone" / run_id
        done = alone_on_command_line(tmp_path / "w4" / "runs" / run_id, alone)
        assert done.returncode == 0, done.stderr
        assert output_files(alone) == four
