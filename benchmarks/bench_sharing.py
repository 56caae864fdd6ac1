"""Speed of one full fair-bottleneck re-solve on a large cluster.

Builds a 1,024-host flat cluster like Batsim's (per host a private UP and DOWN SHARED link,
one SHARED backbone), starts N concurrent ptasks of a few hosts each (flops on every
executor, all-to-all bytes routed up -> backbone -> down) and times the solve of the whole
LMM system, which is what the engine pays each time the set of activities changes. The
target is 10,000 activities in under 10 ms.

    python benchmarks/bench_sharing.py [--activities 1000 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from yardstick import Yardstick

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's batsim_py

from batsim_py.sharing.ptask import PtaskRow, assemble, cpu_capacity, ptask_row
from batsim_py.sharing.solver import Usage, fair_bottleneck_info

N_HOSTS = 1024
SPEED = 1e9
CORES = 4
BW, LAT = 1.25e8, 5e-5
BB_BW, BB_LAT = 1.25e10, 5e-4


def cluster() -> tuple[np.ndarray, np.ndarray, dict]:
    """Capacities (hosts, then UP/DOWN links, then backbone), FATPIPE flags and a route table."""
    up = lambda h: 2 * h  # noqa: E731
    down = lambda h: 2 * h + 1  # noqa: E731
    backbone = 2 * N_HOSTS
    link_bw = np.concatenate((np.full(2 * N_HOSTS, BW), [BB_BW]))
    link_lat = np.concatenate((np.full(2 * N_HOSTS, LAT), [BB_LAT]))
    cap = np.concatenate((cpu_capacity(np.full(N_HOSTS, CORES), np.full(N_HOSTS, SPEED)),
                          link_bw))
    fat = np.zeros(link_bw.size, dtype=bool)

    def route(src: int, dst: int) -> list[tuple[int, float]]:
        hops = [up(src), backbone, down(dst)]
        return [(k, float(link_lat[k])) for k in hops]

    return cap, fat, route


def workload(n: int, seed: int = 0) -> tuple[list[PtaskRow], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cap, fat, route = cluster()
    speed = np.full(N_HOSTS, SPEED)
    rows = []
    for _ in range(n):
        k = int(rng.integers(2, 5))
        hosts = rng.choice(N_HOSTS, size=k, replace=False)
        flops = rng.uniform(1e8, 1e10, size=k)
        nbytes = rng.uniform(1e5, 1e8, size=(k, k))
        np.fill_diagonal(nbytes, 0.0)
        rows.append(ptask_row(hosts.tolist(), flops, nbytes, route, fat, speed))
    return rows, cap, fat


def bench(n: int, repeat: int, stick: Yardstick) -> None:
    rows, cap, fat = workload(n)
    n_links = fat.size
    t0 = time.perf_counter()
    usage: Usage = assemble(rows, N_HOSTS, n_links)
    t_assemble = time.perf_counter() - t0
    bound = np.array([r.bound for r in rows])
    fatpipe = np.concatenate((np.zeros(N_HOSTS, dtype=bool), fat))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        x, info = fair_bottleneck_info(usage, cap, fatpipe, bound)
        times.append(time.perf_counter() - t0)
    best, median = min(times), float(np.median(times))
    print(f"{n:>6} ptasks, {usage.weight.size:>7} elements: solve best {best * 1e3:7.2f} ms, "
          f"median {median * 1e3:7.2f} ms, {info.rounds} rounds; "
          f"assemble {t_assemble * 1e3:.1f} ms; rates {x.min():.3g}..{x.max():.3g}; "
          f"solve median {stick.ratio(median)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--activities", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    stick = Yardstick()
    stick.sample()
    for n in args.activities:
        bench(n, args.repeat, stick)
    stick.sample()
    print(stick.summary(), "(the ratios above use the first sample; see both here)")


if __name__ == "__main__":
    main()
