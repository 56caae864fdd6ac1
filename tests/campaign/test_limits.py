"""A campaign's per-run time limit (a hung run is stopped, recorded as timed out, its partial
outputs removed, the others go on) and its folder lock (one campaign process per folder)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from batsim_py.campaign import store
from batsim_py.campaign.lock import CampaignBusy, campaign_lock
from batsim_py.campaign.spec import CampaignError, load_spec
from batsim_py.campaign.worker import run_batch, run_one

from .helpers import PROJECT, cli, output_files, small_campaign, write_spec

HANG = str(Path(__file__).with_name("hang_scheduler.py")) + ":Hang"
LIMIT = 6.0  # seconds: a run's process imports batsim-py (about 2 s on a loaded machine)


def test_a_hung_run_is_stopped_at_the_limit_and_the_batch_goes_on(tmp_path: Path) -> None:
    spec = load_spec(small_campaign(workloads=["delays_small"], schedulers=[HANG, "fcfs"]))
    hung, ok = spec.runs
    folder = Path(store.run_folder(str(tmp_path), hung.run_id))
    folder.mkdir(parents=True)  # what an attempt killed while writing leaves behind
    (folder / "out_jobs.csv").write_text("job_id,workload_name\n1,w0\n")
    (folder / ".batsim-py-1234.tmp").write_text("job_id")
    started = time.monotonic()
    records = run_batch([hung, ok], str(tmp_path), time_limit=LIMIT)
    elapsed = time.monotonic() - started
    assert [r["status"] for r in records] == ["timeout", "ok"]
    assert LIMIT <= records[0]["wall_seconds"] < LIMIT + 5 and elapsed < 2 * LIMIT + 10
    error = records[0]["error"]
    assert error.startswith("timed out: the run was stopped after the per-run time limit of "
                            "6 s (run_time_limit, --run-time-limit)"), error
    assert "its 2 partial output file(s) were removed; raise the limit and rerun with " \
        "--retry-failed" in error and "\n" not in error
    assert (folder / "command.txt").exists() and (folder / "attempts.log").exists()
    assert not list(folder.glob("out_*")) and not list(folder.glob(".batsim-py-*"))
    assert json.loads((folder / "result.json").read_text())["status"] == "timeout"
    # a timed-out run is a result (kept on resume), run again by --retry-failed
    assert store.is_complete(str(tmp_path), hung.run_id)
    assert not store.is_complete(str(tmp_path), hung.run_id, retry_failed=True)
    table = store.table(str(tmp_path), spec.runs)
    assert list(table["status"]) == ["timeout", "ok"]
    assert table.loc[0, ["makespan", "waiting_mean"]].isna().all()
    # the run within the limit, in its own process, equals the same run in-process
    alone = tmp_path / "alone"
    run_one(ok, str(alone))
    ours = output_files(folder.parent / ok.run_id / "out")
    assert ours and ours == output_files(alone / "runs" / ok.run_id / "out")
    assert records[1]["metrics"] == store.read_marker(str(alone), ok.run_id)["metrics"]


def test_a_failing_run_under_a_limit_keeps_its_error(tmp_path: Path) -> None:
    config = load_spec(small_campaign(workloads=["delays_small"],
                                      schedulers=["fcfs_sleep"])).runs[0]
    record = run_one(config, str(tmp_path), time_limit=60)
    assert record["status"] == "failed"
    assert record["error"].startswith("UsageError: scheduler fcfs_sleep")


@pytest.mark.parametrize("value", [0, -1, "600", True, float("inf")])
def test_the_limit_must_be_seconds(value: object) -> None:
    with pytest.raises(CampaignError, match="run_time_limit is a number of seconds > 0"):
        load_spec(small_campaign(run_time_limit=value))


def test_the_limit_does_not_change_run_ids() -> None:
    assert load_spec(small_campaign(run_time_limit=5)).run_time_limit == 5.0
    assert load_spec(small_campaign()).run_time_limit is None
    assert [r.run_id for r in load_spec(small_campaign(run_time_limit=5)).runs] == \
        [r.run_id for r in load_spec(small_campaign()).runs]


HOLD = """
import sys, time
from batsim_py.campaign.lock import campaign_lock
with campaign_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_campaign_process_on_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ, PYTHONPATH=str(PROJECT)))
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        path = write_spec(tmp_path, small_campaign())
        result = cli("campaign", str(path), "-o", str(out), "-q", timeout=120)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"batsim-py: error: campaign folder {out} is in use by "
                                   f"another campaign process (host ")
        assert f"pid {holder.pid}, since " in lines[0]
        assert "wait for it to end, stop it, or give another -o" in lines[0]
        assert not (out / "runs").exists()  # nothing written by the refused one
        with pytest.raises(CampaignBusy), campaign_lock(str(out)):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    # the holder died without cleaning up: its lock went with it
    with campaign_lock(str(out)) as lock:
        assert f"pid {os.getpid()}," in Path(lock).read_text()


@pytest.mark.slow
def test_command_line_time_limit_on_dask(tmp_path: Path) -> None:
    spec = small_campaign(workloads=["delays_small"], schedulers=[HANG, "fcfs", "easy"],
                          run_time_limit=600)
    path = write_spec(tmp_path, spec)
    out = tmp_path / "out"
    result = cli("campaign", str(path), "-o", str(out), "--workers", "2",
                 "--run-time-limit", str(LIMIT), timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("campaign small: 3 runs, 2 ok, 0 failed, 1 timed out; "
                                    "written: "), result.stdout
    table = pd.read_parquet(out / "metrics.parquet")
    assert list(table["status"]) == ["timeout", "ok", "ok"]
    assert table.loc[0, "error"].startswith("timed out: the run was stopped after the "
                                            "per-run time limit of 6 s")
    assert "Failed and timed-out runs" in (out / "report.html").read_text()
