"""Graph zones' routes (issue 12 item 7): `ShortestPaths` returns networkx's `dijkstra_path`
for every pair, ties included, and resolving one route per host in a big zone costs about the
route, not the whole graph per route."""

from __future__ import annotations

import random
from itertools import islice

import networkx as nx
import pytest
from cost_bounds import best_seconds, cpu_seconds

from batsim_py.platform.shortest import ShortestPaths


def _random_graph(rng: random.Random) -> list[tuple[int, int, int]]:
    """Small weights (0 to 3 links per declared route) so that equal-cost paths abound."""
    n = rng.randint(2, 30)
    edges: dict[tuple[int, int], int] = {}
    for _ in range(rng.randint(1, 4 * n)):
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            edges[(a, b)] = rng.choice([0, 1, 1, 1, 2, 3])
            if rng.random() < 0.5:  # symmetrical routes, as most declared ones are
                edges[(b, a)] = edges[(a, b)]
    return [(a, b, w) for (a, b), w in edges.items()]


def test_same_paths_as_networkx_on_random_graphs() -> None:
    pairs = ties = 0
    for seed in range(60):
        rng = random.Random(seed)
        edges = _random_graph(rng)
        graph = nx.DiGraph()
        for a, b, w in edges:
            graph.add_edge(a, b, cost=w)
        sp = ShortestPaths(edges)
        nodes = list(graph.nodes)
        order = [(s, t) for s in nodes for t in nodes if s != t]
        rng.shuffle(order)  # destinations cached in any order
        for s, t in order:
            try:
                want = nx.dijkstra_path(graph, s, t, weight="cost")
            except nx.NetworkXNoPath:
                want = None
            assert sp.path(s, t) == want, (seed, s, t, edges)
            pairs += 1
            if want is not None and len(want) > 2 and len(list(islice(
                    nx.all_shortest_paths(graph, s, t, weight="cost"), 2))) > 1:
                ties += 1
    assert pairs > 5000 and ties > 1000, (pairs, ties)
    assert ShortestPaths([(0, 1, 1)]).path(0, 7) is None  # unknown node


def _star(n: int) -> list[tuple[str, str, int]]:
    """n hosts and a master around one switch (routes declared both ways), as a Floyd zone
    written for a cluster would be."""
    edges = []
    for i in range(n):
        edges += [(f"h{i}", "sw", 1), ("sw", f"h{i}", 1)]
    return edges + [("master", "sw", 1), ("sw", "master", 1)]


def _every_host_to_master(n: int) -> float:
    """CPU seconds of every host's route to the master in a star of `n` hosts (the graph built
    beforehand)."""
    sp = ShortestPaths(_star(n))

    def routes() -> None:
        for i in range(n):
            assert sp.path(f"h{i}", "master") == [f"h{i}", "sw", "master"]

    return cpu_seconds(routes)


@pytest.mark.slow
def test_routes_to_one_host_cost_linear_in_hosts() -> None:
    """Every host's route to the master (what a run asks for): 4x the hosts costs about 4x the
    time (4.9x measured under load); one whole-graph search per route made it 16x. The sizes
    take turns over up to 5 rounds, larger first, best CPU time each (tests/cost_bounds.py): a
    2x step with 3 samples of one size after the other measured 2.94x against a 2.8 bound in
    CI."""
    best = best_seconds({12000: lambda: _every_host_to_master(12000),
                         3000: lambda: _every_host_to_master(3000)},
                        holds=lambda b: b[12000] / b[3000] < 8)
    ratio = best[12000] / best[3000]
    assert ratio < 8, f"{ratio:.2f}x"
