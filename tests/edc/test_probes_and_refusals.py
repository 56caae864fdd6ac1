"""Probes (Power = cumulative energy, §2.8.4) and what Batsim 5.0 refuses (§5.2 item 6)."""

from __future__ import annotations

import json

import pytest

from batsim_py.errors import NotSupportedError, SchedulerError, WorkloadError
from edc.examples import EXAMPLES
from edc.helpers import PROJECT, Recording, python_edc, run_edc


def _probe(aggregation="NoResourcesAggregation", metrics="Power", trigger="Periodic",
           reset="NoReset", nb=3):
    body = json.loads(json.dumps(EXAMPLES["create_probe"]["events"][0]["event"]))
    body["metrics"] = metrics
    body["resources_aggregation_function_type"] = aggregation
    body["data_accumulation_strategy"]["reset_mode_type"] = reset
    body["data_accumulation_strategy"]["reset_mode"] = {} if reset == "NoReset" else {
        "new_value": 0.0}
    when = {"period": 10, "offset": 0, "time_unit": "Second",
            "mode_type": "FinitePeriodNumber", "mode": {"nb_periods": nb}}
    if trigger == "OneShot":
        when = {"time": 10, "time_unit": "Second"}
    body["measurement_triggering_policy"] = {"temporal_trigger_type": trigger,
                                             "temporal_trigger": when}
    return {"event_type": "CreateProbeEvent", "event": body}


def _run(tmp_path, first, energy=True):
    recording = Recording(python_edc("scripted"))
    run_edc(recording, tmp_path / "out", platform="platforms/energy8.xml", energy=energy,
            init=json.dumps({"first": first}).encode())
    return [(item["timestamp"], item["event"])
            for data in recording.sent
            for item in json.loads(data.rstrip(b"\0"))["events"]
            if item["event_type"] == "ProbeDataEmittedEvent"]


@pytest.mark.parametrize("aggregation, expected", [
    ("NoResourcesAggregation", lambda t: {"data": [95.0 * t] * 4}),
    ("Sum", lambda t: {"data": 4 * 95.0 * t}),
    ("ArithmeticMean", lambda t: {"data": 95.0 * t}),
])
def test_power_probe_emits_cumulative_host_energy_from_the_second_period(
        tmp_path, aggregation, expected):
    """energy8.xml's idle hosts draw 95 W at pstate 0 and every job is rejected: the energy
    of a host at time t is 95 t joules. The trigger at t=10 only initialises."""
    emitted = _run(tmp_path, [_probe(aggregation)])
    assert [round(t, 3) for t, _ in emitted] == [20.0, 30.0, 40.0]
    for t, event in emitted:
        assert event["probe_id"] == "energy" and event["metrics"] == "Power"
        assert event["resources"] == {"host_ids": "0-3"}
        got = event["data"]["data"]
        want = expected(round(t))["data"]
        assert got == pytest.approx(want, rel=1e-6)


def test_stopped_probe_emits_nothing_more(tmp_path):
    stop = {"event_type": "StopProbeEvent", "event": {"probe_id": "energy"}}
    assert _run(tmp_path, [_probe(nb=5), stop]) == []


@pytest.mark.parametrize("first, error, message", [
    ([{"event_type": "TriggerProbeEvent", "event": {"probe_id": "energy"}}],
     NotSupportedError, "TriggerProbeEvent is not implemented by Batsim 5.0"),
    ([{"event_type": "ResetProbeEvent", "event": {"probe_id": "energy", "new_value": 0.0}}],
     NotSupportedError, "ResetProbeEvent is not implemented by Batsim 5.0"),
    ([_probe(metrics="ComputationLoad")], NotSupportedError,
     "ComputationLoad probes are not implemented"),
    ([_probe(trigger="OneShot")], NotSupportedError, "non-periodic probes"),
    ([_probe(reset="ProbeAccumulationReset")], NotSupportedError, "NoReset"),
    ([_probe(aggregation="QuantileFunction")], NotSupportedError, "QuantileFunction"),
])
def test_unsupported_events_are_refused_clearly(tmp_path, first, error, message):
    with pytest.raises(error, match=message):
        _run(tmp_path, first)


def test_power_probe_needs_the_energy_model(tmp_path):
    with pytest.raises(SchedulerError, match="-E/--energy"):
        _run(tmp_path, [_probe()], energy=False)


def test_fork_join_profile_in_a_workload_is_refused(tmp_path):
    workload = tmp_path / "fj.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 0, "subtime": 0, "res": 1, "profile": "fj"}], "profiles": {
        "fj": {"type": "ForkJoinCompositionProfile", "profile_ids": ["a"]},
        "a": {"type": "DelayProfile", "delay": 1}}}))
    with pytest.raises(WorkloadError, match="ForkJoinCompositionProfile is not implemented by "
                                            "Batsim 5.0"):
        run_edc(python_edc("scripted"), tmp_path / "out", workload=str(workload))


def test_batsim5_profile_names_give_the_batsim4_outputs(tmp_path):
    """The same workload with 4.x and 5.x profile type names: identical outputs."""
    v4 = {"delay_5": {"type": "delay", "delay": 5},
          "ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6},
          "pht": {"type": "parallel_homogeneous_total", "cpu": 2e9, "com": 0},
          "pt": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 1e6, 1e6, 0]},
          "seq": {"type": "composed", "repeat": 2, "seq": ["delay_5", "ph"]}}
    v5 = {"delay_5": {"type": "DelayProfile", "delay": 5},
          "ph": {"type": "ParallelTaskHomogeneousProfile", "cpu": 1e9, "com": 1e6},
          "pht": {"type": "ParallelTaskHomogeneousProfile", "cpu": 2e9, "com": 0,
                  "generation_strategy": "DefinedAmountsSpreadUniformly"},
          "pt": {"type": "ParallelTaskProfile", "cpu": [1e9, 2e9], "com": [0, 1e6, 1e6, 0]},
          "seq": {"type": "SequentialCompositionProfile", "repeat": 2,
                  "seq": ["delay_5", "ph"]}}
    jobs = [{"id": i, "subtime": i, "res": 2, "profile": p}
            for i, p in enumerate(["delay_5", "ph", "pht", "pt", "seq"])]
    for name, profiles in (("v4", v4), ("v5", v5)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
        run_edc(python_edc("batsim_py.edcs.fcfs"), tmp_path / name, workload=str(path))
    assert (tmp_path / "v4_jobs.csv").read_text() == (tmp_path / "v5_jobs.csv").read_text()


def test_force_simulation_stop(tmp_path):
    """Stopped at t=100: the jobs submitted (and rejected) before are in jobs.csv, the later
    ones are not; the EDC is told SimulationEndsEvent last."""
    recording = Recording(python_edc("scripted"))
    first = [{"event_type": "CallMeLaterEvent", "event": {
        "call_me_later_id": "stop", "when_type": "OneShot",
        "when": {"time": 100, "time_unit": "Second"}}}]
    sim = run_edc(recording, tmp_path / "out", init=json.dumps(
        {"first": first, "stop_on_call": True}).encode())
    assert sim.stopped and 100.0 <= sim.engine.now < 100.01
    workload = json.loads((PROJECT / "workloads/delays_small.json").read_text())
    subtimes = [j["subtime"] for j in workload["jobs"]]
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()[1:]
    assert len(rows) == sum(1 for t in subtimes if t < 100) < len(subtimes)
    last = json.loads(recording.sent[-1].rstrip(b"\0"))
    assert [e["event_type"] for e in last["events"]] == ["SimulationEndsEvent"]
