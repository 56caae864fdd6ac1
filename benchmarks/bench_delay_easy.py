"""Speed of the core engine on large delay workloads with the in-process EASY scheduler.

Runs the f_10k and f_50k reference workloads (cluster512 platform, --mmax-workload) of the
reference corpus shipped in tests/conformance/reference, and prints jobs/s, the best and
median wall time, peak memory (each run in a fresh process so peaks are honest) and the median
as a ratio of the plain-SimPy yardstick (benchmarks/yardstick.py) timed in the same run.

    python benchmarks/bench_delay_easy.py [--cases f_10k f_50k] [--repeat 3]
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

from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's batsim_py, not an installed one
CASES = {
    "f_10k": "f_10k_easy_cluster128_quiet",
    "f_50k": "f_50k_easy_cluster128_quiet",
}


def reference() -> Path:
    """The reference corpus shipped in tests/conformance/reference, its compressed (f_50k)
    files written out on first use (tests/conformance/corpus.py)."""
    sys.path.insert(0, str(ROOT / "tests" / "conformance"))
    from corpus import prepare

    return prepare()


def one_run(platform: str, workload: str, scheduler: str) -> dict:
    """Run in this process; return wall time and peak RSS."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        sim = run_simulation(
            RunSpec(platform=platform, workloads=[workload],
                    options=Options(export_prefix=os.path.join(out, "out")),
                    mmax_workload=True),
            InProcess(get_scheduler(scheduler)),
        )
        wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "jobs": len(sim.job_records), "peak_mib": peak_kib / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.child[0], args.child[1], args.scheduler)))
        return 0
    runs = []
    corpus = reference()
    for key in args.cases:
        folder = corpus / CASES[key]
        spec = json.loads((folder / "case.json").read_text())
        runs.append((key, str(folder / spec["platform"]), str(folder / spec["workloads"][0])))
    from batsim_py.native import kernel_label

    print(kernel_label())
    stick = Yardstick()
    stick.sample()
    print(f"{'case':8} {'jobs':>7} {'wall (s)':>9} {'median':>9} {'jobs/s':>9} {'peak MiB':>9} "
          f"{'median x yardstick':>19}")
    for key, platform, workload in runs:
        results = []
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, __file__, "--scheduler", args.scheduler, "--child", platform,
                 workload],
                check=True, capture_output=True, text=True, cwd=ROOT,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        best = min(results, key=lambda r: r["wall"])
        median = sorted(r["wall"] for r in results)[len(results) // 2]
        print(f"{key:8} {best['jobs']:>7} {best['wall']:>9.3f} {median:>9.3f} "
              f"{best['jobs'] / best['wall']:>9.0f} {max(r['peak_mib'] for r in results):>9.1f} "
              f"{median / stick.samples[0]:>19.2f}")
    stick.sample()
    print(f"{stick.summary()} (ratios use the first sample)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
