"""Speed of the core engine on large delay workloads with the in-process EASY scheduler.

Runs the f_10k and f_50k reference workloads (cluster512 platform, --mmax-workload) of the
reference corpus shipped in tests/conformance/reference, and prints jobs/s, the best and
median wall time, CPU time, peak memory (each run in a fresh process so peaks are honest), the
time spent in the scheduler and the ratio to the plain-SimPy yardstick
(benchmarks/yardstick.py): each run is paired with a yardstick sample taken just before it,
and the median of the pairs' ratios is printed, so a machine whose speed drifts (shared,
loaded) still gives comparable figures.

The scheduler's time, two columns: `sched med` is the median `sim.scheduling_time` of the
timed runs, WALL time spent in the scheduler's `exchange` (what schedule.csv prints, as
Batsim does: on a loaded machine it counts time spent waiting for a core); `sched cpu` is its
CPU time, measured once per case in one more, untimed run whose exchanges are recorded and
then replayed into a fresh scheduler (benchmarks/common.py, `scheduler_cpu`): compare
`sched cpu` with `cpu med`.

    python benchmarks/bench_delay_easy.py [--cases f_10k f_50k] [--repeat 3] [--timing ideal]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import reference, scheduler_cpu
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's batsim_py, not an installed one
CASES = {
    "f_10k": "f_10k_easy_cluster128_quiet",
    "f_50k": "f_50k_easy_cluster128_quiet",
}


def one_run(platform: str, workload: str, scheduler: str, timing: str = "batsim") -> dict:
    """Run in this process; return wall time, CPU time, the time spent in the scheduler's
    `exchange` (`sim.scheduling_time`, wall) and peak RSS."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        c0 = time.process_time()
        sim = run_simulation(
            RunSpec(platform=platform, workloads=[workload],
                    options=Options(export_prefix=os.path.join(out, "out"), timing=timing),
                    mmax_workload=True),
            InProcess(get_scheduler(scheduler)),
        )
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "cpu": cpu, "sched": sim.scheduling_time, "jobs": len(sim.job_records),
            "peak_mib": peak_kib / 1024}


def sched_cpu_run(platform: str, workload: str, scheduler: str, timing: str) -> dict:
    """The scheduler's CPU time over one run (an extra run, recorded, then replayed)."""
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.sim.options import Options

    with tempfile.TemporaryDirectory() as out:
        cpu, exchanges = scheduler_cpu(lambda decision: run_simulation(
            RunSpec(platform=platform, workloads=[workload],
                    options=Options(export_prefix=os.path.join(out, "out"), timing=timing),
                    mmax_workload=True), decision), scheduler)
    return {"sched_cpu": cpu, "exchanges": exchanges}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--timing", choices=("batsim", "ideal"), default="batsim")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--sched-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.child[0], args.child[1], args.scheduler, args.timing)))
        return 0
    if args.sched_child:
        print(json.dumps(sched_cpu_run(args.sched_child[0], args.sched_child[1],
                                       args.scheduler, args.timing)))
        return 0
    runs = []
    corpus = reference()
    for key in args.cases:
        folder = corpus / CASES[key]
        spec = json.loads((folder / "case.json").read_text())
        runs.append((key, str(folder / spec["platform"]), str(folder / spec["workloads"][0])))
    from batsim_py.native import kernel_label

    print(f"{kernel_label()}; --timing {args.timing}; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("each run is paired with a yardstick sample taken just before it (a fresh process); "
          "ratios are per pair, medians over the pairs")
    print(f"{'case':8} {'jobs':>7} {'best (s)':>9} {'median':>9} {'cpu med':>8} {'jobs/s':>8} "
          f"{'peak MiB':>9} {'x yardstick':>12} {'cpu x yard':>11} {'sched med':>10} "
          f"{'sched cpu':>10}")
    stick = Yardstick()
    for key, platform, workload in runs:
        results = []
        ratios = []
        cpu_ratios = []
        for _ in range(args.repeat):
            yard = stick.sample()
            out = subprocess.run(
                [sys.executable, __file__, "--scheduler", args.scheduler, "--timing",
                 args.timing, "--child", platform, workload],
                check=True, capture_output=True, text=True, cwd=ROOT,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.append(r)
            ratios.append(r["wall"] / yard)
            cpu_ratios.append(r["cpu"] / stick.cpu_samples[-1])
        out = subprocess.run(
            [sys.executable, __file__, "--scheduler", args.scheduler, "--timing",
             args.timing, "--sched-child", platform, workload],
            check=True, capture_output=True, text=True, cwd=ROOT,
        )
        sched = json.loads(out.stdout.strip().splitlines()[-1])
        best = min(results, key=lambda r: r["wall"])
        median = statistics.median(r["wall"] for r in results)
        cpu = statistics.median(r["cpu"] for r in results)
        print(f"{key:8} {best['jobs']:>7} {best['wall']:>9.3f} {median:>9.3f} {cpu:>8.3f} "
              f"{best['jobs'] / median:>8.0f} {max(r['peak_mib'] for r in results):>9.1f} "
              f"{statistics.median(ratios):>12.2f} {statistics.median(cpu_ratios):>11.2f} "
              f"{statistics.median(r['sched'] for r in results):>10.3f} "
              f"{sched['sched_cpu']:>10.3f}")
    print(f"{stick.summary()}; load average at end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
