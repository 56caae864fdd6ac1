"""What user SimPy code costs a run that has none, and one that has one idle process.

In one run, alternating in fresh processes: f_50k (in-process EASY, the reference workload
shipped in tests/conformance/reference) without user code (A), and with one idle user
process (B: `yield env.event()`, never woken), plus the plain-SimPy yardstick
(benchmarks/yardstick.py) before and after. Prints
the kernel used, the best wall time of each, B/A, and each as a ratio of the yardstick; and
checks that A and B wrote the same jobs.csv and machine_states.csv (sha256).

    python benchmarks/bench_user_process.py [--repeat 3] [--case f_50k|f_10k]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import reference
from yardstick import Yardstick  # benchmarks/yardstick.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
CASES = {"f_50k": "f_50k_easy_cluster128_quiet", "f_10k": "f_10k_easy_cluster128_quiet"}


def idle(env, sim):  # noqa: ANN001, ANN201 - the idle user process of run B
    yield env.event()


def child(platform: str, workload: str, with_process: bool) -> dict:
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    def setup(sim):  # noqa: ANN001, ANN202
        from batsim_py.api import Simulator

        Simulator.around(sim, spec).process(idle)

    with tempfile.TemporaryDirectory() as out:
        prefix = os.path.join(out, "out")
        spec = RunSpec(platform=platform, workloads=[workload],
                       options=Options(export_prefix=prefix), mmax_workload=True)
        t0 = time.perf_counter()
        c0 = time.process_time()
        decision = InProcess(get_scheduler("easy"))
        if with_process:
            sim = run_simulation(spec, decision, setup)
        else:  # (as a baseline tree without the setup hook is called)
            sim = run_simulation(spec, decision)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        digest = hashlib.sha256()
        for name in ("jobs", "machine_states"):
            digest.update(Path(f"{prefix}_{name}.csv").read_bytes())
    return {"wall": wall, "cpu": cpu, "jobs": len(sim.job_records),
            "sha256": digest.hexdigest()}


def yardstick() -> float:
    """Wall time of one fresh-process run of the plain-SimPy loop (benchmarks/yardstick.py)."""
    return Yardstick().sample()


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", default="f_50k", choices=sorted(CASES))
    parser.add_argument("--baseline", help="a checkout of the kernel before user processes "
                        "(its compiled modules built in place): also run it without user code")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.child[2] == "1")))
        return 0
    folder = reference() / CASES[args.case]  # (shipped: tests/conformance/reference)
    case = json.loads((folder / "case.json").read_text())
    platform, workload = str(folder / case["platform"]), str(folder / case["workloads"][0])
    label = args.case
    for tree in [str(ROOT)] + ([args.baseline] if args.baseline else []):
        label_of = subprocess.run(
            [sys.executable, "-c", "from batsim_py.native import kernel_label; "
             "print(kernel_label())"], capture_output=True, text=True, cwd=tree,
            env=dict(os.environ, PYTHONPATH=tree), check=True)
        print(f"{tree}: {label_of.stdout.strip()}")
    sticks = [yardstick()]
    keys = ["A", "B"] + (["C"] if args.baseline else [])
    walls: dict[str, list[float]] = {k: [] for k in keys}
    cpus: dict[str, list[float]] = {k: [] for k in keys}
    digests: dict[str, set[str]] = {k: set() for k in keys}
    jobs = 0
    for _ in range(args.repeat):
        for key in keys:
            tree = args.baseline if key == "C" else str(ROOT)
            out = subprocess.run(
                [sys.executable, __file__, "--child", platform, workload,
                 "1" if key == "B" else "0"],
                check=True, capture_output=True, text=True, cwd=tree,
                env=dict(os.environ, PYTHONPATH=tree),
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            walls[key].append(result["wall"])
            cpus[key].append(result["cpu"])
            digests[key].add(result["sha256"])
            jobs = result["jobs"]
    sticks.append(yardstick())
    stick = min(sticks)
    a, b = min(walls["A"]), min(walls["B"])
    print(f"{label}: {jobs} jobs, in-process EASY, best of {args.repeat} (wall s)")
    print(f"  A  no user code         {a:7.3f}   {a / stick:5.2f} x yardstick")
    print(f"  B  one idle process     {b:7.3f}   {b / stick:5.2f} x yardstick")
    runs = ", ".join(f"{s:.3f}" for s in sticks)
    print(f"  yardstick (plain SimPy) {stick:7.3f}   (runs: {runs})")
    if args.baseline:
        c = min(walls["C"])
        print(f"  C  baseline tree        {c:7.3f}   {c / stick:5.2f} x yardstick   "
              f"({args.baseline})")
        print(f"  A / C = {a / c:.3f}")
    print(f"  B / A = {b / a:.3f}")
    print("  CPU time (s, best; less disturbed by other processes on a shared machine):")
    for label_, pick in (("best", min), ("median", _median)):
        cpu = {k: pick(cpus[k]) for k in keys}
        print(f"    {label_:6}  " + "   ".join(f"{k} {cpu[k]:.3f}" for k in keys)
              + f"   B/A {cpu['B'] / cpu['A']:.3f}"
              + (f"   A/C {cpu['A'] / cpu['C']:.3f}" if "C" in cpu else "")
              + f"   A/yardstick {cpu['A'] / stick:.2f}")
    for key in keys:
        print(f"  all {key} walls: {', '.join(f'{w:.3f}' for w in walls[key])}; "
              f"cpu: {', '.join(f'{w:.3f}' for w in cpus[key])}")
    same = all(digests[k] == digests["A"] for k in keys) and len(digests["A"]) == 1
    print(f"  outputs of {', '.join(keys)} identical: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
