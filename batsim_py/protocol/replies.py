"""Scheduler -> Batsim replies: strict validation into typed decisions, and a writer for tests.

Batsim 4.2.1 aborts on any malformed reply (batsim-semantics.md §5.3, §5.8); batsim-py must fail
as loudly, but with a message that names the event index, its type and the offending field, so a
scheduler author can fix the bug without reading Batsim's source.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from batsim_py import intervalset
from batsim_py.decision.decisions import (
    AdditionalIOJob,
    CallMeLater,
    ChangeJobState,
    Decision,
    ExecuteJob,
    KillJob,
    NotifyDecision,
    Query,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    Reply,
    SetJobMetadata,
    SetResourceState,
    ToJobMsg,
)
from batsim_py.errors import ProtocolError
from batsim_py.rapidjson_number import rapidjson_double
from batsim_py.text import lone_surrogate

_JOB_STATES = frozenset({
    "NOT_SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED",
    "COMPLETED_KILLED", "REJECTED",
})
_NOTIFY_TYPES = ("registration_finished", "continue_registration")
_PREFIX = "scheduler reply"


class _Bad(Exception):
    """A field-level problem; the caller adds the event index and type."""


# ----------------------------------------------------------------------------------- decoding


def decode_reply(text: str | bytes) -> Reply:
    """Validate a scheduler reply as Batsim does and return its typed decisions.

    ANSWER events (Batsim accepts `estimate_waiting_time` answers and ignores them) are dropped.
    """
    try:
        # numbers as Batsim reads them; RapidJSON refuses NaN and Infinity
        msg = json.loads(text, parse_float=rapidjson_double, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{_PREFIX}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError(f"{_PREFIX}: not valid JSON: nesting too deep") from None
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    escape = lone_surrogate(text, msg)
    if escape is not None:
        raise ProtocolError(f"{_PREFIX}: not valid JSON: the escape {escape} is half of a UTF-16 "
                            "surrogate pair, not a character")
    return decode_reply_object(msg)


def decode_reply_object(msg: Any) -> Reply:
    """`decode_reply` of an already parsed reply (in-process peers: no JSON text at all).

    `msg` must hold what `json.loads` would have produced from the scheduler's text, numbers
    included (floats as Batsim reads them back, see `wire.read_back`).
    """
    if not isinstance(msg, dict):
        raise ProtocolError(f"{_PREFIX}: not a JSON object")
    if "now" not in msg:
        raise ProtocolError(f"{_PREFIX}: member 'now' is missing")
    if not _is_number(msg["now"]):
        raise ProtocolError(f"{_PREFIX}: 'now' is not a number ({msg['now']!r})")
    now = float(msg["now"])
    if "events" not in msg:
        raise ProtocolError(f"{_PREFIX}: member 'events' is missing")
    events = msg["events"]
    if not isinstance(events, list):
        raise ProtocolError(f"{_PREFIX}: 'events' is not an array")
    decisions: list[Decision] = []
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise ProtocolError(f"{_PREFIX}: event {i} is not an object")
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ProtocolError(f"{_PREFIX}: event {i}: 'type' is missing or not a string")
        where = f"{_PREFIX}: event {i} ({kind})"
        if kind not in _DECODERS:
            known = ", ".join(sorted(_DECODERS))
            raise ProtocolError(f"{_PREFIX}: event {i}: unknown type '{kind}' (known: {known})")
        if "timestamp" not in event or not _is_number(event["timestamp"]):
            raise ProtocolError(f"{where}: 'timestamp' is missing or not a number")
        ts = float(event["timestamp"])
        if ts > now:
            raise ProtocolError(
                f"{where}: timestamp {ts!r} is after the reply's now {now!r}")
        if "data" not in event or not isinstance(event["data"], dict):
            raise ProtocolError(f"{where}: 'data' is missing or not an object")
        try:
            decision = _DECODERS[kind](ts, event["data"])
        except _Bad as exc:
            raise ProtocolError(f"{where}: {exc}") from None
        if decision is not None:
            decisions.append(decision)
    return Reply(now=now, decisions=tuple(decisions))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (use a finite number)")


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _members(data: dict[str, Any], required: tuple[str, ...]) -> None:
    missing = [k for k in required if k not in data]
    if missing:
        raise _Bad(f"field '{missing[0]}' is missing")
    extra = [k for k in data if k not in required]
    if extra:
        raise _Bad(f"unexpected field '{extra[0]}' (expected exactly: {', '.join(required)})")


def _string(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise _Bad(f"field '{key}' is not a string ({value!r})")
    return value


def _interval_set(data: dict[str, Any], key: str) -> tuple[int, ...]:
    value = data[key]
    if not isinstance(value, str):
        raise _Bad(f"field '{key}' is not an interval set string ({value!r})")
    try:
        return intervalset.parse(value)
    except ValueError as exc:
        raise _Bad(f"field '{key}' is not an interval set ('{value}'): {exc}") from None


def _int_like(value: Any, what: str) -> int:
    """Batsim reads mapping keys/values as ints or strings of ints."""
    if isinstance(value, bool):
        raise _Bad(f"{what} is not an integer ({value!r})")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _Bad(f"{what} is not an integer ({value!r})")


def _execute_job(ts: float, data: dict[str, Any]) -> ExecuteJob:
    if not 2 <= len(data) <= 3:
        raise _Bad(f"data must have 2 or 3 members (job_id, alloc and at most one of mapping, "
                   f"storage_mapping, additional_io_job), got {len(data)}: "
                   f"{', '.join(json.dumps(k) for k in data)}")
    for key in ("job_id", "alloc"):
        if key not in data:
            raise _Bad(f"field '{key}' is missing")
    job_id = _string(data, "job_id")
    alloc = _interval_set(data, "alloc")
    mapping = storage_mapping = io_job = None
    for key in data:
        if key in ("job_id", "alloc"):
            continue
        if key == "mapping":
            mapping = _mapping(data["mapping"], len(alloc))
        elif key == "storage_mapping":
            storage_mapping = _storage_mapping(data["storage_mapping"])
        elif key == "additional_io_job":
            io_job = _additional_io_job(data["additional_io_job"])
        else:
            raise _Bad(f"unexpected field '{key}'")
    return ExecuteJob(timestamp=ts, job_id=job_id, alloc=alloc, mapping=mapping,
                      storage_mapping=storage_mapping, additional_io_job=io_job)


def _additional_io_job(obj: Any) -> AdditionalIOJob:
    """{"profile_name": str, "alloc": interval set, optional "profile": object} (Batsim 4.2.1
    reads these three and ignores anything else)."""
    if not isinstance(obj, dict):
        raise _Bad(f"field 'additional_io_job' is not an object ({obj!r})")
    if not isinstance(obj.get("profile_name"), str):
        raise _Bad("field 'additional_io_job': 'profile_name' (a string) is mandatory")
    profile = obj.get("profile")
    if "profile" in obj and not isinstance(profile, dict):
        raise _Bad(f"field 'additional_io_job': 'profile' is not an object ({profile!r})")
    if "alloc" not in obj:
        raise _Bad("field 'additional_io_job': 'alloc' (an interval set) is mandatory")
    try:
        alloc = _interval_set(obj, "alloc")
    except _Bad as exc:
        raise _Bad(f"field 'additional_io_job': {exc}") from None
    return AdditionalIOJob(obj["profile_name"], tuple(alloc), profile)


def _mapping(obj: Any, alloc_size: int) -> tuple[int, ...]:
    if not isinstance(obj, dict) or not obj:
        raise _Bad(f"field 'mapping' is not a non-empty object ({obj!r})")
    pairs: dict[int, int] = {}
    for key, value in obj.items():
        executor = _int_like(key, f"field 'mapping': key '{key}'")
        index = _int_like(value, f"field 'mapping': value of '{key}'")
        if not 0 <= index < alloc_size:
            raise _Bad(f"field 'mapping': value {index} of '{key}' is outside the allocation "
                       f"(indices 0..{alloc_size - 1})")
        if executor in pairs:
            raise _Bad(f"field 'mapping': executor {executor} appears twice")
        pairs[executor] = index
    if sorted(pairs) != list(range(len(pairs))):
        raise _Bad(f"field 'mapping': keys must be exactly 0..{len(pairs) - 1}")
    return tuple(pairs[i] for i in range(len(pairs)))


def _storage_mapping(obj: Any) -> dict[str, int]:
    if not isinstance(obj, dict) or not obj:
        raise _Bad(f"field 'storage_mapping' is not a non-empty object ({obj!r})")
    out: dict[str, int] = {}
    for label, machine in obj.items():
        if isinstance(machine, bool) or not isinstance(machine, int):
            raise _Bad(f"field 'storage_mapping': machine of '{label}' is not an integer")
        out[label] = machine
    return out


def _reject_job(ts: float, data: dict[str, Any]) -> RejectJob:
    _members(data, ("job_id",))
    return RejectJob(timestamp=ts, job_id=_string(data, "job_id"))


def _kill_job(ts: float, data: dict[str, Any]) -> KillJob:
    _members(data, ("job_ids",))
    ids = data["job_ids"]
    if not isinstance(ids, list) or not ids:
        raise _Bad(f"field 'job_ids' is not a non-empty array ({ids!r})")
    for j in ids:
        if not isinstance(j, str):
            raise _Bad(f"field 'job_ids': element {j!r} is not a string")
    return KillJob(timestamp=ts, job_ids=tuple(ids))


def _call_me_later(ts: float, data: dict[str, Any]) -> CallMeLater:
    _members(data, ("timestamp",))
    if not _is_number(data["timestamp"]):
        raise _Bad(f"field 'timestamp' is not a number ({data['timestamp']!r})")
    return CallMeLater(timestamp=ts, at=float(data["timestamp"]))


def _set_resource_state(ts: float, data: dict[str, Any]) -> SetResourceState:
    _members(data, ("resources", "state"))
    resources = _interval_set(data, "resources")
    state = data["state"]
    if not isinstance(state, str):
        raise _Bad(f"field 'state' is not a string ({state!r}); Batsim wants e.g. \"3\"")
    try:
        value = int(state)
    except ValueError:
        raise _Bad(f"field 'state' is not the string of an integer ({state!r})") from None
    return SetResourceState(timestamp=ts, resources=resources, state=value)


def _set_job_metadata(ts: float, data: dict[str, Any]) -> SetJobMetadata:
    _members(data, ("job_id", "metadata"))
    metadata = _string(data, "metadata")
    if '"' in metadata:
        raise _Bad("field 'metadata' must not contain '\"'")
    return SetJobMetadata(timestamp=ts, job_id=_string(data, "job_id"), metadata=metadata)


def _change_job_state(ts: float, data: dict[str, Any]) -> ChangeJobState:
    _members(data, ("job_id", "job_state"))
    state = _string(data, "job_state")
    if state not in _JOB_STATES:
        raise _Bad(f"field 'job_state' is not a job state ('{state}'; "
                   f"known: {', '.join(sorted(_JOB_STATES))})")
    return ChangeJobState(timestamp=ts, job_id=_string(data, "job_id"), job_state=state)


def _register_job(ts: float, data: dict[str, Any]) -> RegisterJob:
    _members(data, ("job_id", "job"))
    if not isinstance(data["job"], dict):
        raise _Bad("field 'job' is not an object")
    return RegisterJob(timestamp=ts, job_id=_string(data, "job_id"), job=data["job"])


def _register_profile(ts: float, data: dict[str, Any]) -> RegisterProfile:
    _members(data, ("workload_name", "profile_name", "profile"))
    if not isinstance(data["profile"], dict):
        raise _Bad("field 'profile' is not an object")
    return RegisterProfile(timestamp=ts, workload_name=_string(data, "workload_name"),
                           profile_name=_string(data, "profile_name"), profile=data["profile"])


def _notify(ts: float, data: dict[str, Any]) -> NotifyDecision:
    _members(data, ("type",))
    kind = _string(data, "type")
    if kind not in _NOTIFY_TYPES:
        raise _Bad(f"field 'type' is not a scheduler notification ('{kind}'; "
                   f"known: {', '.join(_NOTIFY_TYPES)})")
    return NotifyDecision(timestamp=ts, type=kind)


def _query(ts: float, data: dict[str, Any]) -> Query:
    _members(data, ("requests",))
    requests = data["requests"]
    if not isinstance(requests, dict) or list(requests) != ["consumed_energy"]:
        raise _Bad(f"field 'requests' must be {{\"consumed_energy\": {{}}}} ({requests!r})")
    if requests["consumed_energy"] != {}:
        raise _Bad("field 'requests': 'consumed_energy' must be an empty object")
    return Query(timestamp=ts, requests=requests)


def _to_job_msg(ts: float, data: dict[str, Any]) -> ToJobMsg:
    _members(data, ("job_id", "msg"))
    return ToJobMsg(timestamp=ts, job_id=_string(data, "job_id"), msg=_string(data, "msg"))


_DECODERS: dict[str, Callable[[float, dict[str, Any]], Decision | None]] = {
    "EXECUTE_JOB": _execute_job,
    "REJECT_JOB": _reject_job,
    "KILL_JOB": _kill_job,
    "CALL_ME_LATER": _call_me_later,
    "SET_RESOURCE_STATE": _set_resource_state,
    "SET_JOB_METADATA": _set_job_metadata,
    "CHANGE_JOB_STATE": _change_job_state,
    "REGISTER_JOB": _register_job,
    "REGISTER_PROFILE": _register_profile,
    "NOTIFY": _notify,
    "QUERY": _query,
    "ANSWER": lambda ts, data: None,
    "TO_JOB_MSG": _to_job_msg,
}


# ----------------------------------------------------------------------------------- encoding


def encode_reply(reply: Reply) -> str:
    """A reply as pybatsim writes it (`json.dumps`, Python float repr)."""
    return json.dumps({"now": reply.now, "events": [_decision_json(d) for d in reply.decisions]})


def _decision_json(d: Decision) -> dict[str, Any]:
    kind, data = _decision_data(d)
    return {"timestamp": d.timestamp, "type": kind, "data": data}


def _decision_data(d: Decision) -> tuple[str, dict[str, Any]]:
    if isinstance(d, ExecuteJob):
        data: dict[str, Any] = {"job_id": d.job_id, "alloc": intervalset.format(d.alloc)}
        if d.mapping is not None:
            data["mapping"] = {str(i): v for i, v in enumerate(d.mapping)}
        if d.storage_mapping is not None:
            data["storage_mapping"] = dict(d.storage_mapping)
        io = d.additional_io_job
        if io is not None:
            data["additional_io_job"] = {"profile_name": io.profile_name,
                                         "alloc": intervalset.format(io.alloc)}
            if io.profile is not None:
                data["additional_io_job"]["profile"] = dict(io.profile)
        return "EXECUTE_JOB", data
    if isinstance(d, RejectJob):
        return "REJECT_JOB", {"job_id": d.job_id}
    if isinstance(d, KillJob):
        return "KILL_JOB", {"job_ids": list(d.job_ids)}
    if isinstance(d, CallMeLater):
        return "CALL_ME_LATER", {"timestamp": d.at}
    if isinstance(d, SetResourceState):
        return "SET_RESOURCE_STATE", {"resources": intervalset.format(d.resources),
                                      "state": str(d.state)}
    if isinstance(d, SetJobMetadata):
        return "SET_JOB_METADATA", {"job_id": d.job_id, "metadata": d.metadata}
    if isinstance(d, ChangeJobState):
        return "CHANGE_JOB_STATE", {"job_id": d.job_id, "job_state": d.job_state}
    if isinstance(d, RegisterJob):
        return "REGISTER_JOB", {"job_id": d.job_id, "job": dict(d.job)}
    if isinstance(d, RegisterProfile):
        return "REGISTER_PROFILE", {"workload_name": d.workload_name,
                                    "profile_name": d.profile_name, "profile": dict(d.profile)}
    if isinstance(d, NotifyDecision):
        return "NOTIFY", {"type": d.type}
    if isinstance(d, Query):
        return "QUERY", {"requests": dict(d.requests)}
    if isinstance(d, ToJobMsg):
        return "TO_JOB_MSG", {"job_id": d.job_id, "msg": d.msg}
    raise TypeError(f"not a decision: {d!r}")
