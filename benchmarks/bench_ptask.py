"""End-to-end speed with parallel tasks: 5,000 jobs on a 128-node cluster, with contention.

Jobs are `parallel_homogeneous` (computation plus all-to-all communication through the
cluster backbone), so the sharing core re-solves the rates of all running tasks at every start
and end. Prints jobs/s, wall time, peak memory, and the wall time as a ratio of the
plain-SimPy yardstick (benchmarks/yardstick.py) timed in the same run.

    python benchmarks/bench_ptask.py [--jobs 5000] [--scheduler easy]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from yardstick import Yardstick  # noqa: E402 - benchmarks/yardstick.py


def workload(n: int, seed: int = 3) -> dict:
    rng = random.Random(seed)
    profiles = {}
    jobs = []
    t = 0.0
    for i in range(n):
        t += rng.expovariate(1 / 20.0)
        res = rng.choice([1, 2, 4, 8, 16, 32])
        name = f"p{i % 50}"
        if name not in profiles:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": rng.uniform(1e9, 5e10),
                              "com": rng.choice([0, 1e6, 1e7, 1e8])}
        jobs.append({"id": i, "subtime": round(t, 3), "res": res, "walltime": 3600,
                     "profile": name})
    return {"nb_res": 128, "jobs": jobs, "profiles": profiles}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--scheduler", default="easy")
    args = parser.parse_args()
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    stick = Yardstick()
    stick.sample()  # (a fresh process: nothing added to this one's peak memory)
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "w.json")
        with open(path, "w") as f:
            json.dump(workload(args.jobs), f)
        t0 = time.perf_counter()
        sim = run_simulation(
            RunSpec(str(ROOT / "platforms" / "cluster128.xml"), [path],
                    Options(export_prefix=os.path.join(out, "out"))),
            InProcess(get_scheduler(args.scheduler)),
        )
        wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(sim.job_records)
    print(f"ptask jobs {n}  wall {wall:.2f} s  {n / wall:.0f} jobs/s  peak {peak:.0f} MiB  "
          f"engine steps {sim.engine._k}")
    stick.sample()
    print(f"wall {stick.ratio(wall)}; {stick.summary()}")
    from batsim_py.native import kernel_label

    print(kernel_label())
    return 0


if __name__ == "__main__":
    sys.exit(main())
