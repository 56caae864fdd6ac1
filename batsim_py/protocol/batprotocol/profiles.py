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
