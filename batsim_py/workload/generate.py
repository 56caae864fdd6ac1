"""Seeded synthetic delay workloads, for speed tests and examples of any size.

Shipping big workloads in the repository is wasteful when a seed reproduces them. The model
is a classic one for batch systems: Poisson arrivals, log-uniform run times and job sizes
(half of them rounded to a power of two, as users like), a walltime that over-estimates the
run time. The arrival rate is set from the sampled jobs so that the offered load
(sum of res * runtime over nb_res * span) matches `load`.

Determinism relies on `random.Random`, whose `random()` stream is stable across Python
versions (numpy's Generator streams are not guaranteed to be); the same arguments therefore
give the same file everywhere.
"""

from __future__ import annotations

import math
import random
from typing import Any

from batsim_py.errors import UsageError


def generate_delay_workload(
    nb_jobs: int,
    nb_res: int,
    *,
    seed: int = 0,
    load: float = 0.7,
    min_runtime: int = 60,
    max_runtime: int = 36_000,
    max_res: int | None = None,
    walltime_factor: float = 3.0,
) -> dict[str, Any]:
    """A Batsim JSON workload object of `nb_jobs` delay jobs for `nb_res` machines.

    Times are integer seconds (exact in JSON and in outputs). Walltimes are drawn in
    [runtime, walltime_factor * runtime] and rounded up to a minute; `walltime_factor <= 0`
    gives jobs without walltime. One delay profile per distinct run time (`delay_<s>`).
    """
    if nb_jobs < 0:
        raise UsageError(f"nb_jobs must be >= 0, got {nb_jobs}")
    if nb_res <= 0:
        raise UsageError(f"nb_res must be > 0, got {nb_res}")
    if not load > 0:
        raise UsageError(f"load must be > 0, got {load}")
    if not 0 < min_runtime <= max_runtime:
        raise UsageError(f"need 0 < min_runtime <= max_runtime, got {min_runtime}, {max_runtime}")
    max_res = nb_res if max_res is None else max_res
    if not 1 <= max_res <= nb_res:
        raise UsageError(f"max_res must be in [1, nb_res={nb_res}], got {max_res}")

    rng = random.Random(seed)
    log_min, log_max = math.log(min_runtime), math.log(max_runtime)
    log_res = math.log2(max_res)
    sizes: list[int] = []
    runtimes: list[int] = []
    walltimes: list[int] = []
    for _ in range(nb_jobs):
        size = 2.0 ** (rng.random() * log_res)
        if rng.random() < 0.5:
            size = 2.0 ** round(math.log2(size))
        sizes.append(min(max_res, max(1, int(size))))
        runtime = max(1, round(math.exp(log_min + rng.random() * (log_max - log_min))))
        runtimes.append(runtime)
        factor = 1.0 + rng.random() * (walltime_factor - 1.0) if walltime_factor > 0 else 0.0
        walltimes.append(60 * math.ceil(runtime * max(factor, 1.0) / 60))

    work = sum(s * r for s, r in zip(sizes, runtimes, strict=True))
    # Poisson process: mean inter-arrival = span / nb_jobs with span = work / (load * nb_res).
    mean_gap = work / (load * nb_res) / nb_jobs if nb_jobs else 0.0
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    clock = 0.0
    for i in range(nb_jobs):
        if i:
            clock += rng.expovariate(1.0 / mean_gap) if mean_gap > 0 else 0.0
        pname = f"delay_{runtimes[i]}"
        profiles.setdefault(pname, {"type": "delay", "delay": runtimes[i]})
        job: dict[str, Any] = {"id": i, "subtime": round(clock), "res": sizes[i]}
        if walltime_factor > 0:
            job["walltime"] = walltimes[i]
        job["profile"] = pname
        jobs.append(job)

    return {
        "description": (
            f"batsim_py.workload.generate nb_jobs={nb_jobs} nb_res={nb_res} seed={seed} "
            f"load={load} runtime=[{min_runtime},{max_runtime}] max_res={max_res} "
            f"walltime_factor={walltime_factor}"
        ),
        "nb_res": nb_res,
        "jobs": jobs,
        "profiles": profiles,
    }
