"""Storage profiles on a hand-built platform (times worked out by hand from the L07 model)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

# node0, node1 and a storage host pfs0, each behind its own 100 MB/s, 100 us link to a switch.
PLATFORM = """<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="node0" speed="1Gf"/><host id="node1" speed="1Gf"/>
  <host id="pfs0" speed="1Gf"><prop id="role" value="storage"/></host>
  <link id="l0" bandwidth="100MBps" latency="100us"/>
  <link id="l1" bandwidth="100MBps" latency="100us"/>
  <link id="ls" bandwidth="100MBps" latency="100us"/>
  <link id="lm" bandwidth="1GBps" latency="0us"/>
  <route src="node0" dst="pfs0"><link_ctn id="l0"/><link_ctn id="ls"/></route>
  <route src="node1" dst="pfs0"><link_ctn id="l1"/><link_ctn id="ls"/></route>
  <route src="node0" dst="node1"><link_ctn id="l0"/><link_ctn id="l1"/></route>
  <route src="master_host" dst="node0"><link_ctn id="lm"/></route>
  <route src="master_host" dst="node1"><link_ctn id="lm"/></route>
  <route src="master_host" dst="pfs0"><link_ctn id="lm"/></route>
</zone></platform>
"""


class Start(DecisionProcess):
    def __init__(self, alloc: tuple[int, ...], storage: dict | None) -> None:
        self.alloc, self.storage = alloc, storage

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        return d.Reply(now, tuple(
            d.ExecuteJob(now, e.job_id, self.alloc, storage_mapping=self.storage)
            for e in events if isinstance(e, ev.JobSubmitted)
        ))


def run(tmp_path: Path, res: int, profile: dict, alloc: tuple[int, ...],
        storage: dict | None) -> dict:
    (tmp_path / "p.xml").write_text(PLATFORM)
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": res, "profile": "p"}],
        "profiles": {"p": profile},
    }))
    run_simulation(RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                           Options(export_prefix=str(tmp_path / "out"), timing="ideal")),
                   Start(alloc, storage))
    with open(tmp_path / "out_jobs.csv") as f:
        return next(csv.DictReader(f))


def test_pfs_write_shares_the_storage_link(tmp_path: Path) -> None:
    """2 executors each write 1e8 B to pfs0: both cross link ls (1e8 B/s), so it carries
    2e8 B at 1e8 B/s: 2 s, after the 200 us route latency."""
    row = run(tmp_path, 2, {"type": "parallel_homogeneous_pfs", "bytes_to_write": 1e8},
              (0, 1), None)  # the only storage machine is used by default
    assert row["execution_time"] == "%f" % (200e-6 + 2.0)


def test_data_staging_between_storage_machines_needs_a_mapping(tmp_path: Path) -> None:
    """1e8 B from pfs0 to itself over its self route (SimGrid's loopback: 10 GB/s)."""
    row = run(tmp_path, 1, {"type": "data_staging", "nb_bytes": 1e8, "from": "a", "to": "b"},
              (0,), {"a": 2, "b": 2})
    assert row["execution_time"] == "%f" % (1e8 / 10e9)
    with pytest.raises(SchedulerError, match="no storage machine for label 'a'"):
        run(tmp_path, 1, {"type": "data_staging", "nb_bytes": 1, "from": "a", "to": "b"},
            (0,), None)
