"""Registries filled while reading a platform, and their assembly into a `Platform`.

Kept apart from the XML walk so that `<cluster>` expansion (and tests) can create hosts, links and
zones with the same uniqueness rules as SimGrid: hosts, routers and zones share one name space,
links another. Methods raise ValueError with the "what is wrong / how to fix" part of a message;
the reader prefixes it with the file, line and element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from batsim_py.platform.model import Host, Link, Platform
from batsim_py.platform.routing import make_resolver
from batsim_py.platform.zones import NetPoint, StarZone, VivaldiZone, Zone

LOOPBACK_NAME = "__loopback__"
LOOPBACK_BW = 10e9  # network/loopback-bw default (bytes/s)
LOOPBACK_LAT = 0.0  # network/loopback-lat default (s)


@dataclass(eq=False)
class HostSpec:
    netpoint: NetPoint
    speeds: tuple[float, ...]
    cores: int
    pstate: int
    properties: dict[str, str]


@dataclass(eq=False)
class PlatformBuilder:
    path: str
    label: str
    links: dict[str, Link] = field(default_factory=dict)
    split: dict[str, tuple[Link, Link]] = field(default_factory=dict)  # name -> (UP, DOWN)
    netpoints: dict[str, NetPoint] = field(default_factory=dict)
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    root: Zone | None = None
    _loopback: Link | None = None

    @property
    def loopback(self) -> Link:
        """SimGrid's hidden loopback link, created once the <config> items are known."""
        if self._loopback is None:
            bw = _config_float(self.config, "network/loopback-bw", LOOPBACK_BW)
            lat = _config_float(self.config, "network/loopback-lat", LOOPBACK_LAT)
            self._loopback = Link(LOOPBACK_NAME, bw, lat, "FATPIPE")
        return self._loopback

    # -- name spaces -------------------------------------------------------------------------

    def _claim_node(self, name: str, kind: str) -> None:
        other = self.netpoints.get(name)
        if other is not None:
            raise ValueError(
                f"the name '{name}' is already used by a {other.kind} (hosts, routers and zones "
                "share one name space: rename one of them)"
            )

    def _claim_link(self, name: str) -> None:
        if name in self.links or name in self.split or name == LOOPBACK_NAME:
            raise ValueError(f"link '{name}' is declared twice (link names must be unique)")

    # -- creation ----------------------------------------------------------------------------

    def new_zone(self, cls: type[Zone], name: str, routing: str, parent: Zone | None, **kw) -> Zone:
        self._claim_node(name, "zone")
        if parent is None and self.root is not None:
            raise ValueError(
                f"a second top-level zone '{name}' (the platform has one top-level <zone> or "
                f"<cluster>: put '{name}' inside '{self.root.name}')"
            )
        if isinstance(parent, StarZone):
            raise ValueError(f"zone '{parent.name}' is a Cluster zone and cannot contain zones")
        if parent is not None and any(np.kind == "host" for np in parent.members):
            raise ValueError(
                f"zone '{parent.name}' holds hosts, so it cannot also hold zones (a zone holds "
                "either hosts or zones: move the hosts into a zone of their own)"
            )
        zone = cls(name=name, routing=routing, parent=parent, label=self.label,
                   loopback=self.loopback, **kw)
        if isinstance(zone, VivaldiZone):
            zone.netpoints = self.netpoints
        zone.netpoint = NetPoint(name, "zone", parent)
        self.netpoints[name] = zone.netpoint
        if parent is None:
            self.root = zone
        else:
            parent.children.append(zone)
        return zone

    def add_link(self, name: str, bandwidth: float, latency: float, policy: str) -> Link | None:
        """Create a link; a SPLITDUPLEX one becomes name_UP and name_DOWN (returns None)."""
        self._claim_link(name)
        if bandwidth == math.inf:
            raise ValueError(
                f"link '{name}': bandwidth inf cannot be simulated: give a finite bandwidth (a "
                "huge value times its unit, such as 1e308GBps, is infinite too)"
            )
        if not bandwidth > 0:
            raise ValueError(
                f"link '{name}': bandwidth {bandwidth:g}: no byte would ever cross this link; "
                "give a bandwidth > 0"
            )
        if not 0 <= latency < math.inf:
            raise ValueError(
                f"link '{name}': latency {latency:g} cannot be simulated: give a finite latency "
                "(a huge value times its unit, such as 1e308w, is infinite too)"
            )
        if policy == "SPLITDUPLEX":
            up = Link(name + "_UP", bandwidth, latency, "SHARED")
            down = Link(name + "_DOWN", bandwidth, latency, "SHARED")
            for half in (up, down):
                self._claim_link(half.name)
            self.split[name] = (up, down)
            self.links[up.name] = up
            self.links[down.name] = down
            return None
        link = Link(name, bandwidth, latency, policy)
        self.links[name] = link
        return link

    def add_host(
        self,
        zone: Zone,
        name: str,
        speeds: tuple[float, ...],
        cores: int,
        pstate: int,
        properties: dict[str, str],
        coords: tuple[float, float, float] | None = None,
    ) -> NetPoint:
        self._claim_node(name, "host")
        if cores <= 0:
            raise ValueError(f"core count {cores} must be positive")
        for s in speeds:
            if not s >= 0:
                raise ValueError(f"speed {s} must be non-negative")
            if s == math.inf:
                raise ValueError(
                    "speed inf cannot be simulated: give a finite speed (a huge value after "
                    "its unit, such as 1e308Gf, is infinite too)"
                )
        if not 0 <= pstate < len(speeds):
            raise ValueError(
                f"pstate {pstate} does not exist (the host has {len(speeds)} pstates, "
                f"0..{len(speeds) - 1}, one per value of speed)"
            )
        np = NetPoint(name, "host", zone, coords)
        self.netpoints[name] = np
        zone.members.append(np)
        self.hosts[name] = HostSpec(np, speeds, cores, pstate, properties)
        return np

    def add_router(self, zone: Zone, name: str,
                   coords: tuple[float, float, float] | None = None) -> NetPoint:
        self._claim_node(name, "router")
        np = NetPoint(name, "router", zone, coords)
        self.netpoints[name] = np
        zone.members.append(np)
        return np

    # -- assembly ----------------------------------------------------------------------------

    def build(self) -> Platform:
        hosts: dict[str, Host] = {}
        for name in sorted(self.hosts, key=str.encode):
            spec = self.hosts[name]
            assert spec.netpoint.zone is not None
            zone_props: dict[str, str] = {}
            for z in reversed(spec.netpoint.zone.chain()):  # outer first, inner overrides
                zone_props.update(z.properties)
            zones = tuple(z.name for z in reversed(spec.netpoint.zone.chain()))
            hosts[name] = Host(name, spec.speeds, spec.cores, spec.pstate, spec.properties,
                               zone_props, zones)
        links = {LOOPBACK_NAME: self.loopback, **self.links}
        return Platform(
            path=self.path,
            hosts=hosts,
            links=links,
            resolve_route=make_resolver(self.netpoints, self.label),
            config=dict(self.config),
        )


def _config_float(config: dict[str, str], key: str, default: float) -> float:
    text = config.get(key)
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"<config> item {key}='{text}' is not a number") from None
