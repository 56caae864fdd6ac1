"""A closed-loop user population: each user submits a job, waits for it to end, thinks, and
submits the next one. The load follows the system (a slow system slows its users down), which
an open workload file cannot express.

`USERS` users each submit `JOBS_PER_USER` jobs; a job asks for 1 to 2 machines and runs one
of a few delay profiles, and the think time is exponential of mean `THINK` seconds, all drawn
from numpy generators seeded per user: a run is deterministic for a seed. At any time at most
`USERS` jobs are in the system (each user has at most one).

    batsim-py -p platforms/small4.xml --scheduler easy -e outputs/closed \
        --process examples/closed_loop.py:population
"""

from __future__ import annotations

from typing import Any

import numpy as np

USERS = 6
JOBS_PER_USER = 5
THINK = 120.0
SEED = 7
DELAYS = (30, 60, 120, 300)  # seconds: one delay profile each
PROFILES = {f"delay_{d}": {"type": "delay", "delay": d} for d in DELAYS}


def population(env: Any, sim: Any, users: int = USERS, jobs_per_user: int = JOBS_PER_USER,
               think: float = THINK, seed: int = SEED) -> Any:
    """Declare the population's job source (a workload of its own) and start its users."""
    source = sim.job_source(PROFILES, name="users")
    max_res = min(2, len(sim.compute_machines))
    for u in range(users):
        rng = np.random.default_rng([seed, u])
        env.process(user(env, source, u, rng, jobs_per_user, think, max_res))


def user(env: Any, source: Any, u: int, rng: np.random.Generator, jobs: int, think: float,
         max_res: int) -> Any:
    yield source.ready
    for k in range(jobs):
        delay = DELAYS[int(rng.integers(len(DELAYS)))]
        res = int(rng.integers(1, max_res + 1))
        job = source.submit(id=f"u{u}_{k}", res=res, profile=f"delay_{delay}",
                            walltime=2.0 * delay)
        yield job.done  # its JobRecord: final_state, starting_time, end_time, ...
        yield env.timeout(rng.exponential(think))
