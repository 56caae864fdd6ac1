"""Routes in Floyd/Dijkstra zones: time to resolve what a run asks for, as the zone doubles.

A zone of H hosts and a master around one switch, every host's routes declared to and from the
switch (how a cluster is written as a graph zone). A run resolves every host's route to the
master (Batsim's messages: "to master") and, for parallel jobs, the routes among each job's
hosts ("in groups": groups of 16 hosts, all pairs). Printed for H and 2H: the seconds to resolve
them with batsim-py's routing, the same routes from a Full zone (declared table, no search), and
the to-master routes with one networkx `dijkstra_path` per route (what graph zones did before:
a whole-graph search per route), then each ratio 2H/H.
Expected: to master about 2x (one search in all; it was one per route: about 4x); in groups
one whole-graph search per distinct destination, so still about 4x, but 15 times fewer searches
than one per route. Platforms are written once to benchmarks/.cache/.

    python benchmarks/bench_graph_routes.py [--hosts 5000] [--routing Floyd|Dijkstra]
        [--no-networkx]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's batsim_py
CACHE = ROOT / "benchmarks" / ".cache"
GROUP = 16


def platform_file(hosts: int, routing: str) -> Path:
    """The star zone as `routing` (graph zones), or as Full with host<->master routes."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"star_{routing}_{hosts}.xml"
    if path.exists():
        return path
    out = ['<?xml version="1.0"?>',
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', f'<zone id="world" routing="{routing}">']
    out += [f'<host id="node{i}" speed="1Gf"/>' for i in range(hosts)]
    out += ['<host id="master_host" speed="1Gf"/>', '<router id="switch"/>']
    out += [f'<link id="l{i}" bandwidth="125MBps" latency="50us"/>' for i in range(hosts)]
    out.append('<link id="lm" bandwidth="125MBps" latency="50us"/>')
    if routing == "Full":
        out += [f'<route src="node{i}" dst="master_host" symmetrical="NO"><link_ctn id="l{i}"/>'
                '<link_ctn id="lm"/></route>' for i in range(hosts)]
        for g in range(0, hosts - GROUP + 1, GROUP):
            for a in range(g, g + GROUP):
                out += [f'<route src="node{a}" dst="node{b}" symmetrical="NO">'
                        f'<link_ctn id="l{a}"/><link_ctn id="l{b}"/></route>'
                        for b in range(g, g + GROUP) if a != b]
    else:
        out += [f'<route src="node{i}" dst="switch"><link_ctn id="l{i}"/></route>'
                for i in range(hosts)]
        out.append('<route src="master_host" dst="switch"><link_ctn id="lm"/></route>')
    out.append("</zone></platform>\n")
    path.write_text("\n".join(out))
    return path


def to_master(hosts: int) -> list[tuple[str, str]]:
    return [(f"node{i}", "master_host") for i in range(hosts)]


def in_groups(hosts: int) -> list[tuple[str, str]]:
    return [(f"node{a}", f"node{b}") for g in range(0, hosts - GROUP + 1, GROUP)
            for a in range(g, g + GROUP) for b in range(g, g + GROUP) if a != b]


def resolve(path: Path, todo: list[tuple[str, str]]) -> float:
    from batsim_py.platform import load_platform

    platform = load_platform(str(path))
    t = time.perf_counter()
    for src, dst in todo:
        platform.route(src, dst)
    return time.perf_counter() - t


def networkx_per_route(hosts: int, todo: list[tuple[str, str]]) -> float:
    """The former way: the zone's graph in networkx, one dijkstra_path per route."""
    import networkx as nx

    g = nx.DiGraph()
    for i in range(hosts):
        g.add_edge(f"node{i}", "switch", cost=1)
    g.add_edge("master_host", "switch", cost=1)
    for i in range(hosts):
        g.add_edge("switch", f"node{i}", cost=1)
    g.add_edge("switch", "master_host", cost=1)
    t = time.perf_counter()
    for src, dst in todo:
        nx.dijkstra_path(g, src, dst, weight="cost")
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--routing", default="Floyd", choices=["Floyd", "Dijkstra"])
    parser.add_argument("--no-networkx", action="store_true",
                        help="skip the (slow) one-search-per-route column")
    args = parser.parse_args()
    rows = []
    for hosts in (args.hosts, 2 * args.hosts):
        graph_file, full_file = platform_file(hosts, args.routing), platform_file(hosts, "Full")
        row = [hosts]
        for todo in (to_master(hosts), in_groups(hosts)):
            row += [len(todo), resolve(graph_file, todo), resolve(full_file, todo)]
        row.append(float("nan") if args.no_networkx else
                   networkx_per_route(hosts, to_master(hosts)))
        rows.append(row)
    print(f"seconds to resolve the routes ({args.routing} zone vs Full table); last column: "
          "one networkx search per route (before), to-master routes")
    print(f"{'hosts':>6} | {'to master':>9} {args.routing:>8} {'Full':>7} | "
          f"{'in groups':>9} {args.routing:>8} {'Full':>7} | {'nx/route':>8}")
    for hosts, n1, g1, f1, n2, g2, f2, nxr in rows:
        print(f"{hosts:>6} | {n1:>9} {g1:>8.2f} {f1:>7.2f} | {n2:>9} {g2:>8.2f} {f2:>7.2f} | "
              f"{nxr:>8.2f}")
    a, b = rows
    print(f"ratio 2H/H: to master {args.routing} {b[2] / a[2]:.2f}x (Full {b[3] / a[3]:.2f}x), "
          f"in groups {args.routing} {b[5] / a[5]:.2f}x (Full {b[6] / a[6]:.2f}x), "
          f"one search per route {b[7] / a[7]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
