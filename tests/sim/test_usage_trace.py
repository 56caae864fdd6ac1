"""usage_trace profiles by hand: ranks replay `m_usage` lines on their hosts (§4.5)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import WorkloadError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

PLATFORM = """<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="n0" speed="1Gf" core="4"/><host id="n1" speed="1Gf" core="4"/>
</zone></platform>
"""


class StartAll(DecisionProcess):
    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        return d.Reply(now, tuple(d.ExecuteJob(now, e.job_id, (0, 1)) for e in events
                                  if isinstance(e, ev.JobSubmitted)))


def run(tmp_path: Path, rank0: str, rank1: str, walltime: float = -1) -> dict:
    (tmp_path / "p.xml").write_text(PLATFORM)
    (tmp_path / "r0.txt").write_text(rank0)
    (tmp_path / "r1.txt").write_text(rank1)
    (tmp_path / "trace.txt").write_text("r0.txt\nr1.txt\n")
    job = {"id": 1, "subtime": 0, "res": 2, "profile": "t"}
    if walltime > 0:
        job["walltime"] = walltime
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 2, "jobs": [job], "profiles": {"t": {"type": "usage_trace",
                                                        "trace": "trace.txt"}},
    }))
    run_simulation(RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                           Options(export_prefix=str(tmp_path / "out"), timing="ideal")),
                   StartAll())
    with open(tmp_path / "out_jobs.csv") as f:
        return next(csv.DictReader(f))


def test_ranks_run_in_parallel_each_line_on_its_cores(tmp_path: Path) -> None:
    """Rank 0 on n0: half of 4 cores -> 2 executors of 1e9 flops at 1 Gf/core: 1 s; then
    usage 0.1 -> one core (at least one): 2e9 flops: 2 s. Rank 1 on n1: 4 cores x 5e8: 0.5 s.
    The job lasts as long as its slowest rank: 3 s."""
    row = run(tmp_path, "0 m_usage 0.5 1e9\n0 m_usage 0.1 2e9\n", "1 m_usage 1.0 5e8\n")
    assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert row["execution_time"] == "3.000000"


def test_walltime_kills_the_ranks(tmp_path: Path) -> None:
    row = run(tmp_path, "0 m_usage 0.5 1e9\n0 m_usage 0.1 2e9\n", "1 m_usage 1.0 5e8\n",
              walltime=2)
    assert row["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert row["execution_time"] == "2.000000"


def test_bad_trace_line_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match=r"r1.txt:2: usage 1.5 is not in \[0, 1\]"):
        run(tmp_path, "0 m_usage 0.5 1e9\n", "1 m_usage 1.0 5e8\n1 m_usage 1.5 1\n")
