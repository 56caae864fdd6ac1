"""Cost of the progress line: the same run with and without it, alternated, CPU seconds of
the process (user + system, less noisy than wall time on a shared machine) and wall time.

The workload is a generated delay workload (default 20,000 jobs on 128 hosts, EASY); the line
is drawn to a file, as to a terminal, every 0.25 s after the first second. Besides the
whole-run CPU (noisy on a shared machine), the display's own thread reports its CPU time
(time.thread_time): the direct measure of its cost.

    python benchmarks/bench_progress.py [--jobs 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import os, resource, sys, time
sys.path.insert(0, {root!r})
from batsim_py.decision.inprocess import InProcess
from batsim_py.progress import ProgressDisplay
from batsim_py.run import RunSpec, build_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options
sim = build_simulation(RunSpec({platform!r}, [{workload!r}], Options(export_prefix={prefix!r})),
                       InProcess(get_scheduler("easy")))
start = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
thread_cpu = 0.0
if {progress}:
    with ProgressDisplay(sim) as display:  # stderr: a file, drawn as on a terminal
        sim.run()
    thread_cpu = display.cpu_seconds
else:
    sim.run()
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_SELF)
print(wall, r.ru_utime + r.ru_stime - start.ru_utime - start.ru_stime, thread_cpu)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
    stick = Yardstick()
    stick.sample()
    with tempfile.TemporaryDirectory() as tmp:
        workload = os.path.join(tmp, "w.json")
        subprocess.run([sys.executable, "-m", "batsim_py.cli", "generate", workload, "-n",
                        str(args.jobs), "-r", "128", "--seed", "1"], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        for _ in range(args.repeat):
            for progress in (False, True):
                code = CHILD.format(root=str(ROOT), platform=str(ROOT / "platforms" /
                                    "cluster128.xml"), workload=workload,
                                    prefix=os.path.join(tmp, "out"), progress=progress)
                with open(os.path.join(tmp, "stderr"), "w") as err:
                    out = subprocess.run([sys.executable, "-c", code], check=True, stderr=err,
                                         capture_output=False, stdout=subprocess.PIPE,
                                         text=True).stdout
                wall, cpu, thread = map(float, out.split())
                results[progress].append((wall, cpu, thread))
    stick.sample()
    for progress in (False, True):
        walls = [r[0] for r in results[progress]]
        cpus = [r[1] for r in results[progress]]
        print(f"progress {'on ' if progress else 'off'}: simulation CPU median "
              f"{statistics.median(cpus):.2f} s, wall median {statistics.median(walls):.2f} s "
              f"({stick.ratio(statistics.median(walls))}; {args.repeat} runs, "
              f"{args.jobs:,} jobs)")
    off = statistics.median(r[1] for r in results[False])
    on = statistics.median(r[1] for r in results[True])
    share = statistics.median(r[2] / r[1] for r in results[True])
    print(f"CPU of the progress thread itself: median {100 * share:.2f} % of the run's CPU "
          f"(its redraws, import of tqdm included); whole-run CPU on vs off: "
          f"{100 * (on - off) / off:+.1f} % (machine noise included)")
    print(stick.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
