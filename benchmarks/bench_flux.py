"""Wall time of a run driven by the shipped Flux clients (`--protocol flux`), in-process and
as a separate process over ZeroMQ, beside the Batsim-protocol in-process `fcfs` and `easy`.

    python benchmarks/bench_flux.py [--repeat 3] [--workload workloads/gen_delay_1k_128.json]

Each configuration runs `--repeat` times, alternated with the others (the machine's load
then weighs on all alike); the median wall time of the whole command is printed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import free_port

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the runs use this tree's batsim_py: say which kernel it has


def _free_endpoint() -> str:
    return f"tcp://127.0.0.1:{free_port()}"


def configs() -> dict[str, list[str]]:
    return {
        "batsim fcfs (in-process)": ["--scheduler", "fcfs"],
        "flux fifo (in-process)": ["--protocol", "flux", "--flux-scheduler", "fifo"],
        "flux fifo (process, ZeroMQ)": ["--protocol", "flux", "PROCESS:fifo"],
        "batsim easy (in-process)": ["--scheduler", "easy"],
        "flux easy (in-process)": ["--protocol", "flux", "--flux-scheduler", "easy"],
        "flux easy (process, ZeroMQ)": ["--protocol", "flux", "PROCESS:easy"],
    }


def run_once(args: list[str], platform: str, workload: str, out: str) -> float:
    argv = [sys.executable, "-m", "batsim_py.cli", "-p", platform, "-w", workload, "-e", out,
            "-q"]
    for a in args:
        if a.startswith("PROCESS:"):
            endpoint = _free_endpoint()
            argv += ["-s", endpoint, "--scheduler-command",
                     f"{sys.executable} -m batsim_py.flux_client {a[8:]} -s {endpoint}"]
        else:
            argv.append(a)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, cwd=ROOT)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--platform", default=str(ROOT / "platforms" / "cluster128.xml"))
    parser.add_argument("--workload", default=str(ROOT / "workloads" / "gen_delay_1k_128.json"))
    args = parser.parse_args()
    from batsim_py.native import kernel_label

    print(f"{kernel_label()}; {Path(args.workload).name} on "
          f"{Path(args.platform).name}; median of {args.repeat}")
    times: dict[str, list[float]] = {name: [] for name in configs()}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for name, how in configs().items():
                times[name].append(run_once(how, args.platform, args.workload,
                                            f"{tmp}/r{i}"))
    for name, values in times.items():
        print(f"{name:32s} {statistics.median(values):7.2f} s")


if __name__ == "__main__":
    main()
