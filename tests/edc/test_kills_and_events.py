"""Kills (JobCompleted COMPLETED_KILLED, then JobsKilled with each job's progress) and
generic external events, with Batsim 5's forms."""

from __future__ import annotations

import json

import pytest

from edc.helpers import Recording, python_edc, run_edc

WORKLOAD = {"nb_res": 4, "jobs": [
    {"id": 0, "subtime": 0, "res": 1, "profile": "d100"},
    {"id": 1, "subtime": 0, "res": 2, "profile": "seq"},
    {"id": 2, "subtime": 0, "res": 1, "profile": "d5"}],
    "profiles": {"d100": {"type": "delay", "delay": 100}, "d5": {"type": "delay", "delay": 5},
                 "d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20},
                 "seq": {"type": "composed", "repeat": 2, "seq": ["d10", "d20"]}}}


def _sent(recording):
    return [(item["timestamp"], item["event_type"], item["event"])
            for data in recording.sent for item in json.loads(data.rstrip(b"\0"))["events"]]


def test_kills_report_completion_then_progress(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(WORKLOAD))
    recording = Recording(python_edc("killer"))
    run_edc(recording, tmp_path / "out", workload=str(workload),
            init=json.dumps({"kill_after": {"w0!0": 10, "w0!1": 55}}).encode())
    sent = _sent(recording)
    kinds = [(k, e.get("job_id") or e.get("job_ids")) for _, k, e in sent
             if k in ("JobCompletedEvent", "JobsKilledEvent")]
    assert kinds == [("JobCompletedEvent", "w0!2"),
                     ("JobCompletedEvent", "w0!0"), ("JobsKilledEvent", ["w0!0"]),
                     ("JobCompletedEvent", "w0!1"), ("JobsKilledEvent", ["w0!1"])]
    states = {e["job_id"]: e["state"] for _, k, e in sent if k == "JobCompletedEvent"}
    assert states == {"w0!2": "COMPLETED_SUCCESSFULLY", "w0!0": "COMPLETED_KILLED",
                      "w0!1": "COMPLETED_KILLED"}
    killed = [e for _, k, e in sent if k == "JobsKilledEvent"]
    atomic = killed[0]["progresses"][0]["wrapper"]
    assert atomic["kill_progress_type"] == "KillProgressAtomicProfile"
    assert atomic["kill_progress"]["profile_id"] == "w0!d100"
    assert atomic["kill_progress"]["progress"] == pytest.approx(0.1, abs=1e-4)
    # seq = (d10, d20) x 2, killed at t=55: second repetition, its d20 (index 1) 25/20 ...
    # 55 = 30 (first repetition) + 10 (d10) + 15 of d20: progress 0.75
    seq = killed[1]["progresses"][0]["wrapper"]
    assert seq["kill_progress_type"] == "KillProgressSequentialProfile"
    body = seq["kill_progress"]
    assert (body["profile_id"], body["current_repetition"], body["current_task_index"]) == \
        ("w0!seq", 1, 1)
    inner = body["current_task_progress"]
    assert inner["kill_progress_type"] == "KillProgressAtomicProfile"
    assert inner["kill_progress"]["profile_id"] == "w0!d20"
    assert inner["kill_progress"]["progress"] == pytest.approx(0.75, abs=1e-3)


def test_killed_jobs_profiles_forwarded_when_asked(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(WORKLOAD))
    recording = Recording(python_edc("killer"))
    run_edc(recording, tmp_path / "out", workload=str(workload),
            init=json.dumps({"kill_after": {"w0!0": 10}, "profiles": True}).encode())
    killed = [e for _, k, e in _sent(recording) if k == "JobsKilledEvent"]
    assert killed[0]["profiles"] == [{"id": "w0!d100", "profile_type": "DelayProfile",
                                      "profile": {"delay": 100.0}}]


def test_generic_external_events(tmp_path):
    events = tmp_path / "ev.jsonl"
    events.write_text('{"timestamp": 3, "type": "generic", "data": "{\\"power_cap\\": 50}"}\n'
                      '{"timestamp": 7, "type": "generic", "data": "second"}\n')
    from batsim_py.decision.edc_peer import EdcPeer, EdcSettings
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.sim.options import Options
    from edc.helpers import PROJECT

    recording = Recording(python_edc("batsim_py.edcs.fcfs"))
    spec = RunSpec(platform=str(PROJECT / "platforms/small4.xml"),
                   workloads=[str(PROJECT / "workloads/delays_small.json")],
                   options=Options(export_prefix=str(tmp_path / "o"),
                                   forward_unknown_events=True),
                   events=[str(events)])
    run_simulation(spec, EdcPeer(recording, EdcSettings(init_data=b"{}")))
    sent = _sent(recording)
    occurred = [(round(t, 3), e) for t, k, e in sent if k == "ExternalEventOccurredEvent"]
    assert occurred == [
        (3.0, {"id": "we0!0", "external_event_type": "GenericExternalEvent",
               "external_event": {"data": '{"power_cap": 50}'}}),
        (7.0, {"id": "we0!1", "external_event_type": "GenericExternalEvent",
               "external_event": {"data": "second"}})]
    assert any(k == "AllStaticExternalEventsHaveBeenInjectedEvent" for _, k, _ in sent)
    begins = next(e for _, k, e in sent if k == "SimulationBeginsEvent")
    assert begins["external_event_lists"] == [{"name": "we0", "filename": str(events)}]
