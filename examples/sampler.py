"""A utilisation sampler: every `PERIOD` seconds, how many machines compute, idle or are
unavailable, and how many jobs wait, gathered into a pandas DataFrame.

From the command line it writes `PREFIX_utilisation.csv` beside the other outputs:

    batsim-py -p platforms/small4.xml -w workloads/delays_small.json --scheduler easy \
        -e outputs/run --process examples/sampler.py:sample_utilisation

From Python, keep the sampler to read its frame after the run:

    sampler = Sampler(period=30)
    sim.process(sampler)
    sim.run()
    sampler.frame
"""

from __future__ import annotations

from typing import Any

import pandas as pd

PERIOD = 60.0


class Sampler:
    """A SimPy process factory: `sim.process(Sampler(...))` calls it as `sampler(env, sim)`."""

    def __init__(self, period: float = PERIOD) -> None:
        self.period = period
        self.rows: list[dict[str, Any]] = []

    def __call__(self, env: Any, sim: Any) -> Any:
        while True:
            states = sim.machine_states()
            self.rows.append({
                "time": env.now,
                "computing": states.count("computing"),
                "idle": states.count("idle"),
                "unavailable": states.count("unavailable"),
                "queued_jobs": len(sim.queue()),
                "running_jobs": len(sim.running()),
            })
            yield env.timeout(self.period)

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["time", "computing", "idle", "unavailable",
                                                "queued_jobs", "running_jobs"])


def sample_utilisation(env: Any, sim: Any) -> Any:
    """`--process` entry: sample every PERIOD s, write PREFIX_utilisation.csv at the end."""
    sampler = Sampler()
    prefix = sim.export_prefix
    if prefix is not None:
        sim.at_end(lambda: sampler.frame.to_csv(f"{prefix}_utilisation.csv", index=False))
    return sampler(env, sim)
