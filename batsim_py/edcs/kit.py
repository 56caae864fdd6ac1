"""Helpers to write a Python EDC: read Batsim's messages, build hello and decision messages.

Messages are dicts in flatbuffers' JSON form (docs/batprotocol.md): `{"now": T, "events":
[{"timestamp": T, "event_type": "JobSubmittedEvent", "event": {...}}, ...]}`. `Codec` turns
them into the bytes the EDC's format says (JSON: compact text; binary: flatbuffers) and back.
"""

from __future__ import annotations

import json
from typing import Any

FORMAT_BINARY = 0x1
FORMAT_JSON = 0x2
FORMAT_OBJECTS = 0x4  # batsim-py only: dicts, no serialisation (in batsim-py's process)


def init_options(init_data: bytes) -> dict[str, Any]:
    """The init data as a JSON object (empty data: no options)."""
    text = bytes(init_data).rstrip(b"\0").decode("utf-8").strip()
    if not text:
        return {}
    options = json.loads(text)
    if not isinstance(options, dict):
        raise ValueError(f"the init data must be a JSON object, not {text[:80]!r}")
    return options


class Codec:
    """Messages to and from bytes in one format (JSON unless `binary`; `objects`: the dicts
    themselves, for an EDC run in batsim-py's process)."""

    def __init__(self, binary: bool = False, objects: bool = False) -> None:
        self.binary = binary
        self.objects = objects
        self.flags = FORMAT_OBJECTS if objects else FORMAT_BINARY if binary else FORMAT_JSON
        if binary:
            from batsim_py.protocol.batprotocol.binary import BinaryCodec

            self._bin = BinaryCodec()

    def decode(self, data: Any) -> dict[str, Any]:
        if self.objects:
            return data
        if self.binary:
            return self._bin.decode(bytes(data), "Batsim's message")
        return json.loads(bytes(data).rstrip(b"\0"))

    def encode(self, message: dict[str, Any]) -> Any:
        if self.objects:
            return message
        if self.binary:
            return self._bin.encode(message)
        return json.dumps(message, separators=(",", ":")).encode("utf-8")


def start(state: dict[str, Any], init_data: bytes, name: str, version: str = "0.1.0",
          **fields: Any) -> tuple[int, Any]:
    """What a shipped EDC's `batsim_edc_init` does: read the options, take the codec they ask
    for (`format_binary`, `format_objects`), reset the EDC's `state` to `fields` and the codec,
    and return the format flags and the hello message."""
    options = init_options(init_data)
    codec = Codec(binary=bool(options.get("format_binary", False)),
                  objects=bool(options.get("format_objects", False)))
    state.clear()
    state.update(fields, codec=codec)
    return codec.flags, codec.encode(hello(name, version))


def message(now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"now": now, "events": events}


def event(timestamp: float, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": timestamp, "event_type": kind, "event": body}


def hello(name: str, version: str, **features: bool) -> dict[str, Any]:
    """The message holding an EDC's EDCHelloEvent (features: EDCRequestedSimulationFeatures)."""
    return message(0.0, [event(0.0, "EDCHelloEvent", {
        "batprotocol_version": "0.1.0",
        "decision_component_name": name,
        "decision_component_version": version,
        "requested_simulation_features": dict(features),
    })])


def execute_job(timestamp: float, job_id: str, hosts: str,
                strategy: str = "SpreadOverHostsFirst") -> dict[str, Any]:
    """ExecuteJobEvent on `hosts` (an interval set such as "0-3 7")."""
    return event(timestamp, "ExecuteJobEvent", {
        "job_id": job_id,
        "allocation": {"host_allocation": hosts,
                       "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
                       "executor_placement": {"strategy": strategy}}})


def reject_job(timestamp: float, job_id: str) -> dict[str, Any]:
    return event(timestamp, "RejectJobEvent", {"job_id": job_id})


def kill_jobs(timestamp: float, job_ids: list[str]) -> dict[str, Any]:
    return event(timestamp, "KillJobsEvent", {"job_ids": job_ids})


def call_me_later_at(timestamp: float, call_id: str, time: int,
                     unit: str = "Second") -> dict[str, Any]:
    return event(timestamp, "CallMeLaterEvent", {
        "call_me_later_id": call_id, "when_type": "OneShot",
        "when": {"time": time, "time_unit": unit}})


def call_me_periodically(timestamp: float, call_id: str, period: int, nb: int | None = None,
                         unit: str = "Second") -> dict[str, Any]:
    mode = ({"mode_type": "Infinite", "mode": {}} if nb is None
            else {"mode_type": "FinitePeriodNumber", "mode": {"nb_periods": nb}})
    return event(timestamp, "CallMeLaterEvent", {
        "call_me_later_id": call_id, "when_type": "Periodic",
        "when": {"period": period, "offset": 0, "time_unit": unit, **mode}})


def format_hosts(ids: list[int]) -> str:
    """Host ids as an interval set: [0, 1, 2, 5] -> "0-2 5"."""
    parts = []
    ids = sorted(ids)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(parts)


def parse_hosts(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out
