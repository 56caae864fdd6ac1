"""Routes between any two netpoints, across zones (simgrid-models §1.7).

The common ancestor zone gives either the local route (both ends in one of its members) or a
zoneRoute between the two child zones plus its gateways; the pieces from the source to the first
gateway and from the last gateway to the destination are resolved the same way. Latency is
accumulated in SimGrid's order: the zoneRoute's links first, then the source piece, then the
destination piece (this changes the last bits of some sums).
"""

from __future__ import annotations

from collections.abc import Callable

from batsim_py.errors import PlatformError
from batsim_py.platform.model import Link, Route
from batsim_py.platform.zones import Declared, NetPoint, Zone, add_links


def _ancestors(src: NetPoint, dst: NetPoint) -> tuple[Zone, NetPoint | None, NetPoint | None]:
    """Common ancestor zone and, below it, the child zone holding each end (None if direct)."""
    assert src.zone is not None and dst.zone is not None
    path_src = src.zone.chain()[::-1]  # root first
    path_dst = dst.zone.chain()[::-1]
    i = 0
    while i + 1 < len(path_src) and i + 1 < len(path_dst) and path_src[i + 1] is path_dst[i + 1]:
        i += 1
    common = path_src[i]
    if path_dst[i] is not common:
        raise PlatformError(f"'{src.name}' and '{dst.name}' are in two unrelated zone trees")
    src_anc = path_src[i + 1].netpoint if i + 1 < len(path_src) else None
    dst_anc = path_dst[i + 1].netpoint if i + 1 < len(path_dst) else None
    return common, src_anc, dst_anc


def _bypass(zone: Zone, src: NetPoint, dst: NetPoint) -> tuple[Declared, NetPoint, NetPoint] | None:
    """The bypass route `zone` declares for this pair or for a pair of their enclosing zones."""
    if not zone.bypass:
        return None
    if src.zone is zone and dst.zone is zone:
        r = zone.bypass.get((src, dst))
        return (r, src, dst) if r is not None else None
    assert src.zone is not None and dst.zone is not None
    path_src = src.zone.chain()  # innermost first
    path_dst = dst.zone.chain()
    i_src, i_dst = len(path_src) - 1, len(path_dst) - 1
    while i_src > 0 and i_dst > 0 and path_src[i_src] is path_dst[i_dst]:
        i_src -= 1
        i_dst -= 1
    # Innermost pairs first: for each depth bound, the pairs reaching it on one side.
    for top in range(max(i_src, i_dst) + 1):
        candidates = []
        for i in range(top):
            candidates.append((i, top))
            candidates.append((top, i))
        candidates.append((top, top))
        for a, b in candidates:
            if a <= i_src and b <= i_dst:
                key = (path_src[a].netpoint, path_dst[b].netpoint)
                if key[0] is None or key[1] is None:
                    continue
                r = zone.bypass.get(key)  # type: ignore[arg-type]
                if r is not None:
                    return r, key[0], key[1]
    return None


def global_route(src: NetPoint, dst: NetPoint, out: list[Link], latency: float) -> float:
    """Append the links from `src` to `dst` to `out`; return the latency accumulated so far."""
    common, src_anc, dst_anc = _ancestors(src, dst)

    bypass = _bypass(common, src, dst)
    if bypass is not None:
        r, key_src, key_dst = bypass
        if src is not key_src and r.gw_src is not None:
            latency = global_route(src, r.gw_src, out, latency)
        latency = add_links(out, r.links, latency)
        if dst is not key_dst and r.gw_dst is not None:
            latency = global_route(r.gw_dst, dst, out, latency)
        return latency

    if src_anc is None and dst_anc is None:  # both directly in the common zone
        local = common.local_route(src, dst, latency, global_route)
        out.extend(local.links)
        return local.latency

    # An end directly in the common zone stands for itself (and is its own gateway).
    src_key, dst_key = src_anc or src, dst_anc or dst
    local = common.local_route(src_key, dst_key, latency, global_route)
    if src_anc is None:
        local.gw_src = src
    if dst_anc is None:
        local.gw_dst = dst
    if local.gw_src is None or local.gw_dst is None:
        raise PlatformError(
            f"{common.label}: no route from '{src.name}' to '{dst.name}': zone '{common.name}' has "
            f'no <zoneRoute src="{src_key.name}" dst="{dst_key.name}"> (add one, with gateways)'
        )
    latency = local.latency
    if src is not local.gw_src:
        latency = global_route(src, local.gw_src, out, latency)
    out.extend(local.links)
    if local.gw_dst is not dst:
        latency = global_route(local.gw_dst, dst, out, latency)
    return latency


def make_resolver(netpoints: dict[str, NetPoint], label: str) -> Callable[[str, str], Route]:
    """The `Platform.resolve_route` callable: host names in, a Route out."""

    def resolve(src: str, dst: str) -> Route:
        ends = []
        for name in (src, dst):
            np = netpoints.get(name)
            if np is None or np.kind == "zone":
                raise PlatformError(f"{label}: no host or router named '{name}' in the platform")
            ends.append(np)
        links: list[Link] = []
        latency = global_route(ends[0], ends[1], links, 0.0)
        return Route(tuple(links), latency)

    return resolve
