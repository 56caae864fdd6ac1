"""`batsim-py report` on a 1,000,000-job run: wall time of loading, metrics, plots and the
HTML page (target: under 30 s on the 2-core machine), and the page's size.

The run is the one of bench_million.py (a million generated delay jobs on 1,024 hosts, EASY),
simulated once and kept in benchmarks/.cache/ (not shipped; the simulation itself takes about a
minute with the compiled kernel). The report is timed in a fresh process, as a user runs it.

    python benchmarks/bench_report.py [--jobs 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from yardstick import Yardstick  # noqa: E402 - benchmarks/yardstick.py


def simulate(jobs: int, prefix: Path) -> None:
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options
    from batsim_py.workload.generate import generate_delay_workload
    from batsim_py.workload.writer import write_workload_json

    workload = prefix.parent / f"delay_{jobs}_1024_seed1.json"
    if not workload.exists():
        write_workload_json(generate_delay_workload(jobs, 1024, seed=1, load=0.7),
                            str(workload))
    t = time.perf_counter()
    run_simulation(RunSpec(str(ROOT / "platforms" / "cluster1024.xml"), [str(workload)],
                           Options(export_prefix=str(prefix))), InProcess(get_scheduler("easy")))
    print(f"simulated {jobs:,} jobs in {time.perf_counter() - t:.1f} s (once, cached)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cache = ROOT / "benchmarks" / ".cache"
    cache.mkdir(exist_ok=True)
    prefix = cache / f"report_run_{args.jobs}"
    if not Path(f"{prefix}_jobs.csv").exists():
        simulate(args.jobs, prefix)
    html = cache / f"report_{args.jobs}.html"
    walls, cpus = [], []
    stick = Yardstick()
    stick.sample()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "batsim_py.cli", "report", str(prefix), "-o",
                        str(html)], check=True, env=env, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    size = html.stat().st_size / 1e6
    print(f"report of {args.jobs:,} jobs: wall median {statistics.median(walls):.1f} s "
          f"(runs: {', '.join(f'{w:.1f}' for w in walls)}), CPU median "
          f"{statistics.median(cpus):.1f} s, page {size:.1f} MB; machine load average "
          f"{load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    stick.sample()
    print(f"wall median {stick.ratio(statistics.median(walls))}; {stick.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
