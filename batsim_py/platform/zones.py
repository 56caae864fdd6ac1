"""Routing zones: each kind answers "which links from netpoint A to netpoint B inside me".

A zone only knows its own members (hosts and routers of a leaf zone, child zones of an internal
one). Crossing zones is `routing.py`'s job; a zone answers with its links and, between child
zones, the gateways to continue from. Latency is accumulated as SimGrid does (link by link, in
the order the pieces are computed), because that order is visible in the last bits of the sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from batsim_py.errors import PlatformError
from batsim_py.platform.model import Link
from batsim_py.platform.shortest import ShortestPaths


@dataclass(eq=False)
class NetPoint:
    """A routing end: a host, a router, or a zone seen from its parent."""

    name: str
    kind: str  # "host", "router" or "zone"
    zone: Zone | None  # the enclosing zone (the parent, for a zone's own netpoint)
    coords: tuple[float, float, float] | None = None


@dataclass(frozen=True, slots=True)
class Hop:
    """One `<link_ctn>`: the link used forward, and the one a reversed route uses.

    They differ only for a split-duplex link named with a direction (X UP <-> X DOWN).
    """

    fwd: Link
    back: Link


@dataclass(frozen=True, slots=True)
class Declared:
    """A `<route>`/`<zoneRoute>` as stored in a zone: links and (between zones) gateways."""

    links: tuple[Link, ...]
    gw_src: NetPoint | None = None
    gw_dst: NetPoint | None = None


# (src, dst, links accumulator, latency so far) -> latency: resolves a route across zones.
GlobalRoute = Callable[[NetPoint, NetPoint, list[Link], float], float]


@dataclass(slots=True)
class Local:
    """Answer of a zone: links to append, latency so far, gateways when crossing child zones."""

    links: list[Link]
    latency: float
    gw_src: NetPoint | None = None
    gw_dst: NetPoint | None = None


def add_links(out: list[Link], links: Sequence[Link], latency: float) -> float:
    for link in links:
        out.append(link)
        latency += link.latency
    return latency


@dataclass(eq=False)
class Zone:
    name: str
    routing: str  # as written in the XML (or "Cluster" for a <cluster>)
    parent: Zone | None
    label: str  # file name, for messages
    loopback: Link  # SimGrid's hidden __loopback__
    properties: dict[str, str] = field(default_factory=dict)
    children: list[Zone] = field(default_factory=list)
    members: list[NetPoint] = field(default_factory=list)  # hosts and routers directly inside
    netpoint: NetPoint | None = None
    bypass: dict[tuple[NetPoint, NetPoint], Declared] = field(default_factory=dict)

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        raise NotImplementedError

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def chain(self) -> list[Zone]:
        """This zone and its ancestors, innermost first."""
        out: list[Zone] = []
        z: Zone | None = self
        while z is not None:
            out.append(z)
            z = z.parent
        return out

    def contains(self, np: NetPoint) -> bool:
        """Whether `np` lies in this zone, at any depth."""
        z = np.zone
        while z is not None:
            if z is self:
                return True
            z = z.parent
        return False


@dataclass(eq=False)
class TableZone(Zone):
    """Full routing: routes are looked up in the declared table; a missing one is empty."""

    table: dict[tuple[NetPoint, NetPoint], Declared] = field(default_factory=dict)

    def declared(self, src: NetPoint, dst: NetPoint) -> Declared | None:
        r = self.table.get((src, dst))
        if r is None and src is dst and self.is_leaf:
            # SimGrid adds its loopback to leaf zones without a declared self route.
            return Declared((self.loopback,))
        return r

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        out: list[Link] = []
        r = self.declared(src, dst)
        if r is None:
            return Local(out, latency)
        latency = add_links(out, r.links, latency)
        return Local(out, latency, r.gw_src, r.gw_dst)


@dataclass(eq=False)
class GraphZone(TableZone):
    """Floyd / Dijkstra / DijkstraCache: declared routes are edges, routes are shortest paths.

    Edge cost is the number of links of the declared route (SimGrid's rule). Among equal-cost
    paths, the one networkx's `dijkstra_path` returns is taken (what this zone always did;
    `ShortestPaths` says how it is found without a whole-graph search per route).
    """

    _paths: ShortestPaths | None = field(default=None, repr=False)

    def shortest_paths(self) -> ShortestPaths:
        if self._paths is None:
            self._paths = ShortestPaths(
                (a, b, len(r.links)) for (a, b), r in self.table.items() if a is not b)
        return self._paths

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        if src is dst:
            return super().local_route(src, dst, latency, glob)
        path = self.shortest_paths().path(src, dst)
        if path is None:
            raise PlatformError(
                f"{self.label}: zone '{self.name}' ({self.routing}): no route from '{src.name}' to "
                f"'{dst.name}' (declare <route>s connecting them)"
            )
        out: list[Link] = []
        first = last = None
        prev_gw: NetPoint | None = None
        for a, b in zip(path, path[1:], strict=False):
            r = self.table[(a, b)]
            if first is None:
                first = r
            if not self.is_leaf and prev_gw is not None and r.gw_src is not prev_gw:
                latency = glob(prev_gw, r.gw_src, out, latency)
            latency = add_links(out, r.links, latency)
            prev_gw = r.gw_dst
            last = r
        return Local(out, latency, first.gw_src if first else None, last.gw_dst if last else None)


@dataclass(eq=False)
class EmptyZone(Zone):
    """routing="None": no links inside (hosts reached only as gateways)."""

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        return Local([], latency)


@dataclass(slots=True)
class StarLinks:
    up: list[Link] = field(default_factory=list)
    down: list[Link] = field(default_factory=list)
    loopback: list[Link] | None = None


@dataclass(eq=False)
class StarZone(Zone):
    """Cluster zones (`<cluster>`, routing="Cluster"): up(src) then down(dst), each link once."""

    star: dict[str, StarLinks] = field(default_factory=dict)

    def links_of(self, np: NetPoint) -> StarLinks:
        s = self.star.get(np.name)
        if s is None:
            s = self.star[np.name] = StarLinks()
        return s

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        s, d = self.links_of(src), self.links_of(dst)
        out: list[Link] = []
        if src is dst and s.loopback is not None:
            return Local(out, add_links(out, s.loopback, latency))
        seen: set[str] = set()
        for link in (*s.up, *d.down):
            if link.name not in seen:
                seen.add(link.name)
                out.append(link)
                latency += link.latency
        return Local(out, latency)


@dataclass(eq=False)
class VivaldiZone(StarZone):
    """Peer links (star rules) plus a latency from the coordinates (given in ms)."""

    netpoints: dict[str, NetPoint] = field(default_factory=dict, repr=False)

    def _coords(self, np: NetPoint) -> tuple[float, float, float]:
        if np.coords is None:
            raise PlatformError(
                f"{self.label}: {np.kind} '{np.name}' in Vivaldi zone '{self.name}' has no "
                'coordinates (add coordinates="x y z", in ms)'
            )
        return np.coords

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        gw_src = gw_dst = None
        if src.kind == "zone":
            gw_src = self.netpoints.get("router_" + src.name)
            gw_dst = self.netpoints.get("router_" + dst.name)
        res = super().local_route(src, dst, latency, glob)
        (x1, y1, z1), (x2, y2, z2) = self._coords(src), self._coords(dst)
        dist = math.sqrt((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2)) + abs(z1) + abs(z2)
        res.latency += dist / 1000.0
        res.gw_src, res.gw_dst = gw_src, gw_dst
        return res
