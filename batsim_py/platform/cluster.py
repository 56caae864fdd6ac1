"""`<cluster>` (flat topology) expansion into a star zone, with SimGrid's names and quirks.

Names matter: Batsim platforms name the cluster router as a zoneRoute gateway, and link names
appear in outputs. Quirks kept on purpose (simgrid-models §1.8): `;` is not a radical separator
(integer parsing stops at it), and sharing_policy="FATPIPE" leaves the private links SHARED.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from batsim_py.platform.builder import PlatformBuilder
from batsim_py.platform.units import parse_int_prefix
from batsim_py.platform.zones import StarZone, Zone


@dataclass
class ClusterArgs:
    id: str
    prefix: str
    suffix: str
    radicals: list[int]
    speeds: tuple[float, ...]
    cores: int
    bw: float
    lat: float
    sharing_policy: str  # SPLITDUPLEX or anything else (then one SHARED link)
    bb_bw: float = 0.0
    bb_lat: float = 0.0
    bb_sharing_policy: str = "SHARED"
    router_id: str = ""
    limiter_link: float = 0.0
    loopback_bw: float = 0.0
    loopback_lat: float = 0.0
    properties: dict[str, str] = field(default_factory=dict)


MAX_CLUSTER_HOSTS = 1_000_000  # beyond that, building the hosts would exhaust memory


def parse_radicals(text: str) -> list[int]:
    """'3,1-2' -> [3, 1, 2]: pieces in the given order, ranges inclusive."""
    out: list[int] = []
    for piece in text.split(","):
        ends = piece.split("-")
        if len(ends) == 1:
            out.append(parse_int_prefix(ends[0]))
        elif len(ends) == 2:
            first, last = parse_int_prefix(ends[0]), parse_int_prefix(ends[1])
            if len(out) + (last - first + 1) > MAX_CLUSTER_HOSTS:
                raise ValueError(f"'{text}' gives more than {MAX_CLUSTER_HOSTS:,} hosts "
                                 "(too many to simulate: use a smaller range)")
            out.extend(range(first, last + 1))
        else:
            raise ValueError(f"malformed radical piece '{piece}' (use N or A-B, separated by ',')")
    return out


def expand_cluster(b: PlatformBuilder, parent: Zone | None, c: ClusterArgs) -> StarZone:
    zone = b.new_zone(StarZone, c.id, "Cluster", parent)
    assert isinstance(zone, StarZone)
    zone.properties.update(c.properties)
    backbone = None
    if c.bb_bw > 0 or c.bb_lat > 0:
        backbone = b.add_link(c.id + "_backbone", c.bb_bw, c.bb_lat, c.bb_sharing_policy)
    for i in c.radicals:
        host = b.add_host(zone, f"{c.prefix}{i}{c.suffix}", c.speeds, c.cores, 0,
                          dict(c.properties))
        star = zone.links_of(host)
        link_id = f"{c.id}_link_{i}"
        if c.loopback_bw > 0 or c.loopback_lat > 0:
            star.loopback = [b.add_link(link_id + "_loopback", c.loopback_bw, c.loopback_lat,
                                        "FATPIPE")]  # type: ignore[list-item]
        limiter = None
        if c.limiter_link > 0:
            limiter = b.add_link(link_id + "_limiter", c.limiter_link, 0.0, "SHARED")
        if c.sharing_policy == "SPLITDUPLEX":
            b.add_link(link_id, c.bw, c.lat, "SPLITDUPLEX")
            up, down = b.split[link_id]
        else:
            up = down = b.add_link(link_id, c.bw, c.lat, "SHARED")  # type: ignore[assignment]
        star.up = [x for x in (limiter, up, backbone) if x is not None]
        star.down = [x for x in (backbone, down, limiter) if x is not None]
    router = c.router_id or f"{c.prefix}{c.id}_router{c.suffix}"
    b.add_router(zone, router)
    return zone
