"""Scale: a 1,000,000-job delay workload on 1,024 hosts with the in-process EASY scheduler.

The workload comes from the seeded generator (written once to benchmarks/.cache/, not shipped).
Prints wall and CPU time, jobs/s, peak memory and the times as ratios of the plain-SimPy
yardstick (benchmarks/yardstick.py) timed in the same run (on a loaded machine the CPU ratio is
the one to compare). Target (issue 20): a peak below 1 GB, and at most 20 times the f_50k
time of benchmarks/bench_delay_easy.py (`--jobs 50000` gives 50,000 jobs of this generator,
as wide as these: 152 machines per job on average against f_50k's 17).

Also printed: the part of the run spent writing the output files (`write_outputs`, wall and
CPU; the Pajé trace of a million such jobs is 13.4 GB), and the time in the scheduler: wall
(`sim.scheduling_time`, what schedule.csv prints) and, with `--sched-cpu`, its CPU time,
measured in one more, untimed run whose exchanges are recorded, then replayed into a fresh
scheduler (benchmarks/common.py, `scheduler_cpu`; it doubles the benchmark's time).

The two ratios of issue 20's goal ("time <= 20x the f_50k time (linear)"), unless
`--no-linear`: the same benchmark runs on LINEAR_JOBS (50,000) jobs of the same generator, on
the same 1,024 hosts, in a fresh process, and the ratio of the CPU times is printed beside its
linear value (jobs / LINEAR_JOBS: 20 for the million); then one f_50k run of
benchmarks/bench_delay_easy.py (its `--child` mode: the same timing and scheduler, a fresh
process) and the ratio of the CPU times (the goal: at most 20 for the million). Both are timed
minutes apart from the big run, on the same machine in about the same state: on a shared
machine that compares better than figures of other hours.

    python benchmarks/bench_million.py [--jobs 1000000] [--timing batsim|ideal] [--sched-cpu]
                                       [--no-linear]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import reference, scheduler_cpu  # noqa: E402 - benchmarks/common.py
from yardstick import Yardstick  # noqa: E402 - benchmarks/yardstick.py

LINEAR_JOBS = 50_000  # the smaller run of the same generator the linearity is measured on


def _timed(module, name: str) -> list[float]:  # noqa: ANN001
    """Replace module.name by a wrapper adding its wall and CPU time to the list returned."""
    spent = [0.0, 0.0]
    inner = getattr(module, name)

    def timed(*a, **kw):  # noqa: ANN002, ANN003, ANN202
        t, c = time.perf_counter(), time.process_time()
        try:
            return inner(*a, **kw)
        finally:
            spent[0] += time.perf_counter() - t
            spent[1] += time.process_time() - c

    setattr(module, name, timed)
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--timing", default="batsim")
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--sched-cpu", action="store_true",
                        help="also measure the scheduler's CPU time (one more run)")
    parser.add_argument("--no-linear", action="store_true",
                        help=f"skip the runs on {LINEAR_JOBS:,} jobs and on f_50k (the ratios)")
    args = parser.parse_args()

    from batsim_py import run as run_module
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
    write_outputs, load_workload = run_module.write_outputs, run_module.load_workload
    writing = _timed(run_module, "write_outputs")  # wall and CPU time in write_outputs
    loading = _timed(run_module, "load_workload")  # wall and CPU time in load_workload

    def spec(out: str) -> RunSpec:
        return RunSpec(str(ROOT / "platforms" / "cluster1024.xml"), [str(workload)],
                       Options(export_prefix=os.path.join(out, "out"), timing=args.timing))

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        c0 = time.process_time()
        sim = run_simulation(spec(out), InProcess(get_scheduler(args.scheduler)))
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    run_module.write_outputs = write_outputs
    run_module.load_workload = load_workload
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(sim.job_records)
    scheduling_time = sim.scheduling_time
    del sim
    print(f"jobs {n}  wall {wall:.1f} s  cpu {cpu:.1f} s  {n / wall:.0f} jobs/s  "
          f"peak {peak:.0f} MiB  (timing {args.timing}, scheduler {args.scheduler})")
    print(f"of which loading the workload: wall {loading[0]:.1f} s, cpu {loading[1]:.1f} s; "
          f"writing the outputs: wall {writing[0]:.1f} s, cpu {writing[1]:.1f} s; "
          f"in the scheduler: wall {scheduling_time:.1f} s", end="")
    if args.sched_cpu:
        with tempfile.TemporaryDirectory() as out:
            sched_cpu, exchanges = scheduler_cpu(
                lambda decision: run_simulation(spec(out), decision), args.scheduler)
        print(f", cpu {sched_cpu:.1f} s ({exchanges} exchanges, replayed)")
    else:
        print(" (cpu: --sched-cpu)")
    stick.sample()
    best_cpu = min(stick.cpu_samples)
    print(f"wall {stick.ratio(wall)}; cpu {cpu / best_cpu:.3g} x the yardstick's cpu "
          f"(loading the workload {loading[1] / best_cpu:.3g}x, writing the outputs "
          f"{writing[1] / best_cpu:.3g}x); {stick.summary()}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    from batsim_py.native import kernel_label

    print(kernel_label())
    if not args.no_linear and args.jobs != LINEAR_JOBS:
        _linearity(args, cpu)
    return 0


def _linearity(args: argparse.Namespace, cpu: float) -> None:
    """This benchmark on LINEAR_JOBS jobs of the same generator, then f_50k through
    bench_delay_easy.py (fresh processes: their own imports and peaks), and the ratios of the
    CPU times."""
    small = subprocess.run(
        [sys.executable, __file__, "--jobs", str(LINEAR_JOBS), "--timing", args.timing,
         "--scheduler", args.scheduler, "--no-linear"],
        capture_output=True, text=True, check=True).stdout
    found = re.search(r"cpu ([0-9.]+) s", small)
    if found is None:
        raise SystemExit(f"no cpu time in the {LINEAR_JOBS}-job run's output:\n{small}")
    small_cpu = float(found.group(1))
    print(f"linearity: {args.jobs:,} jobs cpu {cpu:.1f} s / {LINEAR_JOBS:,} jobs of the same "
          f"generator cpu {small_cpu:.2f} s = {cpu / small_cpu:.1f} "
          f"(linear: {args.jobs / LINEAR_JOBS:g})")
    folder = reference() / "f_50k_easy_cluster128_quiet"
    case = json.loads((folder / "case.json").read_text())
    f50k = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_delay_easy.py"), "--scheduler",
         args.scheduler, "--timing", args.timing, "--child",
         str(folder / case["platform"]), str(folder / case["workloads"][0])],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    f50k_cpu = json.loads(f50k.strip().splitlines()[-1])["cpu"]
    print(f"against f_50k: {args.jobs:,} jobs cpu {cpu:.1f} s / f_50k (bench_delay_easy.py, "
          f"--timing {args.timing}) cpu {f50k_cpu:.2f} s = {cpu / f50k_cpu:.1f} "
          "(issue 20's goal for 1,000,000 jobs: <= 20)")


if __name__ == "__main__":
    sys.exit(main())
