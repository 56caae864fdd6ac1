"""pybatsim's `easyBackfill` in-process (`--scheduler pybatsim:easyBackfill`) vs over ZeroMQ.

In one run, alternating (ZeroMQ, in-process, ZeroMQ, ...), each run a fresh batsim-py process
(and, over ZeroMQ, a fresh `pybatsim` process) timed from start to exit: f_10k (the reference
workload of the corpus shipped in tests/conformance/reference, --mmax-workload). Prints the
medians, their ratio (the target is >= 3x), each as a ratio of the plain-SimPy yardstick sampled
before and after, and checks that both modes wrote the same jobs.csv and machine_states.csv and
that they equal Batsim's.

    python benchmarks/bench_pybatsim_inprocess.py [--case f_10k|f_50k] [--repeat 3]

Needs pybatsim 3.2.1 (`pip install --no-deps pybatsim==3.2.1 procset sortedcontainers docopt`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import free_port, reference
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
CASES = {"f_10k": "f_10k_easy_cluster128_quiet", "f_50k": "f_50k_easy_cluster128_quiet"}
SCHEDULER = "easyBackfill"


def inputs(case: str) -> tuple[list[str], Path]:
    """The CLI's input arguments, and the folder of Batsim's expected outputs."""
    folder = reference() / CASES[case]
    spec = json.loads((folder / "case.json").read_text())
    return (["-p", str(folder / spec["platform"]), "-w", str(folder / spec["workloads"][0]),
             *spec["batsim_args"]], folder / "expected" / "out")


def one_run(args: list[str], zeromq: bool, out: str) -> float:
    """Wall time of one whole run, process start to exit."""
    cli = [sys.executable, "-m", "batsim_py.cli", "-q", *args, "-e", f"{out}/out"]
    t0 = time.perf_counter()
    if zeromq:
        port = free_port()
        sched = subprocess.Popen(
            [shutil.which("pybatsim") or "pybatsim", SCHEDULER, "-s", f"tcp://127.0.0.1:{port}",
             "-t", "0", "-v", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out,
        )
        subprocess.run([*cli, "-s", f"tcp://127.0.0.1:{port}"], check=True, cwd=ROOT)
        sched.wait(timeout=600)
    else:
        subprocess.run([*cli, "--scheduler", f"pybatsim:{SCHEDULER}"], check=True,
                       cwd=out,  # (pybatsim's batsim.sched layer writes in the cwd)
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # this tree's batsim_py
    return time.perf_counter() - t0


def digest(out: str) -> str:
    h = hashlib.sha256()
    for name in ("jobs", "machine_states"):
        h.update(Path(f"{out}/out_{name}.csv").read_bytes())
    return h.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="f_10k", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("pybatsim") is None:
        print("needs pybatsim 3.2.1: pip install --no-deps pybatsim==3.2.1 procset "
              "sortedcontainers docopt")
        return 1
    cli_args, expected = inputs(args.case)
    label = args.case
    stick = Yardstick()
    stick.sample()
    walls: dict[bool, list[float]] = {True: [], False: []}
    digests: set[str] = set()
    same_as_batsim = True
    for _ in range(args.repeat):
        for zeromq in (True, False):
            with tempfile.TemporaryDirectory() as out:
                walls[zeromq].append(one_run(cli_args, zeromq, out))
                digests.add(digest(out))
                cmp = subprocess.run([sys.executable, "-m", "batsim_py.cli", "compare",
                                      str(expected), f"{out}/out"], capture_output=True,
                                     cwd=ROOT)
                same_as_batsim &= cmp.returncode == 0
    stick.sample()
    zmq, inproc = statistics.median(walls[True]), statistics.median(walls[False])
    print(f"{label}: pybatsim {SCHEDULER}, medians of {args.repeat} alternated runs "
          "(wall s, process start to exit)")
    print(f"  over ZeroMQ   {zmq:7.2f}   {stick.ratio(zmq)}   "
          f"(runs {', '.join(f'{w:.2f}' for w in walls[True])})")
    print(f"  in-process    {inproc:7.2f}   {stick.ratio(inproc)}   "
          f"(runs {', '.join(f'{w:.2f}' for w in walls[False])})")
    print(f"  in-process is {zmq / inproc:.2f}x faster (target >= 3x)")
    print(f"  outputs: {'identical in both modes' if len(digests) == 1 else 'DIFFERENT'}, "
          f"{'equal to' if same_as_batsim else 'DIFFERENT from'} Batsim's")
    print(f"  {stick.summary()}")
    return 0 if len(digests) == 1 and same_as_batsim else 1


if __name__ == "__main__":
    sys.exit(main())
