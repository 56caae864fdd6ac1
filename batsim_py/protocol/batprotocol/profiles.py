"""Profiles in batprotocol's form (the `Profile` union), from batsim-py's profile records.

Batsim 5 names profile types after the schema's tables (seed-systems §2.9); a forwarded
profile (`forward_profiles_on_*` features) is one `ProfileAndId` whose `profile_type` is the
table name. Profile ids are `workload!name`.
"""

from __future__ import annotations

from typing import Any

from batsim_py.errors import NotSupportedError
from batsim_py.workload import model as m


def profile_to_wire(workload: str, p: m.Profile) -> tuple[str, dict[str, Any]]:
    """(union member name, table dict) of one profile."""
    if isinstance(p, m.DelayProfile):
        return "DelayProfile", {"delay": p.delay}
    if isinstance(p, m.ParallelProfile):
        return "ParallelTaskProfile", {"computation_vector": list(p.cpu),
                                       "communication_matrix": list(p.com)}
    if isinstance(p, m.ParallelHomogeneousProfile):
        return "ParallelTaskHomogeneousProfile", {
            "computation_amount": p.cpu, "communication_amount": p.com,
            "generation_strategy": "DefinedAmountsUsedForEachValue"}
    if isinstance(p, m.ParallelHomogeneousTotalProfile):
        return "ParallelTaskHomogeneousProfile", {
            "computation_amount": p.cpu, "communication_amount": p.com,
            "generation_strategy": "DefinedAmountsSpreadUniformly"}
    if isinstance(p, m.ComposedProfile):
        return "SequentialCompositionProfile", {
            "repetition_count": p.repeat,
            "profile_ids": [f"{workload}!{name}" for name in p.seq]}
    if isinstance(p, m.ParallelHomogeneousPFSProfile):
        return "ParallelTaskOnStorageHomogeneousProfile", {
            "storage_name": p.storage, "bytes_to_read": p.bytes_to_read,
            "bytes_to_write": p.bytes_to_write,
            "generation_strategy": "DefinedAmountsUsedForEachValue"}
    if isinstance(p, m.DataStagingProfile):
        return "ParallelTaskDataStagingBetweenStoragesProfile", {
            "bytes_to_transfer": p.nb_bytes, "emitter_storage_name": p.source,
            "receiver_storage_name": p.destination}
    if isinstance(p, m.TraceProfile):
        return "TraceReplayProfile", {
            "trace_type": "SMPI" if p.kind == "smpi" else "FractionalComputation",
            "filename": p.trace}
    raise NotSupportedError(f"profile '{workload}!{p.name}' of type '{p.type}' has no "
                            "batprotocol form (Batsim 5 has no such profile type)")


def _local(workload: str, profile_id: str, where: str) -> str:
    wl, sep, name = profile_id.partition("!")
    if not sep:
        return profile_id
    if wl != workload:
        raise NotSupportedError(f"{where}: profile '{profile_id}' of another workload than "
                                f"'{workload}' (batsim-py composes profiles of one workload)")
    return name


def profile_from_wire(workload: str, member: str, body: dict[str, Any], where: str
                      ) -> dict[str, Any]:
    """A registered profile (`Profile` union member and table) as a Batsim 4 JSON profile,
    which the workload layer reads."""
    if member == "DelayProfile":
        return {"type": "delay", "delay": body["delay"]}
    if member == "ParallelTaskProfile":
        return {"type": "parallel", "cpu": list(body.get("computation_vector") or []),
                "com": list(body.get("communication_matrix") or [])}
    if member == "ParallelTaskHomogeneousProfile":
        total = body["generation_strategy"] == "DefinedAmountsSpreadUniformly"
        return {"type": "parallel_homogeneous_total" if total else "parallel_homogeneous",
                "cpu": body["computation_amount"], "com": body["communication_amount"]}
    if member == "SequentialCompositionProfile":
        return {"type": "composed", "repeat": body["repetition_count"],
                "seq": [_local(workload, p, where) for p in body["profile_ids"]]}
    if member == "ParallelTaskOnStorageHomogeneousProfile":
        if body["generation_strategy"] != "DefinedAmountsUsedForEachValue":
            raise NotSupportedError(f"{where}: {member} with {body['generation_strategy']} "
                                    "is not implemented by batsim-py")
        return {"type": "parallel_homogeneous_pfs", "bytes_to_read": body["bytes_to_read"],
                "bytes_to_write": body["bytes_to_write"], "storage": body["storage_name"]}
    if member == "ParallelTaskDataStagingBetweenStoragesProfile":
        return {"type": "data_staging", "nb_bytes": body["bytes_to_transfer"],
                "from": body["emitter_storage_name"], "to": body["receiver_storage_name"]}
    if member == "TraceReplayProfile":
        return {"type": "smpi" if body["trace_type"] == "SMPI" else "usage_trace",
                "trace": body["filename"]}
    raise NotSupportedError(f"{where}: {member} is not implemented by Batsim 5.0 (it aborts "
                            "on its registration) nor by batsim-py")
