"""Batsim 5's profile type names (seed-systems §2.9), read as the Batsim 4 types they denote.

Batsim 5 names profile types after batprotocol's tables (`DelayProfile`,
`ParallelTaskHomogeneousProfile`, ...) with mostly the same fields as 4.x; batsim-py reads
both spellings into one model. The two composition profiles Batsim 5.0 refuses at load
(`ForkJoinCompositionProfile`, `ParallelTaskMergeCompositionProfile`) are refused here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batsim_py.errors import WorkloadError

SAME_FIELDS = {
    "DelayProfile": "delay",
    "ParallelTaskProfile": "parallel",
    "SequentialCompositionProfile": "composed",
    "ParallelTaskDataStagingBetweenStoragesProfile": "data_staging",
}
V5_TYPES = (*SAME_FIELDS, "ParallelTaskHomogeneousProfile",
            "ParallelTaskOnStorageHomogeneousProfile", "TraceReplayProfile",
            "ForkJoinCompositionProfile", "ParallelTaskMergeCompositionProfile")


def as_v4(where: str, kind: str, obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Batsim 4 form of a profile written with a Batsim 5 type name."""
    if kind in SAME_FIELDS:
        return {**obj, "type": SAME_FIELDS[kind]}
    strategy = obj.get("generation_strategy", "DefinedAmountsUsedForEachValue")
    if strategy not in ("DefinedAmountsUsedForEachValue", "DefinedAmountsSpreadUniformly"):
        raise WorkloadError(f"{where}: generation_strategy must be "
                            "DefinedAmountsUsedForEachValue or DefinedAmountsSpreadUniformly, "
                            f"not {strategy!r}")
    rest = {k: v for k, v in obj.items() if k != "generation_strategy"}
    if kind == "ParallelTaskHomogeneousProfile":
        total = strategy == "DefinedAmountsSpreadUniformly"
        return {**rest, "type": "parallel_homogeneous_total" if total
                else "parallel_homogeneous"}
    if kind == "ParallelTaskOnStorageHomogeneousProfile":
        if strategy != "DefinedAmountsUsedForEachValue":
            raise WorkloadError(f"{where}: ParallelTaskOnStorageHomogeneousProfile with "
                                f"{strategy} is not implemented by batsim-py (Batsim 4's "
                                "parallel_homogeneous_pfs has DefinedAmountsUsedForEachValue)")
        if "host" in rest and "storage" not in rest:
            rest["storage"] = rest.pop("host")
        return {**rest, "type": "parallel_homogeneous_pfs"}
    if kind == "TraceReplayProfile":
        trace_type = obj.get("trace_type")
        if trace_type not in ("SMPI", "FractionalComputation"):
            raise WorkloadError(f"{where}: trace_type must be SMPI or FractionalComputation, "
                                f"not {trace_type!r}")
        out = {k: v for k, v in obj.items() if k not in ("trace_type", "filename")}
        out["trace"] = obj.get("filename")
        out["type"] = "smpi" if trace_type == "SMPI" else "usage_trace"
        return out
    raise WorkloadError(f"{where}: {kind} is not implemented by Batsim 5.0 (it aborts at "
                        "load) nor by batsim-py")
