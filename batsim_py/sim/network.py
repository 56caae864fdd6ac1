"""The platform as the sharing core sees it: hosts and links numbered, capacities, routes.

It turns what the simulation knows (host names, a job's executors, flops, a bytes matrix) into
`PtaskRow`s for `batsim_py.sharing`, which knows only indices. Resources are host CPUs first,
then links, in one capacity vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from batsim_py.platform.model import Platform
from batsim_py.sharing.ptask import PtaskRow, ptask_row


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
        return ptask_row(
            [index[h] for h in hosts], flops, bytes_matrix, self.route, self.link_fatpipe,
            self.core_speed,
        )

    def cpu_bound(self, row: PtaskRow) -> float:
        """One core per executor at the hosts' current speeds (inf if nothing computes)."""
        used = row.cpu_flops > 0.0
        if not used.any():
            return float("inf")
        with np.errstate(over="ignore"):  # speed / tiny flops: inf, no bound
            return float(np.min(self.core_speed[row.cpu_hosts[used]] / row.cpu_flops[used]))

    def set_speed(self, host: int, core_speed: float, rows: list[PtaskRow]) -> list[PtaskRow]:
        """A host changes pstate: new CPU capacity; `rows` re-bounded (network bounds kept)."""
        old = [self.cpu_bound(r) for r in rows]
        self.core_speed[host] = core_speed
        with np.errstate(over="ignore"):
            self.capacity[host] = self.cores[host] * core_speed
        out = []
        for row, old_cpu in zip(rows, old, strict=True):
            net = row.bound if row.bound < old_cpu else float("inf")
            out.append(replace(row, bound=min(self.cpu_bound(row), net)))
        return out

    def message_row(self, src: str, dst: str, nbytes: float = 1.0) -> PtaskRow:
        """A plain communication of `nbytes` from `src` to `dst`."""
        return self.row([src, dst], None, np.array([[0.0, nbytes], [0.0, 0.0]]))
