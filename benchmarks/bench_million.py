"""Scale: a 1,000,000-job delay workload on 1,024 hosts with the in-process EASY scheduler.

The workload comes from the seeded generator (written once to benchmarks/.cache/, not shipped).
Prints wall and CPU time, jobs/s, peak memory and the times as ratios of the plain-SimPy
yardstick (benchmarks/yardstick.py) timed in the same run (on a loaded machine the CPU ratio is
the one to compare). Target (issue 20): a peak below 1 GB, and at most 20 times the f_50k
time of benchmarks/bench_delay_easy.py (`--jobs 50000` gives 50,000 jobs of this generator,
as wide as these: 152 machines per job on average against f_50k's 17).

    python benchmarks/bench_million.py [--jobs 1000000] [--timing batsim|ideal]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from yardstick import Yardstick  # noqa: E402 - benchmarks/yardstick.py


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--timing", default="batsim")
    parser.add_argument("--scheduler", default="easy")
    args = parser.parse_args()

    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options
    from batsim_py.workload.generate import generate_delay_workload
    from batsim_py.workload.writer import write_workload_json

    cache = ROOT / "benchmarks" / ".cache"
    cache.mkdir(exist_ok=True)
    workload = cache / f"delay_{args.jobs}_1024_seed1.json"
    if not workload.exists():
        t = time.perf_counter()
        write_workload_json(generate_delay_workload(args.jobs, 1024, seed=1, load=0.7),
                            str(workload))
        print(f"generated {workload.name} in {time.perf_counter() - t:.1f} s")
    stick = Yardstick()
    stick.sample()  # (a fresh process: nothing added to this one's peak memory)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        c0 = time.process_time()
        sim = run_simulation(
            RunSpec(str(ROOT / "platforms" / "cluster1024.xml"), [str(workload)],
                    Options(export_prefix=os.path.join(out, "out"), timing=args.timing)),
            InProcess(get_scheduler(args.scheduler)),
        )
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(sim.job_records)
    print(f"jobs {n}  wall {wall:.1f} s  cpu {cpu:.1f} s  {n / wall:.0f} jobs/s  "
          f"peak {peak:.0f} MiB  "
          f"(of which in the scheduler {sim.scheduling_time:.1f} s; timing {args.timing}, "
          f"scheduler {args.scheduler})")
    stick.sample()
    print(f"wall {stick.ratio(wall)}; cpu {cpu / min(stick.cpu_samples):.3g} x the yardstick's "
          f"cpu; {stick.summary()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    from batsim_py.native import kernel_label

    print(kernel_label())
    return 0


if __name__ == "__main__":
    sys.exit(main())
