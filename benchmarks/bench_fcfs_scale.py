"""Scale of the in-process `fcfs` scheduler: time ratios when jobs and hosts double.

Runs the in-process `fcfs` (or any `--scheduler`) on generated delay workloads for four sizes,
(J, H), (2J, H), (J, 2H), (2J, 2H), each in a fresh process (clean peak memory), and prints the
whole run's wall and CPU times, the scheduler's own CPU time (in its `exchange`), peak memory
and the CPU ratios to (J, H) (CPU times, because wall times on a shared machine mislead).
Near-linear growth means: about 2x for twice the jobs, about 1x for twice the hosts (job sizes
do not grow with the platform: `--max-res`), about 2x for both. A full machine scan per
attempt makes the scheduler's "2x hosts" ratio about 2x and "2x both" about 4x.
The default offered load (0.95) keeps the cluster busy, so the queue head often waits: that is
where a full scan costs most (at load 0.7 the first fit is usually found early in the list).
Platforms are flat clusters (platforms/cluster128.xml widened), workloads from the seeded
generator; both are written once to benchmarks/.cache/. No Pajé trace (its size is the jobs'
total width, not a scheduler cost).

    python benchmarks/bench_fcfs_scale.py [--jobs 50000] [--hosts 5000] [--max-res 64]
        [--load 0.95] [--scheduler fcfs]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's batsim_py, also in the child processes
CACHE = ROOT / "benchmarks" / ".cache"


def inputs(jobs: int, hosts: int, max_res: int, load: float) -> tuple[Path, Path]:
    """A cluster of `hosts` compute nodes and a workload of `jobs` delay jobs (cached)."""
    from batsim_py.workload.generate import generate_delay_workload
    from batsim_py.workload.writer import write_workload_json

    CACHE.mkdir(exist_ok=True)
    platform = CACHE / f"cluster{hosts}.xml"
    if not platform.exists():
        text = (ROOT / "platforms" / "cluster128.xml").read_text()
        platform.write_text(text.replace('radical="0-127"', f'radical="0-{hosts - 1}"'))
    workload = CACHE / f"delay_{jobs}_{hosts}_max{max_res}_load{load}_seed1.json"
    if not workload.exists():
        write_workload_json(generate_delay_workload(jobs, hosts, seed=1, load=load,
                                                    max_res=min(max_res, hosts)), str(workload))
    return platform, workload


def one(jobs: int, hosts: int, max_res: int, load: float, scheduler: str) -> dict[str, float]:
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.decision.interface import DecisionProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    class CpuTimed(DecisionProcess):
        """The scheduler's own CPU time (wall clocks mislead on a shared machine)."""

        def __init__(self, scheduler: DecisionProcess) -> None:
            self.scheduler = scheduler
            self.cpu = 0.0

        def exchange(self, now, events):  # type: ignore[no-untyped-def]
            t = time.process_time()
            try:
                return self.scheduler.exchange(now, events)
            finally:
                self.cpu += time.process_time() - t

    platform, workload = inputs(jobs, hosts, max_res, load)
    timed = CpuTimed(get_scheduler(scheduler))
    with tempfile.TemporaryDirectory() as out:
        t0, c0 = time.perf_counter(), time.process_time()
        sim = run_simulation(
            RunSpec(str(platform), [str(workload)],
                    Options(export_prefix=os.path.join(out, "out"),
                            schedule_tracing=False)),
            InProcess(timed),
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"wall": wall, "cpu": cpu, "sched": timed.cpu, "peak": peak,
            "jobs": len(sim.job_records)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--hosts", type=int, default=5_000)
    parser.add_argument("--max-res", type=int, default=64)
    parser.add_argument("--load", type=float, default=0.95,
                        help="offered load (a busy cluster: a blocked queue head)")
    parser.add_argument("--scheduler", default="fcfs")
    parser.add_argument("--one", nargs=2, type=int, metavar=("JOBS", "HOSTS"),
                        help=argparse.SUPPRESS)  # a single size, as a child process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one, args.max_res, args.load, args.scheduler)))
        return 0
    sizes = [(args.jobs, args.hosts), (2 * args.jobs, args.hosts),
             (args.jobs, 2 * args.hosts), (2 * args.jobs, 2 * args.hosts)]
    for jobs, hosts in sizes:  # (generated here, not timed in the children)
        inputs(jobs, hosts, args.max_res, args.load)
    results = []
    for jobs, hosts in sizes:
        proc = subprocess.run(
            [sys.executable, __file__, "--one", str(jobs), str(hosts), "--max-res",
             str(args.max_res), "--load", str(args.load), "--scheduler", args.scheduler],
            capture_output=True, text=True, check=True, cwd=ROOT)
        results.append(json.loads(proc.stdout.splitlines()[-1]))
    base = results[0]
    print(f"scheduler {args.scheduler}, job sizes 1-{args.max_res}, load {args.load}, "
          "no Pajé trace")
    print("CPU seconds of the whole run and of the scheduler alone, ratios to the first row")
    print(f"{'jobs':>8} {'hosts':>6} {'wall s':>7} {'cpu s':>7} {'sched s':>8} {'peak MiB':>9} "
          f"{'cpu x':>6} {'sched x':>8}")
    for (jobs, hosts), r in zip(sizes, results, strict=True):
        cpu_x, sched_x = r["cpu"] / base["cpu"], r["sched"] / base["sched"]
        print(f"{jobs:>8} {hosts:>6} {r['wall']:>7.1f} {r['cpu']:>7.1f} {r['sched']:>8.2f} "
              f"{r['peak']:>9.0f} {cpu_x:>6.2f} {sched_x:>8.2f}")
    from batsim_py.native import kernel_label

    print(kernel_label())
    return 0


if __name__ == "__main__":
    sys.exit(main())
