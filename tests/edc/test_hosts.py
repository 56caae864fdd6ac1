"""Host on/off and pstate changes (§5.2 item 5, after Batsim 5's machine-switcher and
exec1by1-dvfs-dyn), and the energy of a schedule against the Batsim-4-protocol run of it."""

from __future__ import annotations

import json

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options
from edc.helpers import PROJECT, Recording, python_edc, run_edc

ONE_JOB = {"nb_res": 8, "jobs": [{"id": 0, "subtime": 0, "res": 1, "walltime": 1000,
                                  "profile": "flops"}],
           "profiles": {"flops": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}}}


def _events(recording):
    """(timestamp, type, event) of everything batsim-py sent, in order."""
    out = []
    for data in recording.sent:
        for item in json.loads(data.rstrip(b"\0"))["events"]:
            out.append((item["timestamp"], item["event_type"], item["event"]))
    return out


def test_turn_off_pstate_change_and_turn_on_acknowledgements(tmp_path):
    recording = Recording(python_edc("switcher"))
    run_edc(recording, tmp_path / "out", platform="platforms/energy8.xml", energy=True)
    acks = [(t, k, e) for t, k, e in _events(recording)
            if k in ("HostsTurnedOnOffEvent", "HostsPStateChangedEvent")]
    assert [(k, e) for _, k, e in acks] == [
        ("HostsTurnedOnOffEvent", {"host_ids": "0-3", "state": 2}),
        ("HostsPStateChangedEvent", {"host_ids": "4-7", "pstate": 1}),
        ("HostsTurnedOnOffEvent", {"host_ids": "0-3", "state": 0}),
    ]
    off, pstate, on = (t for t, _, _ in acks)
    # energy8.xml: switching off is 1 flop at 0.2 flop/s (5 s), on 1 flop at 0.05 (20 s)
    assert 5.0 <= off < 5.001
    # the pstate change takes effect at once: acknowledged in the very next message
    assert pstate - off < 0.001
    assert 20.0 <= on - pstate < 20.001


class SameSchedule(DecisionProcess):
    """The switcher EDC's decisions as a Batsim 4 in-process scheduler."""

    def exchange(self, now, events):
        out = []
        for e in events:
            if isinstance(e, ev.SimulationBegins):
                out.append(d.SetResourceState(now, (0, 1, 2, 3), 2))
            elif isinstance(e, ev.ResourceStateChanged) and e.state == "2":
                out.append(d.SetResourceState(now, (4, 5, 6, 7), 1))
            elif isinstance(e, ev.ResourceStateChanged) and e.resources == (4, 5, 6, 7):
                out.append(d.SetResourceState(now, (0, 1, 2, 3), 0))
            elif isinstance(e, ev.JobSubmitted):
                out.append(d.ExecuteJob(now, e.job_id, (4,)))
        return d.Reply(now, tuple(out))


def test_energy_equals_batsim4_energy_for_the_same_schedule(tmp_path):
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    run_edc(python_edc("switcher"), tmp_path / "v5", platform="platforms/energy8.xml",
            workload=str(workload), energy=True)
    spec = RunSpec(platform=str(PROJECT / "platforms/energy8.xml"), workloads=[str(workload)],
                   options=Options(export_prefix=str(tmp_path / "v4"), energy=True))
    run_simulation(spec, InProcess(SameSchedule()))
    for name in ("consumed_energy.csv", "pstate_changes.csv", "jobs.csv",
                 "machine_states.csv"):
        assert (tmp_path / f"v5_{name}").read_text() == (tmp_path / f"v4_{name}").read_text(), \
            name


def test_dvfs_on_a_busy_host_re_speeds_its_job_at_once(tmp_path):
    """10 Gflop on a 1 Gf host, slowed to 500 Mf at t=5: 5 s + 5 Gflop / 0.5 Gf = 15 s."""
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    run_edc(python_edc("switcher"), tmp_path / "out", platform="platforms/energy8.xml",
            workload=str(workload), energy=True, init=b'{"dvfs_at": 5}')
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    header = rows[0].split(",")
    job = dict(zip(header, rows[1].split(","), strict=True))
    assert float(job["execution_time"]) == pytest.approx(15.0, abs=1e-3)


def test_switches_need_the_energy_model(tmp_path):
    with pytest.raises(SchedulerError, match="-E"):
        run_edc(python_edc("switcher"), tmp_path / "out", platform="platforms/energy8.xml")


def test_pstate_changes_need_no_energy_model(tmp_path):
    """Batsim 5 changes a host's pstate without its energy plugin (research §2.7): the DVFS
    run above without -E, the same hand-computed 15 s; acknowledged at once, no energy file."""
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    recording = Recording(python_edc("switcher"))
    run_edc(recording, tmp_path / "out", platform="platforms/energy8.xml",
            workload=str(workload), init=b'{"dvfs_at": 5}')
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    job = dict(zip(rows[0].split(","), rows[1].split(","), strict=True))
    assert float(job["execution_time"]) == pytest.approx(15.0, abs=1e-3)
    acks = [(t, e) for t, k, e in _events(recording) if k == "HostsPStateChangedEvent"]
    assert [e for _, e in acks] == [{"host_ids": "4", "pstate": 1}]
    assert 5.0 <= acks[0][0] < 5.001
    assert not (tmp_path / "out_consumed_energy.csv").exists()


def test_a_pstate_the_host_lacks_is_an_error_without_the_energy_model(tmp_path):
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    with pytest.raises(SchedulerError, match=r"ChangeHostsPStateEvent at t=5\.\d+: host 4 "
                       r"\(node4\) has no pstate 9 \(pstates 0-4\)"):
        run_edc(python_edc("switcher"), tmp_path / "out", platform="platforms/energy8.xml",
                workload=str(workload), init=b'{"dvfs_at": 5, "dvfs_pstate": 9}')
