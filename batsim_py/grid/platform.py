"""Grid platforms: which compute machines form which cluster.

A grid is one SimGrid platform with one zone per cluster (research §3.6): a `<zone>` or a
`<cluster>` directly inside the platform's root zone. A host's cluster is, in this order, its
own `cluster` property, the `cluster` property of a zone holding it, or the id of the zone
directly under the root that holds it. Grid resources are `(cluster, host)`; each compute
machine is one OAR resource (a job of `res` resources takes `res` machines of one cluster).
Clusters keep the platform's machine order (Batsim ids); speeds and cores may differ between
clusters (a task's duration per cluster is the campaign's business, see `inputs.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from batsim_py.errors import PlatformError
from batsim_py.platform.model import Machines


@dataclass(frozen=True, slots=True)
class GridCluster:
    name: str
    machines: tuple[int, ...]  # Batsim machine ids
    hosts: tuple[str, ...]
    speed: float  # flop/s per core of the first machine
    cores: int


def cluster_of_host(host: object) -> str | None:
    props = getattr(host, "properties", {})
    if "cluster" in props:
        return str(props["cluster"])
    zprops = getattr(host, "zone_properties", {})
    if "cluster" in zprops:
        return str(zprops["cluster"])
    zones: tuple[str, ...] = getattr(host, "zones", ())
    return zones[1] if len(zones) > 1 else None


def grid_clusters(machines: Machines, path: str = "") -> dict[str, GridCluster]:
    """The clusters of a platform's compute machines, in order of their first machine."""
    members: dict[str, list[int]] = {}
    orphans = []
    for m in machines.compute:
        name = cluster_of_host(m.host)
        if name is None:
            orphans.append(m.host.name)
            continue
        members.setdefault(name, []).append(m.id)
    if orphans:
        shown = ", ".join(orphans[:5]) + (" ..." if len(orphans) > 5 else "")
        raise PlatformError(
            f"{path or 'platform'}: hosts {shown} belong to no cluster: put each cluster's "
            "hosts in a <zone> or <cluster> of their own under the root zone, or give them "
            "a 'cluster' property"
        )
    if not members:
        raise PlatformError(f"{path or 'platform'}: no compute machine, hence no cluster")
    out = {}
    for name, ids in members.items():
        first = machines.compute[ids[0]].host
        out[name] = GridCluster(name, tuple(ids), tuple(machines.compute[i].host.name
                                                        for i in ids), first.speed, first.cores)
    return out


def grid_platform_xml(clusters: list[tuple[str, int, str, int]], comment: str = "") -> str:
    """A SimGrid platform of clusters `(name, nodes, speed, cores)`, one `<cluster>` zone each
    (hosts `name-0` ...), and a host `master_host`, joined pairwise by one WAN link (the
    shipped `platforms/grid*.xml` are made by it)."""
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">']
    if comment:
        lines.append(f"<!-- batsim-py: {comment} -->")
    lines += ['<platform version="4.1">', '  <zone id="grid" routing="Full">']
    for name, nodes, speed, cores in clusters:
        core = "" if cores == 1 else f' core="{cores}"'
        lines.append(f'    <cluster id="{name}" prefix="{name}-" suffix="" radical="0-{nodes - 1}" '
                     f'speed="{speed}"{core}')
        lines.append('             bw="125MBps" lat="50us" bb_bw="2.5GBps" bb_lat="500us"/>')
    lines.append('    <zone id="master" routing="Full"><host id="master_host" speed="1Gf"/></zone>')
    lines.append('    <link id="wan" bandwidth="1.25GBps" latency="5ms"/>')
    gates = [(c[0], f"{c[0]}-{c[0]}_router") for c in clusters] + [("master", "master_host")]
    for i, (a, ga) in enumerate(gates):
        for b, gb in gates[i + 1:]:
            lines.append(f'    <zoneRoute src="{a}" dst="{b}" gw_src="{ga}" gw_dst="{gb}">'
                         '<link_ctn id="wan"/></zoneRoute>')
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)
