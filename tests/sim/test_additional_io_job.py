"""EXECUTE_JOB's additional_io_job (Batsim 4.2.1's merge of an IO profile into the job's
parallel tasks). Durations are worked out by hand from the L07 model, with --timing ideal."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import ProtocolError, SchedulerError
from batsim_py.protocol.replies import decode_reply, encode_reply
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

# Three 1 Gf nodes (ids 0, 1, 2) and a storage node (id 3), all on one 50 MB/s, 1 ms link.
PLATFORM = """<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="n0" speed="1Gf"/><host id="n1" speed="1Gf"/><host id="n2" speed="1Gf"/>
  <host id="s3" speed="1Gf"><prop id="role" value="storage"/></host>
  <link id="l" bandwidth="50MBps" latency="1ms"/>
  <route src="n0" dst="n1"><link_ctn id="l"/></route>
  <route src="n0" dst="n2"><link_ctn id="l"/></route>
  <route src="n1" dst="n2"><link_ctn id="l"/></route>
  <route src="n0" dst="s3"><link_ctn id="l"/></route>
  <route src="n1" dst="s3"><link_ctn id="l"/></route>
  <route src="n2" dst="s3"><link_ctn id="l"/></route>
</zone></platform>
"""

PROFILES = {
    "compute": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
    "seq": {"type": "composed", "seq": ["compute", "compute"]},
    "io_write": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e8, 0, 0]},
    "io_seq": {"type": "composed", "seq": ["io_write", "io_none"]},
    "io_none": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
    "delay": {"type": "delay", "delay": 3},
    # Batsim keeps only the profiles a job uses: job 2 (rejected) keeps the IO ones.
    "holder": {"type": "composed", "seq": ["io_write", "io_seq", "io_none"]},
}


class StartWithIO(DecisionProcess):
    def __init__(self, alloc: tuple[int, ...], io: d.AdditionalIOJob) -> None:
        self.alloc, self.io = alloc, io

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        return d.Reply(now, tuple(
            d.ExecuteJob(now, e.job_id, self.alloc, additional_io_job=self.io)
            if e.job_id == "w0!1" else d.RejectJob(now, e.job_id)
            for e in events if isinstance(e, ev.JobSubmitted)))


def run(tmp_path: Path, profile: str, alloc: tuple[int, ...], io: d.AdditionalIOJob,
        res: int = 2) -> dict:
    (tmp_path / "p.xml").write_text(PLATFORM)
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": res, "profile": profile},
                              {"id": 2, "subtime": 0, "res": 1, "profile": "holder"}],
        "profiles": PROFILES}))
    run_simulation(RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                           Options(export_prefix=str(tmp_path / "out"), timing="ideal")),
                   StartWithIO(alloc, io))
    with open(tmp_path / "out_jobs.csv") as f:
        return next(row for row in csv.DictReader(f) if row["job_id"] == "1")


def test_without_io_the_job_computes_one_second(tmp_path: Path) -> None:
    io = d.AdditionalIOJob("io_none", (0, 1))
    assert float(run(tmp_path, "compute", (0, 1), io)["finish_time"]) == 1.0


def test_io_on_other_machines_is_merged_into_the_task(tmp_path: Path) -> None:
    """Job on 0-1 (1e9 flops each); IO on machines 1 and 3: 1e8 B from 1 to 3. The merged task
    over 0, 1, 3 waits the 1 ms latency, then the 50 MB/s link caps it: 1e8 B in 2 s."""
    io = d.AdditionalIOJob("io_write", (1, 3))
    row = run(tmp_path, "compute", (0, 1), io)
    assert float(row["finish_time"]) == pytest.approx(2.001, abs=1e-9)
    assert row["allocated_resources"] == "0-1"  # the IO machines are not the job's


def test_an_existing_profile_can_be_the_io(tmp_path: Path) -> None:
    """IO 'compute' (1e9 flops per IO machine) on 1-2: machine 1 then computes 2e9: 2 s."""
    io = d.AdditionalIOJob("compute", (1, 2))
    assert float(run(tmp_path, "compute", (0, 1), io)["finish_time"]) == 2.0


def test_io_profile_given_in_the_decision_is_registered(tmp_path: Path) -> None:
    io = d.AdditionalIOJob("io_new", (0, 2),
                           {"type": "parallel", "cpu": [0, 5e8], "com": [0, 0, 5e7, 0]})
    # Merged over 0, 1, 2: flops [1e9, 1e9, 5e8] -> 1 s; 5e7 B from 2 to 0 -> 1 s (+1 ms).
    assert float(run(tmp_path, "compute", (0, 1), io)["finish_time"]) == pytest.approx(1.001)


def test_sequences_pair_their_profiles(tmp_path: Path) -> None:
    """First compute merged with io_write (2.001 s), second with io_none (1 s)."""
    io = d.AdditionalIOJob("io_seq", (1, 3))
    row = run(tmp_path, "seq", (0, 1), io)
    assert float(row["finish_time"]) == pytest.approx(3.001, abs=1e-9)


def test_delay_leaves_ignore_their_io(tmp_path: Path) -> None:
    io = d.AdditionalIOJob("io_write", (1, 3))
    assert float(run(tmp_path, "delay", (0, 1), io)["finish_time"]) == 3.0


@pytest.mark.parametrize(("profile", "io", "message"), [
    ("compute", d.AdditionalIOJob("nope", (1, 3)), "does not exist"),
    ("compute", d.AdditionalIOJob("compute", (1, 3), {"type": "delay", "delay": 1}),
     "already exists"),
    ("compute", d.AdditionalIOJob("io_seq", (1, 3)), "is a sequence"),
    ("seq", d.AdditionalIOJob("io_write", (1, 3)), "not a sequence"),
    ("compute", d.AdditionalIOJob("io_c", (0, 3), {"type": "parallel", "cpu": [0, 1e6],
                                                  "com": [0, 0, 0, 0]}),
     "not a compute machine"),
    ("compute", d.AdditionalIOJob("io_d", (1, 3), {"type": "delay", "delay": 1}),
     "must be parallel"),
    ("compute", d.AdditionalIOJob("io_write", (1, 2, 3)), "IO alloc has 3 machines"),
])
def test_bad_io_jobs_are_refused(tmp_path: Path, profile: str, io: d.AdditionalIOJob,
                                 message: str) -> None:
    with pytest.raises(SchedulerError, match=message):  # noqa: PT012
        run(tmp_path, profile, (0, 1), io)


def test_protocol_reads_and_writes_additional_io_job() -> None:
    text = json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {
        "job_id": "w0!1", "alloc": "2-3",
        "additional_io_job": {"alloc": "2-3 5-6", "profile_name": "my_io_job", "profile": {
            "type": "parallel", "cpu": 0, "com": [0, 5e6, 5e6, 5e6, 5e6, 0, 5e6, 0, 0,
                                                  5e6, 4e6, 0, 0, 0, 0, 0]}}}}]})
    reply = decode_reply(text)
    execute, = reply.decisions
    assert isinstance(execute, d.ExecuteJob)
    io = execute.additional_io_job
    assert io is not None and io.profile_name == "my_io_job" and io.alloc == (2, 3, 5, 6)
    assert decode_reply(encode_reply(reply)) == reply


@pytest.mark.parametrize("io", [
    {"alloc": "1"}, {"profile_name": 3, "alloc": "1"}, {"profile_name": "x"},
    {"profile_name": "x", "alloc": "1", "profile": []}, "x",
])
def test_protocol_refuses_malformed_additional_io_job(io: object) -> None:
    text = json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, "type": "EXECUTE_JOB",
                                               "data": {"job_id": "w0!1", "alloc": "0",
                                                        "additional_io_job": io}}]})
    with pytest.raises(ProtocolError, match="additional_io_job"):
        decode_reply(text)
