"""RFC 14 / RFC 25 (version 1) jobspecs: made from Batsim jobs, read back as a request.

A Batsim job asks for `res` machines. With node granularity (the default) its jobspec is
`node[res] (exclusive) > slot[1] > core[C]`, C being the smallest core count of the compute
hosts (so any node fits it); with core granularity (`--flux-granularity core`) it is
`slot[res] > core[1]`, one slot per Batsim executor. `attributes.system.duration` is the
walltime (0: none), the command is the profile name (schedulers ignore it). A job may carry its
own `jobspec` object in the workload: it is then sent as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batsim_py.errors import ProtocolError


def from_batsim(profile: str, res: int, walltime: float, granularity: str,
                cores_per_node: int) -> dict[str, Any]:
    """The jobspec of a Batsim job (see the module docstring)."""
    core = {"type": "core", "count": cores_per_node if granularity == "node" else 1}
    if granularity == "node":
        resources = [{"type": "node", "count": res, "exclusive": True,
                      "with": [{"type": "slot", "count": 1, "label": "task", "with": [core]}]}]
    else:
        resources = [{"type": "slot", "count": res, "label": "task", "with": [core]}]
    return {
        "resources": resources,
        "tasks": [{"command": [profile], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": walltime if walltime > 0 else 0}},
        "version": 1,
    }


@dataclass(frozen=True, slots=True)
class Request:
    """What a V1 jobspec asks for: `nslots` slots of `cores` cores (and `gpus` gpus), spread
    over exactly `nnodes` nodes when `nnodes` > 0 (then `nslots` is per node)."""

    nnodes: int
    nslots: int
    cores: int
    gpus: int
    exclusive: bool
    duration: float

    @property
    def total_slots(self) -> int:
        return self.nslots * max(self.nnodes, 1)

    @property
    def total_cores(self) -> int:
        return self.total_slots * self.cores


def parse(jobspec: Any, where: str = "jobspec") -> Request:
    """The request of a V1 jobspec; `ProtocolError` names what does not fit RFC 25."""
    if not isinstance(jobspec, dict):
        raise ProtocolError(f"{where}: a jobspec is a JSON object")
    if jobspec.get("version") != 1:
        raise ProtocolError(f"{where}: version {jobspec.get('version')!r}: only jobspec "
                            "version 1 (RFC 25) is read")
    resources = jobspec.get("resources")
    if not isinstance(resources, list) or len(resources) != 1:
        raise ProtocolError(f"{where}: 'resources' must hold exactly one top vertex")
    top = resources[0]
    nnodes, exclusive = 0, False
    if _type(top, where) == "node":
        nnodes = _count(top, where)
        exclusive = bool(top.get("exclusive", False))
        top = _only_child(top, where)
    if _type(top, where) != "slot":
        raise ProtocolError(f"{where}: expected node>slot>core or slot>core, found "
                            f"'{_type(top, where)}' where the slot should be")
    nslots = _count(top, where)
    cores = gpus = 0
    children = top.get("with")
    if not isinstance(children, list) or not children:
        raise ProtocolError(f"{where}: the slot needs 'with': [{{\"type\": \"core\", ...}}]")
    for child in children:
        kind = _type(child, where)
        if kind == "core":
            cores += _count(child, where)
        elif kind == "gpu":
            gpus += _count(child, where)
        else:
            raise ProtocolError(f"{where}: a slot holds cores and gpus, not '{kind}'")
    if cores == 0:
        raise ProtocolError(f"{where}: the slot asks for no core")
    system = (jobspec.get("attributes") or {}).get("system") or {}
    duration = system.get("duration", 0)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration < 0:
        raise ProtocolError(f"{where}: attributes.system.duration must be a number >= 0")
    return Request(nnodes, nslots, cores, gpus, exclusive, float(duration))


def _type(vertex: Any, where: str) -> str:
    if not isinstance(vertex, dict) or not isinstance(vertex.get("type"), str):
        raise ProtocolError(f"{where}: each resource vertex needs a string 'type'")
    return str(vertex["type"])


def _count(vertex: dict[str, Any], where: str) -> int:
    count = vertex.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ProtocolError(f"{where}: the {vertex['type']} 'count' must be an integer >= 1 "
                            "(jobspec version 1)")
    return count


def _only_child(vertex: dict[str, Any], where: str) -> Any:
    children = vertex.get("with")
    if not isinstance(children, list) or len(children) != 1:
        raise ProtocolError(f"{where}: a {vertex['type']} must hold exactly one slot")
    return children[0]
