"""Batsim -> scheduler messages: typed events to Batsim's exact text and back.

Encoding must be byte-identical to Batsim 4.2.1 (schedulers and recorded transcripts are compared
byte for byte), so every data object is built with Batsim's key order (batsim-semantics.md §5.2,
checked against the reference transcripts) and written with `batsim_json`. Decoding is the inverse,
used by transcript replay and the tests; it validates enough to name a malformed field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from batsim_py import intervalset
from batsim_py.decision.events import (
    Answer,
    Event,
    FromJobMsg,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    Notify,
    ProgressNode,
    RequestedCall,
    Resource,
    ResourceStateChanged,
    SimulationBegins,
    SimulationEnds,
)
from batsim_py.errors import ProtocolError
from batsim_py.protocol import batsim_json
from batsim_py.protocol.records import job_from_json, profile_from_json
from batsim_py.workload.model import Job

# NOTIFY types that have a fixed layout; any other type is a forwarded external event whose
# whole object is the data.
_PLAIN_NOTIFY = ("no_more_static_job_to_submit", "no_more_external_event_to_occur")
_MACHINE_NOTIFY = ("event_machine_unavailable", "event_machine_available")


# ----------------------------------------------------------------------------------- encoding


def encode_batsim_message(now: float, events: Sequence[Event]) -> str:
    """The message Batsim would send: `{"now":..,"events":[..]}` in Batsim's text form."""
    parts = ['{"now":', batsim_json.number(float(now)), ',"events":[']
    for i, event in enumerate(events):
        if i:
            parts.append(",")
        kind, data = _event_data(event)
        parts.append('{"timestamp":')
        parts.append(batsim_json.number(float(event.timestamp)))
        parts.append(',"type":')
        parts.append(batsim_json.string(kind))
        parts.append(',"data":')
        parts.append(batsim_json.dumps(data))
        parts.append("}")
    parts.append("]}")
    return "".join(parts)


def event_object(event: Event) -> dict[str, Any]:
    """One event as a scheduler's JSON reader gets it from `encode_batsim_message`."""
    kind, data = _event_data(event)
    return {"timestamp": round(float(event.timestamp), 6), "type": kind,
            "data": batsim_json.as_parsed(data)}


def job_json(job: Job) -> dict[str, Any]:
    """The job object as Batsim forwards it: the workload's object, `id` set to the full id."""
    obj = dict(job.description)
    obj["id"] = job.id  # in place: an existing key keeps its position
    return obj


def _resource_json(r: Resource) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "state": r.state,
        "properties": dict(r.properties),
        "zone_properties": dict(r.zone_properties),
    }


def _progress_json(node: ProgressNode) -> dict[str, Any]:
    """The progress tree as JSON objects, built with a loop (composed profiles may nest
    thousands deep)."""
    root: dict[str, Any] = {}
    obj = root
    current: ProgressNode | None = node
    while current is not None:
        obj["profile_name"] = current.profile_name
        if current.progress is not None:
            obj["progress"] = float(current.progress)
            break
        obj["current_task_index"] = int(current.current_task_index
                                        if current.current_task_index is not None else -1)
        current = current.current_task
        if current is not None:
            obj["current_task"] = obj = {}
    return root


def _event_data(event: Event) -> tuple[str, Any]:
    if isinstance(event, JobSubmitted):
        data: dict[str, Any] = {"job_id": event.job.id, "job": job_json(event.job)}
        if event.profile is not None:
            data["profile"] = event.profile.description
        return "JOB_SUBMITTED", data
    if isinstance(event, JobCompleted):
        return "JOB_COMPLETED", {
            "job_id": event.job_id,
            "job_state": event.job_state,
            "return_code": int(event.return_code),
            "alloc": intervalset.format(event.alloc),
        }
    if isinstance(event, SimulationBegins):
        return "SIMULATION_BEGINS", {
            "nb_resources": event.nb_resources,
            "nb_compute_resources": event.nb_compute_resources,
            "nb_storage_resources": event.nb_storage_resources,
            "allow_compute_sharing": event.allow_compute_sharing,
            "allow_storage_sharing": event.allow_storage_sharing,
            "config": event.config,
            "compute_resources": [_resource_json(r) for r in event.compute_resources],
            "storage_resources": [_resource_json(r) for r in event.storage_resources],
            "workloads": event.workloads,
            "profiles": {
                wl: {name: p.description for name, p in profiles.items()}
                for wl, profiles in event.profiles.items()
            },
        }
    if isinstance(event, JobKilled):
        return "JOB_KILLED", {
            "job_ids": list(event.job_ids),
            "job_progress": {jid: _progress_json(n) for jid, n in event.job_progress.items()},
        }
    if isinstance(event, ResourceStateChanged):
        return "RESOURCE_STATE_CHANGED", {
            "resources": intervalset.format(event.resources),
            "state": str(event.state),
        }
    if isinstance(event, RequestedCall):
        return "REQUESTED_CALL", {}
    if isinstance(event, Notify):
        if event.data is not None:
            return "NOTIFY", event.data
        obj = {"type": event.type}
        if event.resources is not None:
            obj["resources"] = intervalset.format(event.resources)
        return "NOTIFY", obj
    if isinstance(event, Answer):
        return "ANSWER", {"consumed_energy": float(event.consumed_energy)}
    if isinstance(event, FromJobMsg):
        return "FROM_JOB_MSG", {"job_id": event.job_id, "msg": event.msg}
    if isinstance(event, SimulationEnds):
        return "SIMULATION_ENDS", {}
    raise TypeError(f"not a Batsim event: {event!r}")


# ----------------------------------------------------------------------------------- decoding


def decode_batsim_message(text: str | bytes) -> tuple[float, list[Event]]:
    """Parse a Batsim -> scheduler message into its `now` and typed events."""
    try:
        msg = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"Batsim message: not valid JSON: {exc}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("Batsim message: not a JSON object")
    now = _number(msg.get("now"), "Batsim message: 'now'")
    raw_events = msg.get("events")
    if not isinstance(raw_events, list):
        raise ProtocolError("Batsim message: 'events' is not an array")
    events: list[Event] = []
    for i, raw in enumerate(raw_events):
        if not isinstance(raw, dict):
            raise ProtocolError(f"Batsim message: event {i} is not an object")
        kind = raw.get("type")
        where = f"Batsim message: event {i} ({kind})"
        if not isinstance(kind, str) or kind not in _DECODERS:
            raise ProtocolError(f"Batsim message: event {i}: unknown type {kind!r}")
        ts = _number(raw.get("timestamp"), f"{where}: 'timestamp'")
        data = raw.get("data")
        if not isinstance(data, dict):
            raise ProtocolError(f"{where}: 'data' is not an object")
        try:
            events.append(_DECODERS[kind](ts, data, where))
        except KeyError as exc:
            raise ProtocolError(f"{where}: missing field {exc}") from None
    return now, events


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(f"{where} is not a number ({value!r})")
    return float(value)


def _ids(text: Any, where: str) -> tuple[int, ...]:
    if not isinstance(text, str):
        raise ProtocolError(f"{where} is not an interval set string ({text!r})")
    try:
        return intervalset.parse(text)
    except ValueError as exc:
        raise ProtocolError(f"{where} is not an interval set ({text!r}): {exc}") from None


def _resource(obj: Any, where: str) -> Resource:
    if not isinstance(obj, dict):
        raise ProtocolError(f"{where}: resource is not an object")
    return Resource(
        id=obj["id"],
        name=obj["name"],
        state=obj["state"],
        properties=obj["properties"],
        zone_properties=obj["zone_properties"],
    )


def _simulation_begins(ts: float, d: dict[str, Any], where: str) -> SimulationBegins:
    profiles = {
        wl: {name: profile_from_json(name, p, where=where) for name, p in profs.items()}
        for wl, profs in d["profiles"].items()
    }
    return SimulationBegins(
        timestamp=ts,
        nb_resources=d["nb_resources"],
        nb_compute_resources=d["nb_compute_resources"],
        nb_storage_resources=d["nb_storage_resources"],
        allow_compute_sharing=d["allow_compute_sharing"],
        allow_storage_sharing=d["allow_storage_sharing"],
        config=d["config"],
        compute_resources=tuple(_resource(r, where) for r in d["compute_resources"]),
        storage_resources=tuple(_resource(r, where) for r in d["storage_resources"]),
        workloads=d["workloads"],
        profiles=profiles,
    )


def _job_submitted(ts: float, d: dict[str, Any], where: str) -> JobSubmitted:
    job = job_from_json(d["job"], where=where)
    if job.id != d["job_id"]:
        raise ProtocolError(f"{where}: 'job_id' {d['job_id']!r} differs from job id {job.id!r}")
    profile = None
    if "profile" in d:
        profile = profile_from_json(job.profile, d["profile"], where=where)
    return JobSubmitted(timestamp=ts, job=job, profile=profile)


def _job_completed(ts: float, d: dict[str, Any], where: str) -> JobCompleted:
    return JobCompleted(
        timestamp=ts,
        job_id=d["job_id"],
        job_state=d["job_state"],
        return_code=d["return_code"],
        alloc=_ids(d["alloc"], f"{where}: field 'alloc'"),
    )


def _progress(obj: Any, where: str) -> ProgressNode:
    if not isinstance(obj, dict):
        raise ProtocolError(f"{where}: job progress is not an object")
    if "progress" in obj:
        return ProgressNode(obj["profile_name"], progress=float(obj["progress"]))
    current = obj.get("current_task")
    return ProgressNode(
        obj["profile_name"],
        current_task_index=int(obj["current_task_index"]),
        current_task=None if current is None else _progress(current, where),
    )


def _job_killed(ts: float, d: dict[str, Any], where: str) -> JobKilled:
    progress = {jid: _progress(p, where) for jid, p in d["job_progress"].items()}
    return JobKilled(timestamp=ts, job_ids=tuple(d["job_ids"]), job_progress=progress)


def _state_changed(ts: float, d: dict[str, Any], where: str) -> ResourceStateChanged:
    return ResourceStateChanged(
        timestamp=ts, resources=_ids(d["resources"], f"{where}: field 'resources'"),
        state=str(d["state"]),
    )


def _notify(ts: float, d: dict[str, Any], where: str) -> Notify:
    kind = d["type"]
    if kind in _PLAIN_NOTIFY:
        return Notify(timestamp=ts, type=kind)
    if kind in _MACHINE_NOTIFY:
        return Notify(timestamp=ts, type=kind,
                      resources=_ids(d["resources"], f"{where}: field 'resources'"))
    return Notify(timestamp=ts, type=str(kind), data=d)


_DECODERS: dict[str, Any] = {
    "SIMULATION_BEGINS": _simulation_begins,
    "JOB_SUBMITTED": _job_submitted,
    "JOB_COMPLETED": _job_completed,
    "JOB_KILLED": _job_killed,
    "RESOURCE_STATE_CHANGED": _state_changed,
    "REQUESTED_CALL": lambda ts, d, where: RequestedCall(timestamp=ts),
    "NOTIFY": _notify,
    "ANSWER": lambda ts, d, where: Answer(timestamp=ts,
                                          consumed_energy=float(d["consumed_energy"])),
    "FROM_JOB_MSG": lambda ts, d, where: FromJobMsg(timestamp=ts, job_id=d["job_id"],
                                                    msg=d["msg"]),
    "SIMULATION_ENDS": lambda ts, d, where: SimulationEnds(timestamp=ts),
}

__all__ = ["decode_batsim_message", "encode_batsim_message", "job_json"]
