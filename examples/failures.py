"""Random machine failures and repairs, as a SimPy process.

Each compute machine alternates between up and down: up for an exponential time of mean
`MTBF` seconds, then down (Batsim's `machine_unavailable` external event) for an exponential
repair time of mean `MTTR`, then up again (`machine_available`). Draws come from numpy
generators seeded per machine (`SEED`, machine id): a run is reproducible, and adding a
machine does not change the others' draws.

The events go through an `EventSource`, exactly as an `--events` file's would; the source is
closed by the simulation once the workload is over, so failures never keep it running. Pair it
with a scheduler that keeps off unavailable machines (the shipped `fcfs`/`easy` ignore
external events):

    batsim-py -p platforms/small4.xml -w workloads/delays_small.json \
        --scheduler examples/inprocess_fcfs.py:AvailabilityFcfs \
        --process examples/failures.py:failures
"""

from __future__ import annotations

from typing import Any

import numpy as np

MTBF = 300.0  # mean time between failures of one machine (s)
MTTR = 60.0  # mean time to repair (s)
SEED = 2024


def failures(env: Any, sim: Any, mtbf: float = MTBF, mttr: float = MTTR,
             seed: int = SEED) -> None:
    """Start one failure/repair process per compute machine."""
    source = sim.event_source()
    for machine in sim.compute_machines:
        rng = np.random.default_rng([seed, machine])
        env.process(machine_life(env, source, machine, rng, mtbf, mttr))


def machine_life(env: Any, source: Any, machine: int, rng: np.random.Generator,
                 mtbf: float, mttr: float) -> Any:
    yield source.ready  # the source said hello (as an events file's submitter does first)
    while True:
        yield env.timeout(rng.exponential(mtbf))
        yield source.unavailable([machine])
        yield env.timeout(rng.exponential(mttr))
        yield source.available([machine])
