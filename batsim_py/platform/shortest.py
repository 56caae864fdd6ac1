"""Shortest paths in a Floyd/Dijkstra zone's graph, without a whole-graph search per route.

A graph zone's route is the path networkx's `dijkstra_path(graph, src, dst)` returns (the
project's choice among equal-cost paths, kept so that routes never change). Running that search
for each new route costs the whole graph every time: in a zone of 10,000 hosts around one switch,
every host-to-master route pushes all 10,000 hosts on the heap, so a run resolving one route per
host is quadratic.

Here, the same paths come from two cheaper steps:
1. once per destination (cached, least recently used first out): the cost from every node to
   the destination, by one search on the reversed graph. An edge u->v is *tight* when
   cost(u) = weight(u, v) + cost(v): exactly the edges that lie on some shortest path to it.
2. per route: networkx's own search (same heap keys, same counter, same strict-improvement
   rule, neighbours in the same order), but following tight edges only. This visits only the
   nodes of the src->dst shortest paths, and a node's tight edges are listed once per
   destination, so a switch's thousands of edges are scanned once, not once per route.
Why the path is the same: every node that can be the recorded predecessor of a node of a
shortest src->dst path lies on such a path (it achieves that node's final distance), the edge
between them is tight, and the order in which networkx expands those nodes only depends on
their distances and on earlier expansions of the same nodes (each push happens while expanding
its predecessor, in adjacency order). Nodes off those paths are pushed and popped by networkx
but never change what it records for the nodes on them.
`tests/platform/test_shortest_paths.py` compares with networkx on random graphs full of ties.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from heapq import heappop, heappush
from itertools import count
from typing import Generic, TypeVar

N = TypeVar("N", bound=Hashable)

# Cached destinations hold one cost per node: keep about this many costs in all.
_CACHE_BUDGET = 1_000_000


class _ToTarget(Generic[N]):
    """Costs to one destination, and the tight out-edges of the nodes visited so far."""

    __slots__ = ("cost", "tight")

    def __init__(self, cost: dict[N, int]) -> None:
        self.cost = cost
        self.tight: dict[N, list[tuple[N, int]]] = {}


class ShortestPaths(Generic[N]):
    """Directed graph with integer weights; `path(src, dst)` as networkx's `dijkstra_path`."""

    def __init__(self, edges: Iterable[tuple[N, N, int]]) -> None:
        succ: dict[N, list[tuple[N, int]]] = {}
        pred: dict[N, list[tuple[N, int]]] = {}
        for a, b, weight in edges:  # (networkx's adjacency order: the order edges are added)
            succ.setdefault(a, []).append((b, weight))
            succ.setdefault(b, [])
            pred.setdefault(b, []).append((a, weight))
            pred.setdefault(a, [])
        self._succ = succ
        self._pred = pred
        self._targets: OrderedDict[N, _ToTarget[N]] = OrderedDict()
        self._max_targets = max(4, _CACHE_BUDGET // max(1, len(succ)))

    def path(self, src: N, dst: N) -> list[N] | None:
        """Nodes of the route from `src` to `dst` (both included); None when there is none."""
        if src not in self._succ or dst not in self._succ:
            return None
        if src == dst:
            return [src]
        to = self._to(dst)
        cost = to.cost
        if src not in cost:
            return None
        tight = to.tight
        succ = self._succ
        dist: dict[N, int] = {}
        seen = {src: 0}
        back: dict[N, N] = {}
        counter = count(1)
        fringe: list[tuple[int, int, N]] = [(0, 0, src)]
        while fringe:
            d, _, v = heappop(fringe)
            if v in dist:
                continue
            dist[v] = d
            if v == dst:
                break
            edges = tight.get(v)
            if edges is None:
                left = cost[v]
                edges = tight[v] = [(u, w) for u, w in succ[v] if cost.get(u) == left - w]
            for u, w in edges:
                du = d + w
                if u in dist:
                    continue
                if u not in seen or du < seen[u]:
                    seen[u] = du
                    heappush(fringe, (du, next(counter), u))
                    back[u] = v
        out = [dst]
        while out[-1] != src:
            out.append(back[out[-1]])
        out.reverse()
        return out

    def _to(self, dst: N) -> _ToTarget[N]:
        to = self._targets.get(dst)
        if to is not None:
            self._targets.move_to_end(dst)
            return to
        cost: dict[N, int] = {}
        seen = {dst: 0}
        counter = count(1)
        fringe: list[tuple[int, int, N]] = [(0, 0, dst)]
        pred = self._pred
        while fringe:
            d, _, v = heappop(fringe)
            if v in cost:
                continue
            cost[v] = d
            for u, w in pred[v]:
                du = d + w
                if u not in cost and (u not in seen or du < seen[u]):
                    seen[u] = du
                    heappush(fringe, (du, next(counter), u))
        to = self._targets[dst] = _ToTarget(cost)
        if len(self._targets) > self._max_targets:
            self._targets.popitem(last=False)
        return to
