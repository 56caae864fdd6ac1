"""The campaign's report compares its factors (built from a store filled without Dask)."""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.campaign import store
from batsim_py.campaign.report import factor_summary, scheduler_table, write_campaign_report
from batsim_py.campaign.spec import load_spec
from batsim_py.campaign.worker import run_batch

from .helpers import small_campaign


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("campaign")
    spec = load_spec(small_campaign(schedulers=["fcfs", "easy", {"name": "fcfs_sleep"}]))
    run_batch(spec.runs, str(root))
    return root, store.table(str(root), spec.runs)


def test_factor_summary_is_the_mean_over_ok_runs(table) -> None:
    _, frame = table
    summary = factor_summary(frame, "scheduler")
    assert list(summary.index) == ["easy", "fcfs", "fcfs_sleep"]
    assert list(summary["runs"]) == [3, 3, 3]
    assert list(summary["failed"]) == [0, 0, 3]  # fcfs_sleep without -E
    easy = frame[frame["scheduler"] == "easy"]
    assert summary.at["easy", "bsld_mean mean"] == pytest.approx(easy["bsld_mean"].mean())
    assert pd_isna(summary.at["fcfs_sleep", "bsld_mean mean"])


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_schedulers_side_by_side(table) -> None:
    _, frame = table
    pivot = scheduler_table(frame)
    assert list(pivot.columns) == ["easy", "fcfs"]  # (fcfs_sleep has no ok run)
    assert len(pivot) == 3  # delays_small, and the generated workload with seeds 1 and 2
    row = pivot.loc[[i for i in pivot.index if "delays_small" in i][0]]
    by_sched = frame[frame["workload"] == "delays_small"].set_index("scheduler")["bsld_mean"]
    assert row["easy"] == by_sched["easy"] and row["fcfs"] == by_sched["fcfs"]


def test_report_page(table) -> None:
    root, frame = table
    page = Path(write_campaign_report(frame, str(root), "small")).read_text()
    assert "<h1>batsim-py campaign small</h1>" in page
    assert "9 runs: 6 ok, 3 failed, 0 timed out, 0 not run yet" in page
    assert "<h2>By scheduler</h2>" in page and "<h2>By seed</h2>" in page
    assert "<h2>By replication</h2>" not in page  # one replication: nothing to compare
    assert "<h2>Failed and timed-out runs</h2>" in page and "needs the energy model" in page
