"""Issue 21's family as plain oracle cases (the JSON read by `simgrid_oracle.py`).

Host h0 is Batsim's master host (one core), the others are multicore compute hosts; no host has
a declared self route, so every self pair crosses SimGrid's shared `__loopback__`. Each job is a
ptask with more executors than cores on its first host, unequal flops and one transfer between
two executors; each "master message" is Batsim's 1-byte transfer from the master to itself
(`hosts` [0, 0]), which shares the loopback with the jobs' intra-host transfers.

`engine_dates` runs the same case through the simulation kernel (`batsim_py.sim.engine`), whose
stepping must agree with `batsim_py.sharing.stepping` (itself checked against SimGrid).
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
from oracle_cases import rows_of

from batsim_py.sim.engine import EXEC, SLEEP, Engine


def family_case(seed: int) -> dict:
    rng = random.Random(seed)
    n_compute = rng.randint(1, 3)
    hosts = [{"speed": rng.choice([1e8, 2e8, 1e9]), "cores": 1}]
    hosts += [{"speed": rng.choice([5e7, 1e8, 2.5e8, 1e9, rng.uniform(1e7, 2e9)]),
               "cores": rng.choice([1, 2, 2, 4])} for _ in range(n_compute)]
    n_hosts = len(hosts)
    links = [{"bandwidth": rng.choice([1e7, 1.25e8, 1e9]),
              "latency": rng.choice([0.0, 1e-5, 5e-5, 1e-3]),
              "fatpipe": rng.random() < 0.3} for _ in range(n_hosts)]
    routes = [[a, b, [a, b]] for a in range(n_hosts) for b in range(n_hosts) if a != b]
    ptasks = []
    for _ in range(rng.randint(1, 3)):
        first = rng.randrange(1, n_hosts)
        n = rng.randint(hosts[first]["cores"] + 1, hosts[first]["cores"] + 3)
        execs = [first] * (hosts[first]["cores"] + 1)
        execs += [rng.randrange(1, n_hosts) for _ in range(n - len(execs))]
        flops = [rng.choice([0.0, 1e6, 1e7, 3e7, 1e8]) * rng.uniform(0.5, 2.0) for _ in range(n)]
        flops[0] = flops[0] or 1e7
        nbytes = [0.0] * (n * n)
        src, dst = rng.sample(range(n), 2)
        nbytes[src * n + dst] = rng.choice([1.0, 1e3, 1e6, 5e7])
        start = rng.choice([0.0, 0.0, 0.05, rng.uniform(0.0, 1.0)])
        ptasks.append({"start": start, "hosts": execs, "flops": flops, "bytes": nbytes})
    for _ in range(rng.randint(1, 4)):
        ptasks.append({"start": rng.choice([0.0, 1e-9, 0.05, rng.uniform(0.0, 1.0)]),
                       "hosts": [0, 0], "flops": [0.0, 0.0], "bytes": [0.0, 1.0, 0.0, 0.0]})
    return {"hosts": hosts, "links": links, "routes": routes, "ptasks": ptasks}


def engine_dates(case: dict) -> np.ndarray:
    """Completion dates of the case's ptasks run by the simulation kernel."""
    rows, cap, fat, n_hosts = rows_of(case)
    engine = Engine()
    engine.network = SimpleNamespace(
        n_hosts=n_hosts, link_names=[None] * (cap.size - n_hosts), capacity=cap,
        fatpipe=np.concatenate((np.zeros(n_hosts, dtype=bool), fat)))
    ends = np.full(len(rows), np.nan)

    def actor(k: int):  # noqa: ANN202 - a kernel actor
        start = case["ptasks"][k]["start"]
        if start > 0:
            yield (SLEEP, start)
        status, _ = yield (EXEC, rows[k], -1.0)
        assert status == "done"
        ends[k] = engine.now

    for k in range(len(rows)):
        engine.spawn(actor(k), f"p{k}")
    engine.run()
    return ends
