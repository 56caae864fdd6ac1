"""One example message per event type of the seed schema, written by hand from the schema
(seed 002) and seed-systems §2.5/§2.7 (field names, union `x_type` + `x`, enums by name).

Not copied from any output of batsim-py: the JSON tests check that flatc accepts each of them
with the seed schema and prints them back as our writer does, and that our reader returns
them (with the schema's defaults filled in).
"""

from __future__ import annotations

from typing import Any


def msg(now: float, kind: str, event: dict[str, Any], t: float | None = None
        ) -> dict[str, Any]:
    return {"now": now, "events": [{"timestamp": now if t is None else t,
                                    "event_type": kind, "event": event}]}


HOST = {"id": 0, "name": "node0", "pstate": 0, "pstate_count": 2, "state": "IDLE",
        "properties": [{"key": "role", "value": "compute_node"}], "zone_properties": [],
        "core_count": 4, "computation_speed": [1e9, 5e8]}
PLACEMENT = {"executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
             "executor_placement": {"strategy": "FillOneHostCoresFirst"}}
ATOMIC = {"kill_progress_type": "KillProgressAtomicProfile",
          "kill_progress": {"profile_id": "w0!p1", "progress": 0.25}}

EXAMPLES: dict[str, dict[str, Any]] = {
    "job_submitted": msg(10.0, "JobSubmittedEvent", {
        "job_id": "w0!1",
        "job": {"resource_request": 4, "walltime": 3600.0, "extra_data": '{"user":"a"}',
                "profile_id": "w0!delay_10"},
        "submission_time": 10.0,
        "profile": {"id": "w0!delay_10", "profile_type": "DelayProfile",
                    "profile": {"delay": 10.0}}}),
    "job_submitted_no_walltime": msg(0.5, "JobSubmittedEvent", {
        "job_id": "w0!2", "job": {"resource_request": 1, "profile_id": "p"},
        "submission_time": 0.5}),
    "job_completed": msg(42.0, "JobCompletedEvent", {
        "job_id": "w0!1", "state": "COMPLETED_FAILED", "return_code": 3}),
    "reject_job": msg(1.0, "RejectJobEvent", {"job_id": "w0!7"}),
    "execute_job": msg(3.0, "ExecuteJobEvent", {
        "job_id": "w0!1",
        "allocation": {"host_allocation": "0-3 7", **PLACEMENT},
        "profile_allocation_override": [{"profile_id": "w0!sub", "host_allocation": "1",
                                         "executor_placement_type":
                                             "CustomExecutorToHostMapping",
                                         "executor_placement": {"mapping": [0, 0]}}],
        "storage_placement": [{"storage_name": "pfs", "host_id": 8}]}),
    "kill_jobs": msg(5.0, "KillJobsEvent", {"job_ids": ["w0!1", "w0!2"]}),
    "jobs_killed": msg(6.0, "JobsKilledEvent", {
        "job_ids": ["w0!1"],
        "progresses": [{"job_id": "w0!1", "wrapper": {
            "kill_progress_type": "KillProgressSequentialProfile",
            "kill_progress": {"profile_id": "w0!seq", "current_repetition": 1,
                              "current_task_index": 2, "current_task_progress": ATOMIC}}}]}),
    "register_profile": msg(2.0, "RegisterProfileEvent", {"profile": {
        "id": "dyn!ptask", "profile_type": "ParallelTaskProfile",
        "profile": {"computation_vector": [1e9, 1e9],
                    "communication_matrix": [0.0, 1e6, 1e6, 0.0]},
        "extra_data": "x"}}),
    "register_job": msg(2.0, "RegisterJobEvent", {
        "job_id": "dyn!1", "job": {"resource_request": 2, "profile_id": "dyn!ptask"}}),
    "create_probe": msg(0.0, "CreateProbeEvent", {
        "probe_id": "energy", "metrics": "Power",
        "resources_type": "HostResources", "resources": {"host_ids": "0-3"},
        "data_accumulation_strategy_type": "ProbeDataAccumulation",
        "data_accumulation_strategy": {"reset_mode_type": "NoReset", "reset_mode": {},
                                       "cumulative_function": "Sum",
                                       "temporal_normalization": False},
        "measurement_triggering_policy_type": "TemporalTriggerWrapper",
        "measurement_triggering_policy": {
            "temporal_trigger_type": "Periodic",
            "temporal_trigger": {"period": 60, "offset": 0, "time_unit": "Second",
                                 "mode_type": "Infinite", "mode": {}}},
        "resources_aggregation_function_type": "Sum",
        "resources_aggregation_function": {},
        "temporal_aggregation_function_type": "NoTemporalAggregation",
        "temporal_aggregation_function": {},
        "emission_filtering_policy_type": "NoFiltering", "emission_filtering_policy": {}}),
    "stop_probe": msg(1.0, "StopProbeEvent", {"probe_id": "energy"}),
    "trigger_probe": msg(1.0, "TriggerProbeEvent", {"probe_id": "energy"}),
    "reset_probe": msg(1.0, "ResetProbeEvent", {"probe_id": "energy", "new_value": 0.0}),
    "probe_data": msg(120.0, "ProbeDataEmittedEvent", {
        "probe_id": "energy", "resources_type": "LinkResources",
        "resources": {"link_ids": ["l1", "l2"]}, "metrics": "NetworkLoad",
        "data_type": "AggregatedProbeData", "data": {"data": 1234.5}, "nb_emitted": 2}),
    "call_me_later_oneshot": msg(0.0, "CallMeLaterEvent", {
        "call_me_later_id": "wake", "when_type": "OneShot",
        "when": {"time": 1500, "time_unit": "Millisecond"}}),
    "call_me_later_periodic": msg(0.0, "CallMeLaterEvent", {
        "call_me_later_id": "tick", "when_type": "Periodic",
        "when": {"period": 20, "mode_type": "FinitePeriodNumber",
                 "mode": {"nb_periods": 5}}}),
    "requested_call": msg(20.0, "RequestedCallEvent", {"call_me_later_id": "tick",
                                                       "last_periodic_call": True}),
    "stop_call_me_later": msg(30.0, "StopCallMeLaterEvent", {"call_me_later_id": "tick"}),
    "edc_hello": msg(0.0, "EDCHelloEvent", {
        "batprotocol_version": "0.1.0", "decision_component_name": "test",
        "decision_component_version": "1.0", "decision_component_commit": "abc",
        "requested_simulation_features": {"dynamic_registration": True,
                                          "acknowledge_dynamic_jobs": True}}),
    "simulation_begins": msg(0.0, "SimulationBeginsEvent", {
        "batprotocol_version": "0.1.0", "batsim_version": "5.0.0",
        "host_number": 2, "computation_host_number": 1, "computation_hosts": [HOST],
        "storage_host_number": 1,
        "storage_hosts": [{"id": 1, "name": "pfs", "computation_speed": [1e9],
                           "properties": [{"key": "role", "value": "storage"}]}],
        "batsim_arguments": ["batsim", "-p", "p.xml"],
        "batsim_execution_context_json": "{}",
        "workloads": [{"name": "w0", "filename": "w.json"}],
        "external_event_lists": []}),
    "simulation_ends": msg(99.0, "SimulationEndsEvent", {}),
    "simulation_error": msg(99.0, "SimulationErrorEvent", {"error": "boom"}),
    "all_static_jobs": msg(3.0, "AllStaticJobsHaveBeenSubmittedEvent", {}),
    "all_static_external": msg(3.0, "AllStaticExternalEventsHaveBeenInjectedEvent", {}),
    "finish_registration": msg(4.0, "FinishRegistrationEvent", {}),
    "force_stop": msg(4.0, "ForceSimulationStopEvent", {}),
    "change_pstate": msg(5.0, "ChangeHostsPStateEvent", {"host_ids": "0-3", "pstate": 1}),
    "pstate_changed": msg(5.0, "HostsPStateChangedEvent", {"host_ids": "0-3", "pstate": 1}),
    "turn_on_off": msg(5.0, "TurnOnOffHostsEvent", {"host_ids": "2", "state": 2}),
    "turned_on_off": msg(10.0, "HostsTurnedOnOffEvent", {"host_ids": "2", "state": 2}),
    "external_event": msg(7.0, "ExternalEventOccurredEvent", {
        "id": "e1", "external_event_type": "GenericExternalEvent",
        "external_event": {"data": "{\"a\": [1, 2]}"}}),
}
