"""Seeded random platforms and concurrent ptasks, shared by the SimGrid oracle and our stepping.

A case is a plain dict (the JSON read by `simgrid_oracle.py`); `our_dates` computes the same
case with `batsim_py.sharing`, modelling SimGrid's `__loopback__` (10 GB/s, 0 s, FATPIPE) for
hosts without a declared self route.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from simgrid_oracle_support import SYSTEM_PYTHON, ForkServers

from batsim_py.sharing.ptask import cpu_capacity, ptask_row
from batsim_py.sharing.solver import SolveInfo
from batsim_py.sharing.stepping import completion_dates

ORACLE = Path(__file__).with_name("simgrid_oracle.py")
LOOPBACK_BW = 1e10


def random_case(seed: int) -> dict:
    """Small platform (Full zone, explicit one-way routes) and 2-6 ptasks with staggered starts."""
    rng = random.Random(seed)
    n_hosts = rng.randint(2, 5)
    hosts = [{"speed": rng.choice([1e8, 5e8, 1e9, 2e9, rng.uniform(1e7, 3e9)]),
              "cores": rng.randint(1, 4)} for _ in range(n_hosts)]
    n_links = rng.randint(2, 6)
    links = [{"bandwidth": rng.choice([1e7, 1.25e8, 1e9, rng.uniform(1e6, 2e9)]),
              "latency": rng.choice([0.0, 1e-4, rng.uniform(1e-6, 5e-3)]),
              "fatpipe": rng.random() < 0.3} for _ in range(n_links)]
    routes = []
    for src in range(n_hosts):
        for dst in range(n_hosts):
            if src != dst or rng.random() < 0.5:
                hops = rng.sample(range(n_links), rng.randint(1, min(3, n_links)))
                routes.append([src, dst, hops])
    ptasks = []
    for _ in range(rng.randint(2, 6)):
        n = rng.choice([1, 2, 2, 3, 4])
        execs = [rng.randrange(n_hosts) for _ in range(n)]
        flops = [0.0 if rng.random() < 0.3 else rng.choice([1e8, 1e9, rng.uniform(1e6, 3e9)])
                 for _ in range(n)]
        nbytes = [0.0 if rng.random() < 0.5 else rng.choice([1e6, 1e8, rng.uniform(1e3, 2e8)])
                  for _ in range(n * n)]
        start = 0.0 if rng.random() < 0.4 else rng.choice([0.5, rng.uniform(0.0, 3.0)])
        ptasks.append({"start": start, "hosts": execs, "flops": flops, "bytes": nbytes})
    return {"hosts": hosts, "links": links, "routes": routes, "ptasks": ptasks}


def rows_of(case: dict) -> tuple[list, np.ndarray, np.ndarray, int]:
    """The case's ptask rows, capacities (hosts, links, loopback), FATPIPE flags (links,
    loopback) and number of hosts, as batsim_py.sharing takes them."""
    n_hosts, n_links = len(case["hosts"]), len(case["links"])
    loopback = n_links
    lat = [link["latency"] for link in case["links"]] + [0.0]
    fat = np.array([link["fatpipe"] for link in case["links"]] + [True])
    bandwidth = [link["bandwidth"] for link in case["links"]] + [LOOPBACK_BW]
    routes = {(h, h): [(loopback, 0.0)] for h in range(n_hosts)}
    for src, dst, hops in case["routes"]:
        routes[(src, dst)] = [(k, lat[k]) for k in hops]
    speed = [host["speed"] for host in case["hosts"]]
    cap = np.concatenate((cpu_capacity([h["cores"] for h in case["hosts"]], speed), bandwidth))
    rows = [ptask_row(t["hosts"], t["flops"], t["bytes"], routes, fat, speed)
            for t in case["ptasks"]]
    return rows, cap, fat, n_hosts


def our_dates(case: dict) -> tuple[np.ndarray, bool]:
    """Completion dates of the case's ptasks computed by batsim_py.sharing, and whether every
    solve converged (if not, real SimGrid never returns on this case)."""
    rows, cap, fat, n_hosts = rows_of(case)
    infos: list[SolveInfo] = []
    dates = completion_dates(rows, [t["start"] for t in case["ptasks"]], cap, fat, n_hosts, infos)
    return dates, all(info.converged for info in infos)


def simgrid_dates(case: dict, timeout: float = 60.0,
                  servers: ForkServers | None = None) -> np.ndarray | None:
    """Completion dates from real SimGrid, or None if it did not finish within `timeout`; run
    by one of `servers` (a fork of a Python that imported simgrid once: the import and start-up
    were most of a case's time) when given, else in a new /usr/bin/python3."""
    if servers is not None:
        try:
            return np.array(servers.run(case, timeout)["ends"], dtype=np.float64)
        except TimeoutError:
            return None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f)
    try:
        out = subprocess.run([SYSTEM_PYTHON, str(ORACLE), f.name], capture_output=True,
                             text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    finally:
        Path(f.name).unlink()
    return np.array(json.loads(out.stdout)["ends"], dtype=np.float64)




if __name__ == "__main__":
    case = random_case(int(sys.argv[1]))
    print(json.dumps(case))
    print(our_dates(case), simgrid_dates(case))
