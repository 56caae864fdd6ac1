"""A parallel task's row of the LMM system under SimGrid's ptask_L07 model, from plain numbers.

Every Batsim activity is an L07 action (simgrid-models §2): its progress rate is one LMM
variable whose weight is the flops it runs on each executor's CPU and the bytes its routes put
on each link. This module turns executors, flops, a bytes matrix and routes into that row (and
into the action's latency and bound), knowing nothing of platforms: hosts and links are indices.

Resources are numbered hosts first (resource h is host h's CPU), then links (resource
`n_hosts + l` is link l), so that one capacity vector covers both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batsim_py.sharing.lone import TCP_GAMMA, tcp_bound
from batsim_py.sharing.solver import Usage

#: A route: its hops in order, each (link index, link latency in s).
Route = Sequence[tuple[int, float]]
#: Routes between hosts: a mapping or a function (src host, dst host) -> route.
Routes = Union[Mapping[tuple[int, int], Route], Callable[[int, int], Route]]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class AmountOverflow(ValueError):
    """A ptask's flops or bytes per link are beyond the floats (inf): it could never end."""


@dataclass(frozen=True, slots=True)
class PtaskRow:
    """One L07 action: its LMM elements, latency phase, bound and amount of work.

    CPU elements stay one per executor, never merged per host: SimGrid creates them with
    forced creation, and fair bottleneck counts every element as one sharer of its resource
    (an action listed twice on a host gets two shares, each capped by its larger flops), which
    gives different rates than one merged element whenever the flops differ.
    Link weights are merged per action: summed on SHARED links, max-ed on FATPIPE links.
    """

    cpu_hosts: IntArray  # host of each executor, in executor order
    cpu_flops: FloatArray  # flops of each executor (0 included: zero-weight element)
    links: IntArray  # distinct links, in order of first use
    link_bytes: FloatArray  # merged byte weight on each of them
    latency: float  # largest route latency over the communicating pairs (s)
    bound: float  # rate cap once the latency is paid; inf = none
    work: float  # 1.0, or 0.0 when the action loads nothing (completes at once)


def ptask_row(
    hosts: Sequence[int],
    flops: Sequence[float] | None,
    bytes_matrix: ArrayLike | None,
    routes: Routes,
    link_fatpipe: Sequence[bool] | NDArray[np.bool_],
    core_speed: Sequence[float] | FloatArray,
    gamma: float = TCP_GAMMA,
) -> PtaskRow:
    """The L07 row of `exec_init(hosts, flops, bytes)` (simgrid-models §2.1-2.3).

    `bytes_matrix[i][j]` is sent from executor i to executor j (self pairs use the host's self
    route). `core_speed[h]` is host h's per-core speed at its current pstate (times its
    availability scale): it sets the one-core-per-executor bound. A single executor is a plain
    sequential execution of `flops[0]`: its bytes are ignored, as in SimGrid's ExecImpl.
    """
    n = len(hosts)
    host_arr = np.asarray(hosts, dtype=np.int64)
    f = np.zeros(n) if flops is None else np.asarray(flops, dtype=np.float64).reshape(n)
    if n == 1:
        bytes_matrix = None
    if callable(routes):
        get_route = routes
    else:
        table = routes

        def get_route(src: int, dst: int) -> Route:
            return table[(src, dst)]


    link_pos: dict[int, int] = {}
    links: list[int] = []
    weights: list[float] = []
    latency = 0.0
    worst = 0.0  # max over communicating pairs of latency x bytes (TCP-gamma bound)
    if bytes_matrix is not None:
        b = np.asarray(bytes_matrix, dtype=np.float64).reshape(n, n)
        for i, j in zip(*np.nonzero(b > 0.0), strict=True):
            amount = float(b[i, j])
            lat = 0.0
            for link, link_lat in get_route(int(host_arr[i]), int(host_arr[j])):
                lat += link_lat
                pos = link_pos.get(link)
                if pos is None:
                    link_pos[link] = len(links)
                    links.append(link)
                    weights.append(amount)
                elif link_fatpipe[link]:
                    weights[pos] = max(weights[pos], amount)
                else:
                    weights[pos] += amount
            latency = max(latency, lat)
            worst = max(worst, lat * amount)  # may overflow to inf: see tcp_bound

    if not (np.all(np.isfinite(f)) and all(w < np.inf for w in weights)):
        raise AmountOverflow(
            "its amounts overflow: the flops or the bytes summed on a link exceed "
            f"{np.finfo(np.float64).max:.6g}")
    cpu_bound = np.inf
    used = f > 0.0
    if used.any():
        speed = np.asarray(core_speed, dtype=np.float64)[host_arr[used]]
        with np.errstate(over="ignore"):  # speed / tiny flops: no bound, as inf means
            cpu_bound = float(np.min(speed / f[used]))
    net_bound = tcp_bound(gamma, worst)
    work = 0.0 if not links and not used.any() else 1.0
    return PtaskRow(
        cpu_hosts=host_arr,
        cpu_flops=f,
        links=np.asarray(links, dtype=np.int64),
        link_bytes=np.asarray(weights, dtype=np.float64),
        latency=latency,
        bound=min(cpu_bound, net_bound),
        work=work,
    )


def cpu_capacity(cores: ArrayLike, speed: ArrayLike, scale: ArrayLike = 1.0) -> FloatArray:
    """CPU constraint capacity, multiplied in SimGrid's order: cores x peak x scale."""
    c = np.asarray(cores, dtype=np.float64)
    return (c * np.asarray(speed, dtype=np.float64)) * np.asarray(scale, dtype=np.float64)


def assemble(rows: Sequence[PtaskRow], n_hosts: int, n_links: int) -> Usage:
    """The LMM system of several actions, activity k being `rows[k]`.

    Elements are listed the way SimGrid's enabled-element lists hold them when `rows` is in
    enabling order: the most recently enabled action first and, within one action, its
    elements in reverse creation order (links, then CPUs). The solver subtracts increments in
    this order, which fixes the floating-point rounding (see `batsim_py.sharing.solver`).
    """
    acts: list[IntArray] = []
    ress: list[IntArray] = []
    ws: list[FloatArray] = []
    for k in range(len(rows) - 1, -1, -1):
        row = rows[k]
        res = np.concatenate((row.cpu_hosts, row.links + n_hosts))[::-1]
        w = np.concatenate((row.cpu_flops, row.link_bytes))[::-1]
        acts.append(np.full(res.size, k, dtype=np.int64))
        ress.append(res)
        ws.append(w)
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Usage(empty, empty, np.zeros(0), 0, n_hosts + n_links)
    return Usage(
        np.concatenate(acts), np.concatenate(ress), np.concatenate(ws), len(rows),
        n_hosts + n_links,
    )
