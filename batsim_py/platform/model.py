"""What a SimGrid platform is, once read: hosts with their pstates, links, routes, machines.

Routes are resolved lazily (`Platform.route`) because a 512-host cluster has 262k pairs and a
simulation only ever asks for a few of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    bandwidth: float  # bytes/s
    latency: float  # seconds
    policy: str  # "SHARED" or "FATPIPE" (SPLITDUPLEX links are expanded into _UP/_DOWN)


@dataclass(frozen=True, slots=True)
class Route:
    links: tuple[Link, ...]
    latency: float  # sum of the link latencies, in SimGrid's summation order


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    speeds: tuple[float, ...]  # flop/s per core, one per pstate
    cores: int
    pstate: int  # initial pstate
    properties: Mapping[str, str]
    zone_properties: Mapping[str, str]
    zones: tuple[str, ...] = ()  # ids of the zones holding the host, outermost first

    @property
    def speed(self) -> float:
        """Per-core speed of the initial pstate."""
        return self.speeds[self.pstate]


@dataclass(frozen=True, slots=True)
class Machine:
    """A Batsim resource: a compute or storage host with its id (the master is not one)."""

    id: int
    host: Host
    role: str  # "compute_node" or "storage"

    @property
    def name(self) -> str:
        return self.host.name


@dataclass(eq=False)
class Platform:
    path: str
    hosts: Mapping[str, Host]  # in byte-lexicographic name order
    links: Mapping[str, Link]
    resolve_route: Callable[[str, str], Route] = field(repr=False)
    _routes: dict[tuple[str, str], Route] = field(default_factory=dict, repr=False)
    config: Mapping[str, str] = field(default_factory=dict)  # the file's <config> items
    traces: tuple[Any, ...] = ()  # traces.Attachment: profiles applied during the run

    def set_link_latency(self, name: str, latency: float) -> None:
        """A latency profile changed a link's latency: routes resolved from now on see it
        (SimGrid computes a route's latency when an activity starts)."""
        object.__setattr__(self.links[name], "latency", latency)  # (Link is frozen otherwise)
        self._routes.clear()

    def route(self, src: str, dst: str) -> Route:
        """Route from host `src` to host `dst` (self routes included), cached."""
        key = (src, dst)
        r = self._routes.get(key)
        if r is None:
            r = self._routes[key] = self.resolve_route(src, dst)
        return r


@dataclass(frozen=True, slots=True)
class Machines:
    """Batsim's resource numbering: compute ids 0..C-1, then storage ids C..C+S-1."""

    compute: tuple[Machine, ...]
    storage: tuple[Machine, ...]
    master: Host

    @property
    def all(self) -> tuple[Machine, ...]:
        return self.compute + self.storage

    def __len__(self) -> int:
        return len(self.compute) + len(self.storage)
