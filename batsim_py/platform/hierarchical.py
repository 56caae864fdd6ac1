"""`<cluster topology="TORUS|FAT_TREE|DRAGONFLY">`: SimGrid 3.32's hierarchical clusters.

A port of SimGrid's construction and routing (src/surf/sg_platf.cpp
`sg_platf_new_cluster_hierarchical`, src/kernel/routing/{ClusterZone,TorusZone,FatTreeZone,
DragonflyZone}.cpp), names and quirks included, because link names show in routes and the
routes set every transfer's time. Hosts take the radicals in order (host k is
`prefix + radicals[k] + suffix`, extra radicals are ignored); `bw`, `lat` and
`sharing_policy` apply to every network link (SPLITDUPLEX: `_UP`/`_DOWN` pairs, anything else
one SHARED link used both ways); an optional loopback (`<id>_link_<radical>_loopback`, FATPIPE)
and limiter (`<id>_link_<k>_limiter`) per host. There is no backbone and no router: reach such
a cluster from another zone through a `<zoneRoute>` whose gateway is one of its hosts.

Kept on purpose: the fat tree's and the dragonfly's link numbers (and the fat tree's node
positions) continue from one such cluster to the next in a platform (SimGrid keeps them in
function-level statics); a fat tree's descent may take several hops per step (its loop keeps
going with the new node); a dragonfly inside one group crosses chassis as SimGrid's minimal
routing does. Tests compare every route of small instances with real SimGrid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from batsim_py.platform.builder import PlatformBuilder
from batsim_py.platform.cluster import ClusterArgs
from batsim_py.platform.model import Link
from batsim_py.platform.zones import GlobalRoute, Local, NetPoint, Zone

Pair = tuple[Link, Link]  # (up, down): the same link twice unless SPLITDUPLEX


@dataclass
class Counters:
    """SimGrid's function-level statics, shared by every cluster of one platform."""

    fat_tree_position: int = 0
    fat_tree_link: int = 0
    dragonfly_link: int = 0


@dataclass(eq=False)
class ClusterBase(Zone):
    """SimGrid's ClusterBase: private links by position, host ids by name."""

    ids: dict[str, int] = field(default_factory=dict)
    private: dict[int, Pair] = field(default_factory=dict)
    links_per_node: int = 1
    has_loopback: bool = False
    has_limiter: bool = False

    def node_pos(self, i: int) -> int:
        return i * self.links_per_node

    def node_pos_with_loopback(self, i: int) -> int:
        return self.node_pos(i) + (1 if self.has_loopback else 0)

    def node_pos_with_loopback_limiter(self, i: int) -> int:
        return self.node_pos_with_loopback(i) + (1 if self.has_limiter else 0)

    def add_private(self, position: int, pair: Pair) -> None:
        self.private.setdefault(position, pair)  # (try_emplace: the first one stays)

    def ends(self, src: NetPoint, dst: NetPoint) -> tuple[int, int] | None:
        if src.kind == "router" or dst.kind == "router":
            return None
        return self.ids[src.name], self.ids[dst.name]

    def trivial_route(self, src: NetPoint, dst: NetPoint,
                      latency: float) -> Local | tuple[int, int]:
        """The cases SimGrid's torus and dragonfly routings share: nothing between routers,
        the loopback from a host to itself; otherwise the two hosts' ids, to be routed."""
        ends = self.ends(src, dst)
        if ends is None:
            return Local([], latency)
        s, t = ends
        if s == t and self.has_loopback:
            link = self.private[self.node_pos(s)][0]
            return Local([link], latency + link.latency)
        return ends


def _add(out: list[Link], link: Link, latency: float) -> float:
    out.append(link)
    return latency + link.latency


@dataclass(eq=False)
class TorusZone(ClusterBase):
    dims: list[int] = field(default_factory=list)

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        ends = self.trivial_route(src, dst, latency)
        if isinstance(ends, Local):
            return ends
        s, t = ends
        out: list[Link] = []
        dims = self.dims
        my, target = [], []
        size = 1
        for d in dims:
            my.append((s // size) % d)
            target.append((t // size) % d)
            size *= d
        current = s
        offset, up = 0, False
        while current != t:
            nxt = 0
            product = 1
            for j, d in enumerate(dims):
                if (current // product) % d != (t // product) % d:
                    if ((target[j] > my[j] and target[j] <= my[j] + d // 2)
                            or (my[j] > d // 2 and (my[j] + d // 2) % d >= target[j])):
                        nxt = (current + product - product * d if (current // product) % d == d - 1
                               else current + product)
                        offset = self.node_pos_with_loopback_limiter(current) + j
                        up = True
                    else:
                        nxt = (current - product + product * d if (current // product) % d == 0
                               else current - product)
                        offset = self.node_pos_with_loopback_limiter(nxt) + j
                        up = False
                    break
                product *= d
            if self.has_limiter:
                out.append(self.private[self.node_pos_with_loopback(current)][0])
            pair = self.private[offset]
            latency = _add(out, pair[0] if up else pair[1], latency)
            current = nxt
        if self.has_limiter:
            out.append(self.private[self.node_pos_with_loopback(t)][1])
        return Local(out, latency)


@dataclass(eq=False)
class _FatNode:
    id: int
    level: int
    position: int
    limiter: Link | None
    loopback: Link | None
    label: list[int]
    children: list[_FatLink | None]
    parents: list[_FatLink | None]


@dataclass(eq=False)
class _FatLink:
    up_node: _FatNode
    down_node: _FatNode
    up: Link
    down: Link


@dataclass(eq=False)
class FatTreeZone(ClusterBase):
    levels: int = 0
    down: list[int] = field(default_factory=list)  # children per node, by level
    up: list[int] = field(default_factory=list)  # parents per node, by level
    ports: list[int] = field(default_factory=list)  # parallel links to the lower level
    nodes: list[_FatNode] = field(default_factory=list)
    compute: dict[int, _FatNode] = field(default_factory=dict)
    by_level: list[int] = field(default_factory=list)

    def in_sub_tree(self, root: _FatNode, node: _FatNode) -> bool:
        if root.level <= node.level:
            return False
        for i in range(node.level):
            if root.label[i] != node.label[i]:
                return False
        for i in range(root.level, self.levels):
            if root.label[i] != node.label[i]:
                return False
        return True

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        out: list[Link] = []
        ends = self.ends(src, dst)
        if ends is None:
            return Local(out, latency)
        source, destination = self.compute[ends[0]], self.compute[ends[1]]
        if source.id == destination.id and self.has_loopback:
            assert source.loopback is not None
            return Local(out, _add(out, source.loopback, latency))
        current = source
        while not self.in_sub_tree(current, destination):
            d = destination.position
            for i in range(current.level):
                d //= self.up[i]
            d %= self.up[current.level] * self.ports[current.level]
            if current.limiter is not None:
                out.append(current.limiter)
            link = current.parents[d]
            assert link is not None
            latency = _add(out, link.up, latency)
            current = link.up_node
        while current is not destination:
            d = source.position % self.ports[current.level - 1]
            i = d * self.down[current.level - 1]
            while i < len(current.children):  # (SimGrid's loop goes on with the new node)
                if i % self.down[current.level - 1] == destination.label[current.level - 1]:
                    link = current.children[i]
                    assert link is not None
                    latency = _add(out, link.down, latency)
                    if current.limiter is not None:
                        out.append(current.limiter)
                    current = link.down_node
                i += 1
        if current.limiter is not None:
            out.append(current.limiter)
        return Local(out, latency)


@dataclass(eq=False)
class _Router:
    group: int
    chassis: int
    blade: int
    limiter: Link | None
    my_nodes: list[Link] = field(default_factory=list)
    green: list[Link | None] = field(default_factory=list)
    black: list[Link | None] = field(default_factory=list)
    blue: Link | None = None


@dataclass(eq=False)
class DragonflyZone(ClusterBase):
    groups: int = 0
    chassis: int = 0
    blades: int = 0
    nodes_per_blade: int = 0
    blue_links: int = 1  # parallel cables per blue (group), black (chassis), green (router) link
    black_links: int = 1
    green_links: int = 1
    links_per_link: int = 1
    routers: list[_Router] = field(default_factory=list)

    def coords(self, rank: int) -> tuple[int, int, int, int]:
        c, b, n = self.chassis, self.blades, self.nodes_per_blade
        group, rank = divmod(rank, c * b * n)
        chassis, rank = divmod(rank, b * n)
        blade, node = divmod(rank, n)
        return group, chassis, blade, node

    def local_route(self, src: NetPoint, dst: NetPoint, latency: float, glob: GlobalRoute) -> Local:
        ends = self.trivial_route(src, dst, latency)
        if isinstance(ends, Local):
            return ends
        s, t = ends
        out: list[Link] = []
        cb = self.chassis * self.blades
        mg, mc, mb, mn = self.coords(s)
        tg, tc, tb, tn = self.coords(t)
        routers = self.routers
        mine = routers[mg * cb + mc * self.blades + mb]
        target = routers[tg * cb + tc * self.blades + tb]
        current = mine
        if self.has_limiter:
            out.append(self.private[self.node_pos_with_loopback(s)][0])
        latency = _add(out, mine.my_nodes[mn * self.links_per_link], latency)

        def hop(link: Link | None) -> float:
            assert link is not None
            return _add(out, link, latency)

        if target is not mine:
            if target.group != current.group:
                if current.blade != tg:
                    if current.limiter is not None:
                        out.append(current.limiter)
                    latency = hop(current.green[tg])
                    current = routers[mg * cb + mc * self.blades + tg]
                if current.chassis != 0:
                    if current.limiter is not None:
                        out.append(current.limiter)
                    latency = hop(current.black[0])
                    current = routers[mg * cb + tg]
                latency = hop(current.blue)
                if current.limiter is not None:
                    out.append(current.limiter)
                current = routers[tg * cb + mg]
            if target.blade != current.blade:
                if current.limiter is not None:
                    out.append(current.limiter)
                latency = hop(current.green[tb])
                current = routers[tg * cb + tb]
            if target.chassis != current.chassis:
                if current.limiter is not None:
                    out.append(current.limiter)
                latency = hop(current.black[tc])
        if target.limiter is not None:
            out.append(target.limiter)
        latency = _add(out, target.my_nodes[tn * self.links_per_link + self.links_per_link - 1],
                       latency)
        if self.has_limiter:
            out.append(self.private[self.node_pos_with_loopback(t)][1])
        return Local(out, latency)


# ------------------------------------------------------------------------------- building


def _ints(text: str, what: str) -> list[int]:
    out = []
    for piece in text.split(","):
        try:
            out.append(int(piece.strip()))
        except ValueError:
            raise ValueError(f"topo_parameters: {what} '{piece}' is not an integer") from None
    return out


def _link_pair(b: PlatformBuilder, name: str, bw: float, lat: float, split: bool) -> Pair:
    if split:
        up = b.add_link(name + "_UP", bw, lat, "SHARED")
        down = b.add_link(name + "_DOWN", bw, lat, "SHARED")
        assert up is not None and down is not None
        return up, down
    link = b.add_link(name, bw, lat, "SHARED")
    assert link is not None
    return link, link


def expand_hierarchical(b: PlatformBuilder, parent: Zone | None, c: ClusterArgs, topology: str,
                        parameters: str, counters: Counters) -> Zone:
    """Build a TORUS, FAT_TREE or DRAGONFLY cluster."""
    if c.bw <= 0:
        raise ValueError(f"bw must be > 0 for a {topology} cluster (its links' bandwidth)")
    split = c.sharing_policy == "SPLITDUPLEX"
    zone: ClusterBase
    if topology == "TORUS":
        dims = _ints(parameters, "dimension")
        if not dims or any(d <= 0 for d in dims):
            raise ValueError(f"topo_parameters '{parameters}': a TORUS needs dimensions > 0, "
                             'e.g. topo_parameters="4,4,2"')
        zone = b.new_zone(TorusZone, c.id, "Cluster", parent, dims=dims,  # type: ignore[assignment]
                          links_per_node=len(dims))
        count = prod(dims)
    elif topology == "FAT_TREE":
        parts = parameters.split(";")
        if len(parts) != 4:
            raise ValueError(f"topo_parameters '{parameters}': a FAT_TREE is "
                             '"LEVELS;DOWN,...;UP,...;PORTS,..." (4 parts separated by ";")')
        levels = _ints(parts[0], "number of levels")[0]
        down, up, ports = (_ints(p, "count") for p in parts[1:])
        if levels <= 0 or any(len(v) != levels or min(v) <= 0 for v in (down, up, ports)):
            raise ValueError(f"topo_parameters '{parameters}': a FAT_TREE needs LEVELS > 0 and "
                             "three vectors of LEVELS positive counts each")
        zone = b.new_zone(FatTreeZone, c.id, "Cluster", parent, levels=levels,  # type: ignore[assignment]
                          down=down, up=up, ports=ports)
        count = prod(down)
    elif topology == "DRAGONFLY":
        parts = parameters.split(";")
        pairs = [p.split(",") for p in parts[:3]]
        if len(parts) != 4 or any(len(p) != 2 for p in pairs):
            raise ValueError(f"topo_parameters '{parameters}': a DRAGONFLY is "
                             '"GROUPS,BLUE;CHASSIS,BLACK;ROUTERS,GREEN;NODES"')
        (g, blue), (ch, black), (r, green) = (_ints(",".join(p), "count") for p in pairs)
        n = _ints(parts[3], "number of nodes")[0]
        if min(g, blue, ch, black, r, green, n) <= 0:
            raise ValueError(f"topo_parameters '{parameters}': every DRAGONFLY count must be > 0")
        if g > 1 and g > r:
            raise ValueError(f"topo_parameters '{parameters}': SimGrid's dragonfly links group i "
                             "to group j through blade j of chassis 0: it needs at most as many "
                             f"groups ({g}) as routers per chassis ({r})")
        zone = b.new_zone(DragonflyZone, c.id, "Cluster", parent, groups=g,  # type: ignore[assignment]
                          chassis=ch, blades=r, nodes_per_blade=n, blue_links=blue,
                          black_links=black, green_links=green,
                          links_per_link=2 if split else 1)
        count = g * ch * r * n
    else:  # pragma: no cover - the reader only passes these three
        raise ValueError(f"unknown topology {topology}")
    if count > len(c.radicals):
        raise ValueError(f"the {topology} topology '{parameters}' has {count} hosts but radical "
                         f"gives {len(c.radicals)} (insufficient number of radicals)")
    loopbacks: list[Link | None] = []
    limiters: list[Link | None] = []
    for k in range(count):
        np = b.add_host(zone, f"{c.prefix}{c.radicals[k]}{c.suffix}", c.speeds, c.cores, 0,
                        dict(c.properties))
        zone.ids[np.name] = k
        loopback = limiter = None
        if c.loopback_bw > 0 or c.loopback_lat > 0:
            loopback = b.add_link(f"{c.id}_link_{c.radicals[k]}_loopback", c.loopback_bw,
                                  c.loopback_lat, "FATPIPE")
            assert loopback is not None
            if not zone.has_loopback:
                zone.has_loopback = True
                zone.links_per_node += 1
            zone.add_private(zone.node_pos(k), (loopback, loopback))
        if c.limiter_link > 0:
            limiter = b.add_link(f"{c.id}_link_{k}_limiter", c.limiter_link, 0.0, "SHARED")
            assert limiter is not None
            if not zone.has_limiter:
                zone.has_limiter = True
                zone.links_per_node += 1
            zone.add_private(zone.node_pos_with_loopback(k), (limiter, limiter))
        loopbacks.append(loopback)
        limiters.append(limiter)
        if isinstance(zone, TorusZone):
            _torus_links(b, zone, k, c.bw, c.lat, split)
    if isinstance(zone, FatTreeZone):
        _build_fat_tree(b, zone, c, loopbacks, limiters, c.bw, c.lat, split, counters)
    elif isinstance(zone, DragonflyZone):
        _build_dragonfly(b, zone, c, c.bw, c.lat, split, counters)
    return zone


def _torus_links(b: PlatformBuilder, zone: TorusZone, rank: int, bw: float, lat: float,
                 split: bool) -> None:
    position = zone.node_pos_with_loopback_limiter(rank)
    product = 1
    for j, d in enumerate(zone.dims):
        neighbor = rank - (d - 1) * product if (rank // product) % d == d - 1 else rank + product
        name = f"{zone.name}_link_from_{rank}_to_{neighbor}"
        zone.add_private(position + j, _link_pair(b, name, bw, lat, split))
        product *= d


def _build_fat_tree(b: PlatformBuilder, zone: FatTreeZone, c: ClusterArgs,
                    loopbacks: list[Link | None], limiters: list[Link | None], bw: float,
                    lat: float, split: bool, counters: Counters) -> None:
    levels, down, up, ports = zone.levels, zone.down, zone.up, zone.ports
    for k, (loopback, limiter) in enumerate(zip(loopbacks, limiters, strict=True)):
        node = _FatNode(k, 0, counters.fat_tree_position, limiter, loopback, [0] * levels,
                        [], [None] * (up[0] * ports[0]))
        counters.fat_tree_position += 1
        zone.compute.setdefault(k, node)
        zone.nodes.append(node)
    by_level = [prod(down)] + [0] * levels
    for i in range(levels):
        by_level[i + 1] = prod(up[: i + 1]) * prod(down[i + 1:])
    zone.by_level = by_level
    k = 2 * len(zone.nodes)
    cluster_id = zone.name
    for i in range(levels):
        for j in range(by_level[i + 1]):
            k -= 1
            limiter = None
            if c.limiter_link > 0:
                limiter = b.add_link(f"{cluster_id}_link_{k}_limiter", c.limiter_link, 0.0,
                                     "SHARED")
            parents: list[_FatLink | None] = ([None] * (up[i + 1] * ports[i + 1])
                                              if i != levels - 1 else [])
            zone.nodes.append(_FatNode(k, i + 1, j, limiter, None, [0] * levels,
                                       [None] * (down[i] * ports[i]), parents))
    # Labels (generate_labels).
    n = 0
    for i in range(levels + 1):
        current = [0] * levels
        maximum = [down[j] if j + 1 > i else up[j] for j in range(levels)]
        for _ in range(by_level[i]):
            zone.nodes[n].label = list(current)
            pos = 0
            while pos < levels:
                current[pos] += 1
                if current[pos] >= maximum[pos]:
                    current[pos] = 0
                    pos += 1
                else:
                    break
            n += 1
    # Links (connect_node_to_parents), nodes by level then position.
    start = 0
    for i in range(levels):
        parents_start = start + by_level[i]
        for node in zone.nodes[start:start + by_level[i]]:
            for parent in zone.nodes[parents_start:parents_start + by_level[i + 1]]:
                if parent.level == node.level + 1 and all(
                        parent.label[x] == node.label[x] or x + 1 == parent.level
                        for x in range(levels)):
                    for j in range(ports[i]):
                        name = (f"link_from_{node.id}_{parent.id}_{counters.fat_tree_link}")
                        pair = _link_pair(b, name, bw, lat, split)
                        counters.fat_tree_link += 1
                        link = _FatLink(parent, node, pair[0], pair[1])
                        parent.children[node.label[i] + j * down[i]] = link
                        node.parents[parent.label[i] + j * up[i]] = link
        start = parents_start


def _build_dragonfly(b: PlatformBuilder, zone: DragonflyZone, c: ClusterArgs, bw: float, lat: float,
                     split: bool, counters: Counters) -> None:
    g, ch, r, n = zone.groups, zone.chassis, zone.blades, zone.nodes_per_blade
    ident = 2 * g * ch * r * n
    for i in range(g):
        for j in range(ch):
            for k in range(r):
                limiter = None
                if c.limiter_link > 0:
                    ident -= 1
                    limiter = b.add_link(f"{zone.name}_link_{ident}_limiter", c.limiter_link,
                                         0.0, "SHARED")
                zone.routers.append(_Router(i, j, k, limiter))

    def link(name: str, count: int) -> Pair:
        return _link_pair(b, name, bw * count, lat, split)

    lpl = zone.links_per_link
    for i, router in enumerate(zone.routers):
        router.my_nodes = []
        router.green = [None] * r
        router.black = [None] * ch
        for j in range(n):
            up, down = link(f"local_link_from_router_{i}_to_node_{j}_{counters.dragonfly_link}",
                            1)
            router.my_nodes += [up, down] if lpl == 2 else [up]
            counters.dragonfly_link += 1
    green = black = blue = zone.routers
    for i in range(g * ch):
        for j in range(r):
            for k in range(j + 1, r):
                up, down = link(f"green_link_in_chassis_{i % ch}_between_routers_{j}_and_{k}_"
                                f"{counters.dragonfly_link}", zone.green_links)
                green[i * r + j].green[k] = up
                green[i * r + k].green[j] = down
                counters.dragonfly_link += 1
    for i in range(g):
        for j in range(ch):
            for k in range(j + 1, ch):
                for m in range(r):
                    up, down = link(f"black_link_in_group_{i}_between_chassis_{j}_and_{k}_blade_"
                                    f"{m}_{counters.dragonfly_link}", zone.black_links)
                    black[i * r * ch + j * r + m].black[k] = up
                    black[i * r * ch + k * r + m].black[j] = down
                    counters.dragonfly_link += 1
    for i in range(g):
        for j in range(i + 1, g):
            ri, rj = i * r * ch + j, j * r * ch + i
            up, down = link(f"blue_link_between_group_{i}_and_{j}_routers_{ri}_and_{rj}_"
                            f"{counters.dragonfly_link}", zone.blue_links)
            blue[ri].blue = up
            blue[rj].blue = down
            counters.dragonfly_link += 1
