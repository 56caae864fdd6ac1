"""RFC 20 resource sets (R version 1): the inventory, a job's allocation, their checks.

    {"version": 1,
     "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0-3"}}],
                   "nodelist": ["node[0-1]"], "starttime": 0.0, "expiration": 0.0}}

A rank is a Flux execution target; batsim-py gives one rank per compute machine in Batsim's
resource id order, so rank i is Batsim machine i, its cores are the host's `core` count and the
nodelist its host names. Only cores are modelled (no gpu on a SimGrid host).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batsim_py.errors import ProtocolError
from batsim_py.protocol.flux import idset

Assignment = dict[int, tuple[int, ...]]  # rank -> sorted core ids


def build(assignment: Mapping[int, Sequence[int]], hosts: Sequence[str],
          starttime: float = 0.0, expiration: float = 0.0) -> dict[str, Any]:
    """An R object for `assignment` (rank -> cores); `hosts[rank]` names the ranks.

    Consecutive ranks with the same cores share one R_lite entry, as Flux writes them."""
    lite: list[dict[str, Any]] = []
    group: list[int] = []
    cores_of_group: tuple[int, ...] | None = None
    for rank in sorted(assignment):
        cores = tuple(sorted(assignment[rank]))
        if group and cores == cores_of_group and rank == group[-1] + 1:
            group.append(rank)
            continue
        if group:
            lite.append({"rank": idset.encode(group),
                         "children": {"core": idset.encode(cores_of_group or ())}})
        group, cores_of_group = [rank], cores
    if group:
        lite.append({"rank": idset.encode(group),
                     "children": {"core": idset.encode(cores_of_group or ())}})
    return {
        "version": 1,
        "execution": {
            "R_lite": lite,
            "nodelist": ([idset.hostlist(hosts[r] for r in sorted(assignment))]
                         if assignment else []),
            "starttime": starttime,
            "expiration": expiration,
        },
    }


def parse(R: Any, where: str, allow_empty: bool = False) -> Assignment:
    """rank -> cores of an R object; a `ProtocolError` (prefixed by `where`) names what is
    malformed. Ranks listed twice are merged (RFC 20 allows it). An empty R (no R_lite entry)
    is refused unless `allow_empty` (a status of nothing allocated or nothing down)."""
    if not isinstance(R, dict):
        raise ProtocolError(f"{where}: R must be an RFC 20 object "
                            '{"version": 1, "execution": {"R_lite": [...]}}')
    if R.get("version") != 1:
        raise ProtocolError(f"{where}: R version {R.get('version')!r} is not supported "
                            "(RFC 20 version 1)")
    execution = R.get("execution")
    if not isinstance(execution, dict) or not isinstance(execution.get("R_lite"), list):
        raise ProtocolError(f"{where}: R needs execution.R_lite, a list of "
                            '{"rank": idset, "children": {"core": idset}}')
    out: dict[int, set[int]] = {}
    for i, entry in enumerate(execution["R_lite"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("children"), dict):
            raise ProtocolError(f"{where}: R_lite[{i}] must be "
                                '{"rank": idset, "children": {"core": idset}}')
        try:
            ranks = idset.decode(entry.get("rank"))
            cores = idset.decode(entry["children"].get("core", ""))
        except ValueError as exc:
            raise ProtocolError(f"{where}: R_lite[{i}]: {exc}") from None
        others = sorted(set(entry["children"]) - {"core"})
        if others:
            raise ProtocolError(f"{where}: R_lite[{i}] asks for {others}: batsim-py hosts "
                                "have cores only")
        if not ranks or not cores:
            raise ProtocolError(f"{where}: R_lite[{i}] has no rank or no core")
        for r in ranks:
            out.setdefault(r, set()).update(cores)
    if not out and not allow_empty:
        raise ProtocolError(f"{where}: R holds no resource (empty R_lite)")
    return {r: tuple(sorted(c)) for r, c in sorted(out.items())}


def summary(assignment: Mapping[int, Sequence[int]]) -> str:
    """Flux's short text of a resource set: `rank0/core1`, `rank[0-1]/core[0-3]`; ranks with
    the same cores are grouped (what sched-simple puts in `sched.resource_summary`)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for rank in sorted(assignment):
        groups.setdefault(tuple(sorted(assignment[rank])), []).append(rank)
    parts = []
    for cores, ranks in sorted(groups.items(), key=lambda kv: kv[1][0]):
        parts.append(f"rank{_bracket(ranks)}/core{_bracket(cores)}")
    return " ".join(parts)


def _bracket(ids: Sequence[int]) -> str:
    text = idset.encode(ids)
    return text if len(ids) == 1 else f"[{text}]"
