"""Whole-run wall time of batsim-py driven by pybatsim's `easyBackfill` over ZeroMQ.

The reference runs of real Batsim 4.2.1 + pybatsim on a 2-core machine took (median of 4):
f_10k 7.1 s, f_50k 37.2 s (tests/conformance/reference/README.md). The target is <= 0.6 x
those. Also prints each wall time as a ratio of the plain-SimPy yardstick
(benchmarks/yardstick.py).

    python benchmarks/bench_zmq_pybatsim.py [--cases f_10k f_50k] [--repeat 1]

Needs pybatsim on the PATH (see .ci/run for how to install it); the reference cases are the
ones shipped in tests/conformance/reference.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import free_port, reference
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
CASES = {"f_10k": ("f_10k_easy_cluster128_quiet", 7.1), "f_50k": ("f_50k_easy_cluster128_quiet",
                                                                  37.2)}


def one_run(case: str) -> tuple[float, int]:
    folder = reference() / case
    spec = json.loads((folder / "case.json").read_text())
    port = free_port()
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        sched = subprocess.Popen(
            [shutil.which("pybatsim") or "pybatsim", spec["scheduler"]["name"], "-s",
             f"tcp://127.0.0.1:{port}", "-t", "0", "-v", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out,
        )
        sim = subprocess.run(
            [sys.executable, "-m", "batsim_py.cli", "-q", "-p", str(folder / spec["platform"]),
             "-w", str(folder / spec["workloads"][0]), *spec["batsim_args"],
             "-s", f"tcp://127.0.0.1:{port}", "-e", f"{out}/out"],
            check=True,
        )
        sched.wait(timeout=600)
        wall = time.perf_counter() - t0
        ok = subprocess.run(
            [sys.executable, "-m", "batsim_py.cli", "compare", str(folder / "expected" / "out"),
             f"{out}/out"], capture_output=True, text=True,
        )
        assert sim.returncode == 0
        return wall, ok.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if shutil.which("pybatsim") is None:
        print("needs pybatsim on the PATH (see .ci/run for how to install it)")
        return 1
    stick = Yardstick()
    stick.sample()
    print(f"{'case':6} {'wall (s)':>9} {'Batsim (s)':>11} {'ratio':>6} {'x yardstick':>12}  "
          "outputs")
    for key in args.cases:
        case, batsim_wall = CASES[key]
        walls = []
        for _ in range(args.repeat):
            wall, rc = one_run(case)
            walls.append(wall)
        best = min(walls)
        print(f"{key:6} {best:>9.2f} {batsim_wall:>11.1f} {best / batsim_wall:>6.2f} "
              f"{best / stick.best:>12.2f}  "
              f"{'identical to Batsim' if rc == 0 else 'DIFFERENT'}")
    stick.sample()
    print(f"{stick.summary()} (ratios use the first sample)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
