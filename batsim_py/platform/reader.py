"""The SimGrid platform XML reader (DTD 4 and 4.1): XML elements in, builder calls out.

Every problem becomes a one-line PlatformError naming the file, line and element, what is wrong
and how to fix it: a user facing a 500-line platform must not have to guess. SimGrid's rules are
in simgrid-models §1; where SimGrid aborts, so do we (with a better message).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from batsim_py.errors import PlatformError
from batsim_py.platform.builder import LOOPBACK_NAME, PlatformBuilder
from batsim_py.platform.cluster import ClusterArgs, expand_cluster, parse_radicals
from batsim_py.platform.hierarchical import Counters, expand_hierarchical
from batsim_py.platform.model import Link, Platform
from batsim_py.platform.traces import Attachment, Profile, parse_profile, read_profile_file
from batsim_py.platform.units import (
    parse_bandwidth,
    parse_int_prefix,
    parse_speed,
    parse_speed_list,
    parse_time,
    strtod_prefix,
)
from batsim_py.platform.xmltree import Node, parse_file
from batsim_py.platform.zones import (
    Declared,
    EmptyZone,
    GraphZone,
    Hop,
    NetPoint,
    StarZone,
    TableZone,
    VivaldiZone,
    Zone,
)

log = logging.getLogger(__name__)

# element -> (attributes it accepts, attributes it requires); from the 4.1 DTD.
_ATTRS: dict[str, tuple[frozenset[str], frozenset[str]]] = {}


def _spec(tags: str, allowed: str, required: str = "") -> None:
    for tag in tags.split():
        _ATTRS[tag] = (frozenset(allowed.split()), frozenset(required.split()))


_spec("platform", "version")
_spec("config", "id")
_spec("prop", "id value", "id value")
_spec("zone AS", "id routing", "id routing")
_spec("host", "id speed core speed_file availability_file state_file coordinates pstate",
      "id speed")
_spec("disk", "id read_bw write_bw", "read_bw write_bw")
_spec("router", "id coordinates", "id")
_spec("link", "id bandwidth latency bandwidth_file latency_file state_file sharing_policy",
      "id bandwidth")
_spec("route", "src dst symmetrical", "src dst")
_spec("zoneRoute ASroute", "src dst gw_src gw_dst symmetrical", "src dst gw_src gw_dst")
_spec("bypassRoute", "src dst", "src dst")
_spec("bypassZoneRoute bypassASroute", "src dst gw_src gw_dst", "src dst gw_src gw_dst")
_spec("link_ctn", "id direction", "id")
_spec("cluster", "id prefix suffix radical speed bw lat core sharing_policy topology "
      "topo_parameters bb_bw bb_lat bb_sharing_policy router_id limiter_link loopback_bw "
      "loopback_lat", "id prefix suffix radical speed bw lat")
_spec("cabinet", "id prefix suffix radical speed bw lat", "id prefix suffix radical speed bw lat")
_spec("backbone", "id bandwidth latency", "id bandwidth latency")
_spec("host_link", "id up down", "id up down")
_spec("peer", "id speed bw_in bw_out lat coordinates speed_file availability_file state_file",
      "id speed bw_in bw_out")

_ROUTINGS = {r.lower(): r for r in ("Full", "Floyd", "Dijkstra", "DijkstraCache", "None",
                                    "Cluster", "Vivaldi", "Wifi")}
_ZONE_CLASSES: dict[str, type[Zone]] = {
    "Full": TableZone, "Floyd": GraphZone, "Dijkstra": GraphZone, "DijkstraCache": GraphZone,
    "None": EmptyZone, "Cluster": StarZone, "Vivaldi": VivaldiZone,
}
_REMOVED = {
    "include": "<include> was removed in SimGrid 3.18: paste the included file's content here",
    "storage_type": "storages were removed in SimGrid 3.27: use <disk> in a <host>",
    "storage": "storages were removed in SimGrid 3.27: use <disk> in a <host>",
    "mount": "storages were removed in SimGrid 3.27: use <disk> in a <host>",
}
_spec("trace", "id periodicity file", "id periodicity")
_spec("trace_connect", "kind trace element", "trace element")
STATE_PROFILES = ("state profiles (on/off) are not supported by batsim-py: Batsim 4.2.1 does not "
                  "handle the failures they cause (SimGrid kills the actors of a host turned off, "
                  "so its jobs never end); make machines unavailable with external events "
                  "(--events, machine_unavailable) instead")
_UNSUPPORTED = {
    "actor": "deployment (<actor>) does not belong in a Batsim platform: remove it",
    "process": "deployment (<process>) does not belong in a Batsim platform: remove it",
}
_IGNORED = {"random", "model_prop"}


def load_platform(path: str) -> Platform:
    """Read a SimGrid platform file (versions 4 and 4.1) the way SimGrid/Batsim would."""
    return _Reader(str(path)).read()


@dataclass
class _ClusterZoneParts:
    """What a routing="Cluster" zone declares and SimGrid only wires when the zone ends."""

    backbone: tuple[Node, str, float, float] | None = None
    host_links: list[tuple[Node, str, str, str]] = field(default_factory=list)
    cabinets: list[Node] = field(default_factory=list)


class _Reader:
    def __init__(self, path: str) -> None:
        self.label = path
        self.b = PlatformBuilder(path=path, label=path)
        self.counters = Counters()  # SimGrid's statics of the hierarchical clusters
        self.profiles: dict[str, Profile] = {}  # <trace>s by id
        self.attachments: list[tuple[Node, Attachment]] = []
        self.connected: set[tuple[str, str]] = set()

    # -- messages and attributes ------------------------------------------------------------

    def error(self, node: Node, message: str) -> PlatformError:
        return PlatformError(f"{self.label}:{node.line}: {node.describe()}: {message}")

    def check_attrs(self, node: Node) -> None:
        allowed, required = _ATTRS[node.tag]
        for name in node.attrs:
            if name not in allowed:
                raise self.error(node, f"unknown attribute '{name}' (allowed: "
                                       f"{', '.join(sorted(allowed))})")
        for name in sorted(required):
            if name not in node.attrs:
                raise self.error(node, f"required attribute '{name}' is missing")

    def value(self, node: Node, attr: str, parse: Callable[[str], float],
              default: str | None = None) -> float:
        """Parse an attribute with a unit; an absent or empty optional one gives 0."""
        text = node.attrs.get(attr, default)
        if text is None or text == "":
            return 0.0
        try:
            v = parse(text)
        except ValueError as e:
            raise self.error(node, f"{attr} {e}") from None
        if math.isnan(v) or v < 0:
            raise self.error(node, f"{attr} '{text}' must be a non-negative number")
        return v

    def integer(self, node: Node, attr: str, default: str) -> int:
        text = node.attrs.get(attr, default)
        try:
            return parse_int_prefix(text)
        except ValueError as e:
            raise self.error(node, f"{attr} {e}") from None

    def choice(self, node: Node, attr: str, choices: tuple[str, ...], default: str) -> str:
        text = node.attrs.get(attr, default)
        if text not in choices:
            raise self.error(node, f"{attr} '{text}' is not one of {', '.join(choices)}")
        return text

    def coords(self, node: Node) -> tuple[float, float, float] | None:
        text = node.attrs.get("coordinates", "")
        if text == "":
            return None
        parts = text.split(" ")
        values = [strtod_prefix(p) for p in parts]
        if len(parts) != 3 or any(v is None for v in values):
            raise self.error(node, f"coordinates '{text}' must be 3 numbers separated by single "
                                   "spaces, e.g. \"1.5 -2 0.3\"")
        x, y, z = (v[0] for v in values if v is not None)
        return (x, y, z)

    def profile_files(self, node: Node, kinds: dict[str, str]) -> None:
        """`speed_file`, `bandwidth_file`, `latency_file` attach a profile read from a file;
        `state_file` is refused (STATE_PROFILES)."""
        if node.attrs.get("state_file", ""):
            raise self.error(node, f"state_file: {STATE_PROFILES}")
        if node.attrs.get("availability_file", ""):
            log.warning("%s:%d: availability_file is deprecated: use speed_file", self.label,
                        node.line)
        chosen: dict[str, tuple[str, str]] = {}  # kind -> (attribute, path); later ones win
        for attr, kind in kinds.items():
            if node.attrs.get(attr, ""):
                chosen[kind] = (attr, node.attrs[attr])
        for kind, (attr, path) in chosen.items():
            try:
                profile = read_profile_file(path, self.label)
            except ValueError as exc:
                raise self.error(node, f"{attr}: {exc}") from None
            self.attachments.append((node, Attachment(kind, node.attrs["id"], profile)))

    def trace(self, node: Node) -> None:
        self.check_attrs(node)
        name = node.attrs["id"]
        if name in self.profiles:
            raise self.error(node, f"trace '{name}' is declared twice")
        text = node.attrs["periodicity"]
        split = strtod_prefix(text)
        if split is None or split[1].strip() or not math.isfinite(split[0]):
            raise self.error(node, f"periodicity '{text}' is not a number (seconds; <= 0: the "
                                   "profile does not loop)")
        periodicity = split[0]
        try:
            if node.attrs.get("file", ""):
                profile = read_profile_file(node.attrs["file"], self.label)
            elif node.text.strip():
                profile = parse_profile(name, node.text, periodicity)
            else:
                raise ValueError("a <trace> needs a file attribute or its events as text")
        except ValueError as exc:
            raise self.error(node, str(exc)) from None
        self.profiles[name] = profile

    def trace_connect(self, node: Node) -> None:
        self.check_attrs(node)
        kind = self.choice(node, "kind", ("HOST_AVAIL", "SPEED", "LINK_AVAIL", "BANDWIDTH",
                                          "LATENCY"), "HOST_AVAIL")
        if kind in ("HOST_AVAIL", "LINK_AVAIL"):
            raise self.error(node, f"kind {kind}"
                                   f"{' (the default)' if 'kind' not in node.attrs else ''}: "
                                   f"{STATE_PROFILES}")
        trace = node.attrs["trace"]
        profile = self.profiles.get(trace)
        if profile is None:
            raise self.error(node, f"trace '{trace}' is unknown (declare the <trace> first)")
        # SimGrid keeps one element per trace and kind (the first connection).
        if (trace, kind) not in self.connected:
            self.connected.add((trace, kind))
            self.attachments.append((node, Attachment(kind, node.attrs["element"], profile)))

    def check_attachments(self) -> None:
        seen: dict[tuple[str, str], int] = {}
        for node, a in self.attachments:
            if (a.kind, a.element) in seen:
                raise self.error(node, f"{a.element} already has a {a.kind} profile (line "
                                       f"{seen[a.kind, a.element]}): a resource takes one "
                                       "profile of each kind")
            seen[a.kind, a.element] = node.line
            if a.kind == "SPEED":
                if a.element not in self.b.hosts:
                    raise self.error(node, f"SPEED profile: host '{a.element}' does not exist")
            elif a.element not in self.b.links and a.element not in self.b.split:
                raise self.error(node, f"{a.kind} profile: link '{a.element}' does not exist")

    def props(self, node: Node) -> dict[str, str]:
        """The element's <prop>s; SimGrid keeps the first value of a repeated id."""
        out: dict[str, str] = {}
        for child in node.children:
            if child.tag == "prop":
                self.check_attrs(child)
                out.setdefault(child.attrs["id"], child.attrs["value"])
        return out

    def build(self, node: Node, action: Callable[[], object]) -> object:
        """Run a builder call, turning its ValueError into a located PlatformError."""
        try:
            return action()
        except ValueError as e:
            raise self.error(node, str(e)) from None

    # -- document ---------------------------------------------------------------------------

    def read(self) -> Platform:
        root = parse_file(self.label, self.label)
        if root.tag != "platform":
            raise self.error(root, "the root element must be <platform version=\"4.1\">")
        self.check_attrs(root)
        self.check_version(root)
        for child in root.children:
            tag = child.tag
            if tag == "config":
                self.config(child)
            elif tag in ("zone", "AS"):
                self.zone(child, None)
            elif tag == "cluster":
                self.cluster(child, None)
            else:
                self.common(child, "<config>, <zone>, <cluster>")
        if self.b.root is None:
            raise self.error(root, "the platform declares no <zone> nor <cluster>")
        self.check_attachments()
        platform = self.b.build()
        platform.traces = tuple(a for _, a in self.attachments)
        return platform

    def check_version(self, node: Node) -> None:
        text = node.attrs.get("version", "0.0")
        split = strtod_prefix(text)
        if split is None or split[1] != "" or not math.isfinite(split[0]):
            raise self.error(node, f"version '{text}' is not a number (use version=\"4.1\")")
        v = math.floor(split[0] * 100 + 0.5)
        if v < 400:
            raise self.error(node, f"version {text} is too old (SimGrid accepts 4 and 4.1): "
                                   "convert the file with SimGrid's simgrid_update_xml")
        if v > 410:
            raise self.error(node, f"version {text} comes from the future (SimGrid accepts 4 "
                                   "and 4.1): use version=\"4.1\"")

    def common(self, node: Node, allowed: str) -> None:
        """Elements with the same fate everywhere; anything else is misplaced."""
        if node.tag in _REMOVED:
            raise self.error(node, _REMOVED[node.tag])
        if node.tag == "trace":
            return self.trace(node)
        if node.tag == "trace_connect":
            return self.trace_connect(node)
        if node.tag in _UNSUPPORTED:
            raise self.error(node, _UNSUPPORTED[node.tag])
        if node.tag in _IGNORED:
            return
        if node.tag in _ATTRS or node.tag in ("zone", "AS"):
            raise self.error(node, f"misplaced element (allowed here: {allowed})")
        raise self.error(node, f"unknown element (allowed here: {allowed})")

    def config(self, node: Node) -> None:
        self.check_attrs(node)
        if self.b.root is not None:
            raise self.error(node, "<config> must come before any <zone> or <cluster>")
        for child in node.children:
            if child.tag != "prop":
                raise self.error(child, "only <prop id=... value=...> may appear in <config>")
        for key, value in self.props(node).items():
            self.b.config.setdefault(key, value)

    # -- zones --------------------------------------------------------------------------------

    def zone(self, node: Node, parent: Zone | None) -> None:
        self.check_attrs(node)
        routing = _ROUTINGS.get(node.attrs["routing"].lower())
        if routing is None:
            raise self.error(node, f"routing '{node.attrs['routing']}' is unknown (use Full, "
                                   "Floyd, Dijkstra, DijkstraCache, None, Cluster or Vivaldi)")
        if routing == "Wifi":
            raise self.error(node, "Wifi zones are not supported by the ptask_L07 model that "
                                   "Batsim uses: use another routing")
        zone = self.build(node, lambda: self.b.new_zone(
            _ZONE_CLASSES[routing], node.attrs["id"], routing, parent))
        assert isinstance(zone, Zone)
        zone.properties.update(self.props(node))
        parts = _ClusterZoneParts()
        allowed = ("<prop>, <zone>, <cluster>, <host>, <router>, <link>, <peer>, <route>, "
                   "<zoneRoute>, <bypassRoute>, <bypassZoneRoute>")
        for child in node.children:
            tag = child.tag
            if tag == "prop":
                continue
            if tag in ("zone", "AS"):
                self.zone(child, zone)
            elif tag == "cluster":
                self.cluster(child, zone)
            elif tag == "host":
                self.host(child, zone)
            elif tag == "router":
                self.check_attrs(child)
                self.build(child, lambda c=child: self.b.add_router(
                    zone, c.attrs["id"], self.coords(c)))
            elif tag == "link":
                self.link(child)
            elif tag == "peer":
                self.peer(child, zone)
            elif tag == "route":
                self.route(child, zone)
            elif tag in ("zoneRoute", "ASroute"):
                self.zone_route(child, zone)
            elif tag == "bypassRoute":
                self.bypass_route(child, zone)
            elif tag in ("bypassZoneRoute", "bypassASroute"):
                self.bypass_zone_route(child, zone)
            elif tag in ("backbone", "host_link", "cabinet"):
                self.cluster_part(child, zone, parts)
            elif tag == "config":
                raise self.error(child, "<config> must come first in <platform>, before zones")
            else:
                self.common(child, allowed)
        if isinstance(zone, StarZone) and not isinstance(zone, VivaldiZone):
            self.seal_cluster_zone(zone, parts)

    def cluster_part(self, node: Node, zone: Zone, parts: _ClusterZoneParts) -> None:
        self.check_attrs(node)
        if not isinstance(zone, StarZone) or isinstance(zone, VivaldiZone):
            raise self.error(node, f"<{node.tag}> is only allowed in routing=\"Cluster\" zones "
                                   f"(zone '{zone.name}' has routing {zone.routing})")
        a = node.attrs
        if node.tag == "backbone":
            if parts.backbone is not None:
                raise self.error(node, "a Cluster zone has at most one <backbone>")
            parts.backbone = (node, a["id"], self.value(node, "bandwidth", parse_bandwidth),
                              self.value(node, "latency", parse_time))
        elif node.tag == "host_link":
            parts.host_links.append((node, a["id"], a["up"], a["down"]))
        else:
            parts.cabinets.append(node)

    def seal_cluster_zone(self, zone: StarZone, parts: _ClusterZoneParts) -> None:
        """Wire backbone, host_links and cabinets, as SimGrid does when the zone ends."""
        backbone: Link | None = None
        if parts.backbone is not None:
            node, name, bw, lat = parts.backbone
            backbone = self.build(node, lambda: self.b.add_link(name, bw, lat, "SHARED"))  # type: ignore[assignment]
        bb = [backbone] if backbone is not None else []
        for node, host, up, down in parts.host_links:
            np = self.b.netpoints.get(host)
            if np is None or np.kind != "host" or np.zone is not zone:
                raise self.error(node, f"no host '{host}' in zone '{zone.name}' (declare the "
                                       "<host> in this zone)")
            links = []
            for name in (up, down):
                link = self.b.links.get(name)
                if link is None:
                    raise self.error(node, f"no link named '{name}' (declare it; a SPLITDUPLEX "
                                           "link X is used as X_UP / X_DOWN)")
                links.append(link)
            star = zone.links_of(np)
            star.up, star.down = [links[0], *bb], [*bb, links[1]]
        for node in parts.cabinets:
            a = node.attrs
            radicals = self.radicals(node)
            speed = self.value(node, "speed", parse_speed)
            bw, lat = self.value(node, "bw", parse_bandwidth), self.value(node, "lat", parse_time)
            for r in radicals:
                name = f"{a['prefix']}{r}{a['suffix']}"
                self.build(node, partial(self.cabinet_host, zone, name, speed, bw, lat, bb))

    def cabinet_host(self, zone: StarZone, name: str, speed: float, bw: float, lat: float,
                     bb: list[Link]) -> None:
        np = self.b.add_host(zone, name, (speed,), 1, 0, {})
        up = self.b.add_link(f"link_{name}_UP", bw, lat, "SHARED")
        down = self.b.add_link(f"link_{name}_DOWN", bw, lat, "SHARED")
        star = zone.links_of(np)
        star.up, star.down = [up, *bb], [*bb, down]  # type: ignore[list-item]

    def radicals(self, node: Node) -> list[int]:
        try:
            return parse_radicals(node.attrs["radical"])
        except ValueError as e:
            raise self.error(node, f"radical: {e}") from None

    # -- hosts and links ----------------------------------------------------------------------

    def host(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        self.profile_files(node, {"availability_file": "SPEED", "speed_file": "SPEED"})
        if zone.children:
            raise self.error(node, f"zone '{zone.name}' holds zones: put hosts in a leaf zone")
        try:
            speeds = parse_speed_list(node.attrs["speed"])
        except ValueError as e:
            raise self.error(node, f"speed {e}") from None
        cores = self.integer(node, "core", "1")
        pstate = self.integer(node, "pstate", "0")
        coords = self.coords(node)
        for child in node.children:
            if child.tag == "disk":
                self.check_attrs(child)
                self.value(child, "read_bw", parse_bandwidth)
                self.value(child, "write_bw", parse_bandwidth)
            elif child.tag != "prop":
                self.common(child, "<prop>, <disk>")
        props = self.props(node)
        self.build(node, lambda: self.b.add_host(zone, node.attrs["id"], speeds, cores, pstate,
                                                 props, coords))

    def link(self, node: Node) -> None:
        self.check_attrs(node)
        self.profile_files(node, {"bandwidth_file": "BANDWIDTH", "latency_file": "LATENCY"})
        policy = self.choice(node, "sharing_policy",
                             ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE", "WIFI"), "SHARED")
        if policy == "WIFI":
            raise self.error(node, "WIFI links are not supported by the ptask_L07 model that "
                                   "Batsim uses: use SHARED, SPLITDUPLEX or FATPIPE")
        if policy == "FULLDUPLEX":
            log.warning("%s:%d: FULLDUPLEX is deprecated, read as SPLITDUPLEX", self.label,
                        node.line)
            policy = "SPLITDUPLEX"
        bandwidths = [b for b in _split_any(node.attrs["bandwidth"], ",;")]
        if len(bandwidths) != 1:
            raise self.error(node, f"bandwidth '{node.attrs['bandwidth']}': only WIFI links "
                                   "may have several bandwidths (give one value)")
        try:
            bw = parse_bandwidth(bandwidths[0])
        except ValueError as e:
            raise self.error(node, f"bandwidth {e}") from None
        if math.isnan(bw) or bw < 0:
            raise self.error(node, f"bandwidth '{bandwidths[0]}' must be non-negative")
        lat = self.value(node, "latency", parse_time, "0")
        for child in node.children:
            if child.tag != "prop":
                self.common(child, "<prop>")
        self.props(node)
        self.build(node, lambda: self.b.add_link(node.attrs["id"], bw, lat, policy))

    def peer(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        if not isinstance(zone, VivaldiZone):
            raise self.error(node, "<peer> is only allowed in routing=\"Vivaldi\" zones")
        self.profile_files(node, {"availability_file": "SPEED", "speed_file": "SPEED"})
        name = node.attrs["id"]
        speed = self.value(node, "speed", parse_speed)
        bw_in = self.value(node, "bw_in", parse_bandwidth)
        bw_out = self.value(node, "bw_out", parse_bandwidth)
        if node.attrs.get("lat"):
            log.warning("%s:%d: <peer> lat is ignored by SimGrid", self.label, node.line)
        coords = self.coords(node)

        def make() -> None:
            np = self.b.add_host(zone, name, (speed,), 1, 0, {}, coords)
            up = self.b.add_link(f"link_{name}_UP", bw_out, 0.0, "SHARED")
            down = self.b.add_link(f"link_{name}_DOWN", bw_in, 0.0, "SHARED")
            star = zone.links_of(np)
            star.up, star.down = [up], [down]  # type: ignore[list-item]

        self.build(node, make)

    def cluster(self, node: Node, parent: Zone | None) -> None:
        self.check_attrs(node)
        a = node.attrs
        topology = self.choice(node, "topology", ("FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"),
                               "FLAT")
        policy = self.choice(node, "sharing_policy",
                             ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"), "SPLITDUPLEX")
        bb_policy = self.choice(node, "bb_sharing_policy", ("SHARED", "FATPIPE"), "SHARED")
        for child in node.children:
            if child.tag != "prop":
                self.common(child, "<prop>")
        try:
            speeds = parse_speed_list(a["speed"])
        except ValueError as e:
            raise self.error(node, f"speed {e}") from None
        args = ClusterArgs(
            id=a["id"],
            prefix=a["prefix"],
            suffix=a["suffix"],
            radicals=self.radicals(node),
            speeds=speeds,
            cores=self.integer(node, "core", "1"),
            bw=self.value(node, "bw", parse_bandwidth),
            lat=self.value(node, "lat", parse_time),
            sharing_policy="SPLITDUPLEX" if policy in ("SPLITDUPLEX", "FULLDUPLEX") else "SHARED",
            bb_bw=self.value(node, "bb_bw", parse_bandwidth),
            bb_lat=self.value(node, "bb_lat", parse_time, "0s"),
            bb_sharing_policy=bb_policy,
            router_id=a.get("router_id", ""),
            limiter_link=self.value(node, "limiter_link", parse_bandwidth),
            loopback_bw=self.value(node, "loopback_bw", parse_bandwidth),
            loopback_lat=self.value(node, "loopback_lat", parse_time),
            properties=self.props(node),
        )
        if topology != "FLAT":
            parameters = a.get("topo_parameters", "")
            self.build(node, lambda: expand_hierarchical(self.b, parent, args, topology,
                                                         parameters, self.counters))
            return
        self.build(node, lambda: expand_cluster(self.b, parent, args))

    # -- routes -------------------------------------------------------------------------------

    def hops(self, node: Node) -> list[Hop]:
        hops: list[Hop] = []
        for child in node.children:
            if child.tag != "link_ctn":
                self.common(child, "<link_ctn>")
                continue
            self.check_attrs(child)
            name = child.attrs["id"]
            direction = self.choice(child, "direction", ("UP", "DOWN", "NONE"), "NONE")
            if direction == "NONE":
                link = self.b.loopback if name == LOOPBACK_NAME else self.b.links.get(name)
                if link is None:
                    if name in self.b.split:
                        raise self.error(child, f"link '{name}' is SPLITDUPLEX: add "
                                                'direction="UP" or direction="DOWN"')
                    raise self.error(child, f"no link named '{name}' (declare the <link> "
                                            "before the routes that use it)")
                hops.append(Hop(link, link))
            else:
                pair = self.b.split.get(name)
                if pair is None:
                    why = ("is not SPLITDUPLEX: remove direction" if name in self.b.links
                           else "does not exist (declare the <link> before the routes)")
                    raise self.error(child, f"link '{name}' {why}")
                up, down = pair
                hops.append(Hop(up, down) if direction == "UP" else Hop(down, up))
        return hops

    def endpoint(self, node: Node, attr: str) -> NetPoint:
        name = node.attrs[attr]
        np = self.b.netpoints.get(name)
        if np is None:
            raise self.error(node, f"{attr} '{name}' is not a known host, router or zone "
                                   "(declare it before this route)")
        return np

    def symmetrical(self, node: Node) -> bool:
        return self.choice(node, "symmetrical", ("YES", "NO", "yes", "no"), "YES") in ("YES",
                                                                                       "yes")

    def route(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        src, dst = self.endpoint(node, "src"), self.endpoint(node, "dst")
        hops = self.hops(node)
        for np, attr in ((src, "src"), (dst, "dst")):
            if np.kind == "zone" or np.zone is not zone:
                raise self.error(node, f"{attr} '{np.name}' is not a host or router of zone "
                                       f"'{zone.name}' (use <zoneRoute> between zones)")
        if not hops:
            raise self.error(node, "empty route (add at least one <link_ctn>)")
        if isinstance(zone, StarZone):
            if src is not dst:
                raise self.error(node, f"zone '{zone.name}' ({zone.routing}) only accepts self "
                                       "routes (src = dst); use <host_link> or <peer> links")
            zone.links_of(src).loopback = [h.fwd for h in hops]
            return
        if not isinstance(zone, TableZone):
            raise self.error(node, f"zone '{zone.name}' has routing None: it has no routes")
        self.add_routes(node, zone, src, dst, hops, None, None, self.symmetrical(node))

    def add_routes(self, node: Node, zone: TableZone, src: NetPoint, dst: NetPoint,
                   hops: list[Hop], gw_src: NetPoint | None, gw_dst: NetPoint | None,
                   symmetrical: bool) -> None:
        if (src, dst) in zone.table:
            raise self.error(node, f"the route from '{src.name}' to '{dst.name}' is declared "
                                   "twice (routes are symmetrical by default: remove one or "
                                   'use symmetrical="NO")')
        zone.table[(src, dst)] = Declared(tuple(h.fwd for h in hops), gw_src, gw_dst)
        if symmetrical and src is not dst:
            if (dst, src) in zone.table:
                raise self.error(node, f"the route from '{dst.name}' to '{src.name}' already "
                                       'exists: declare this one with symmetrical="NO"')
            back = tuple(h.back for h in reversed(hops))
            zone.table[(dst, src)] = Declared(back, gw_dst, gw_src)

    def gateways(self, node: Node, zone: Zone) -> tuple[NetPoint, NetPoint, NetPoint, NetPoint]:
        src, dst = self.endpoint(node, "src"), self.endpoint(node, "dst")
        gws = self.endpoint(node, "gw_src"), self.endpoint(node, "gw_dst")
        for np, attr in ((src, "src"), (dst, "dst")):
            if np.kind != "zone" or np.zone is not zone:
                raise self.error(node, f"{attr} '{np.name}' is not a zone inside zone "
                                       f"'{zone.name}'")
        for np, gw, attr in ((src, gws[0], "gw_src"), (dst, gws[1], "gw_dst")):
            inner = next(z for z in zone.children if z.netpoint is np)
            if gw.kind == "zone" or not inner.contains(gw):
                raise self.error(node, f"{attr} '{gw.name}' is not a host or router inside zone "
                                       f"'{np.name}'")
        if gws[0] is gws[1]:
            raise self.error(node, "gw_src and gw_dst must differ")
        return src, dst, gws[0], gws[1]

    def zone_route(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        src, dst, gw_src, gw_dst = self.gateways(node, zone)
        hops = self.hops(node)
        if not hops:
            raise self.error(node, "empty route (add at least one <link_ctn>)")
        if not isinstance(zone, TableZone):
            raise self.error(node, f"zone '{zone.name}' ({zone.routing}) cannot hold "
                                   "<zoneRoute>s: use Full, Floyd or Dijkstra routing")
        self.add_routes(node, zone, src, dst, hops, gw_src, gw_dst, self.symmetrical(node))

    def add_bypass(self, node: Node, zone: Zone, key: tuple[NetPoint, NetPoint],
                   route: Declared) -> None:
        if not route.links:
            raise self.error(node, "empty bypass route (add at least one <link_ctn>)")
        if key in zone.bypass:
            raise self.error(node, "this bypass route is declared twice")
        zone.bypass[key] = route

    def bypass_route(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        src, dst = self.endpoint(node, "src"), self.endpoint(node, "dst")
        links = tuple(h.fwd for h in self.hops(node))
        self.add_bypass(node, zone, (src, dst), Declared(links))

    def bypass_zone_route(self, node: Node, zone: Zone) -> None:
        self.check_attrs(node)
        src, dst = self.endpoint(node, "src"), self.endpoint(node, "dst")
        gw_src, gw_dst = self.endpoint(node, "gw_src"), self.endpoint(node, "gw_dst")
        links = tuple(h.fwd for h in self.hops(node))
        self.add_bypass(node, zone, (src, dst), Declared(links, gw_src, gw_dst))


def _split_any(text: str, seps: str) -> list[str]:
    parts = [text]
    for sep in seps:
        parts = [p for part in parts for p in part.split(sep)]
    return parts
