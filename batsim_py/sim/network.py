"""The platform as the sharing core sees it: hosts and links numbered, capacities, routes.

It turns what the simulation knows (host names, a job's executors, flops, a bytes matrix) into
`PtaskRow`s for `batsim_py.sharing`, which knows only indices. Resources are host CPUs first,
then links, in one capacity vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from batsim_py.platform.model import Platform
from batsim_py.sharing.lone import TCP_GAMMA
from batsim_py.sharing.ptask import PtaskRow, ptask_row


@dataclass(frozen=True, slots=True)
class TracedRow(PtaskRow):
    """A row that remembers its executors and bytes, so that a latency profile can recompute
    its TCP-gamma bound (only made when the platform has latency profiles)."""

    hosts: tuple[int, ...] = ()
    matrix: np.ndarray | None = None


class Network:
    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.host_names = list(platform.hosts)
        self.host_index = {name: i for i, name in enumerate(self.host_names)}
        self.link_names = list(platform.links)
        self.link_index = {name: i for i, name in enumerate(self.link_names)}
        hosts = [platform.hosts[n] for n in self.host_names]
        links = [platform.links[n] for n in self.link_names]
        self.n_hosts = len(hosts)
        self.pstate = [h.pstate for h in hosts]
        self.core_speed = np.array([h.speed for h in hosts], dtype=np.float64)
        self.cores = np.array([h.cores for h in hosts], dtype=np.float64)
        with np.errstate(over="ignore"):  # cores x a speed near 1e308: inf, never saturates
            cpu = self.cores * self.core_speed
        self.capacity = np.concatenate((cpu, [link.bandwidth for link in links]))
        self.link_fatpipe = np.array([link.policy == "FATPIPE" for link in links], dtype=bool)
        self.fatpipe = np.concatenate((np.zeros(self.n_hosts, dtype=bool), self.link_fatpipe))
        self._routes: dict[tuple[int, int], list[tuple[int, float]]] = {}
        # Speed profiles scale a host's speed (SimGrid's `scale`, 1 = full speed).
        self.scale = np.ones(self.n_hosts)
        self.traced = any(a.kind == "LATENCY" for a in platform.traces)

    def route(self, src: int, dst: int) -> list[tuple[int, float]]:
        key = (src, dst)
        r = self._routes.get(key)
        if r is None:
            route = self.platform.route(self.host_names[src], self.host_names[dst])
            r = self._routes[key] = [
                (self.link_index[link.name], link.latency) for link in route.links
            ]
        return r

    def row(
        self, hosts: Sequence[str], flops: Sequence[float] | None, bytes_matrix: np.ndarray | None
    ) -> PtaskRow:
        """The L07 action of a parallel task over `hosts` (names, repetitions allowed)."""
        index = self.host_index
        executors = [index[h] for h in hosts]
        row = ptask_row(executors, flops, bytes_matrix, self.route, self.link_fatpipe,
                        self.core_speed)
        if self.traced and bytes_matrix is not None and len(executors) > 1:
            fields = {f: getattr(row, f) for f in PtaskRow.__dataclass_fields__}
            row = TracedRow(**fields, hosts=tuple(executors), matrix=np.asarray(bytes_matrix))
        return row

    def net_bound(self, row: TracedRow) -> float:
        """The TCP-gamma bound of a row, with the routes' current latencies."""
        n = len(row.hosts)
        b = np.asarray(row.matrix, dtype=np.float64).reshape(n, n)
        worst = 0.0
        for i, j in zip(*np.nonzero(b > 0.0), strict=True):
            lat = 0.0
            for _, link_lat in self.route(row.hosts[i], row.hosts[j]):
                lat += link_lat
            worst = max(worst, lat * float(b[i, j]))
        return TCP_GAMMA / (2.0 * worst) if worst > 0.0 else float("inf")

    def cpu_bound(self, row: PtaskRow) -> float:
        """One core per executor at the hosts' current speeds (inf if nothing computes)."""
        used = row.cpu_flops > 0.0
        if not used.any():
            return float("inf")
        with np.errstate(over="ignore"):  # speed / tiny flops: inf, no bound
            return float(np.min(self.core_speed[row.cpu_hosts[used]] / row.cpu_flops[used]))

    def set_speed(self, host: int, core_speed: float, rows: list[PtaskRow]) -> list[PtaskRow]:
        """A host changes pstate (`core_speed`: its peak speed) or speed scale: new CPU
        capacity (cores x peak x scale, SimGrid's order); `rows` re-bounded (network bounds
        kept)."""
        old = [self.cpu_bound(r) for r in rows]
        scale = float(self.scale[host])
        self.core_speed[host] = core_speed * scale
        with np.errstate(over="ignore"):
            self.capacity[host] = (self.cores[host] * core_speed) * scale
        out = []
        for row, old_cpu in zip(rows, old, strict=True):
            net = row.bound if row.bound < old_cpu else float("inf")
            out.append(replace(row, bound=min(self.cpu_bound(row), net)))
        return out

    def message_row(self, src: str, dst: str, nbytes: float = 1.0) -> PtaskRow:
        """A plain communication of `nbytes` from `src` to `dst`."""
        return self.row([src, dst], None, np.array([[0.0, nbytes], [0.0, 0.0]]))
