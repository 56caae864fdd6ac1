"""The legacy text protocol (seed 001) against the in-process `fcfs`, side by side.

In one run, alternating (in-process, legacy v1 over a Unix socket, legacy v3 over ZeroMQ, ...),
each a fresh batsim-py process (the legacy ones with the shipped `batsim_py.legacy_client.fcfs`
started by `--scheduler-command`) timed from start to exit on the 1,000-job workload of
cluster128. Prints the medians, each as a ratio of the in-process run and of the plain-SimPy
yardstick sampled before and after, and checks that every mode wrote the same jobs.csv.

    python benchmarks/bench_legacy.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import free_port
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster128.xml"
WORKLOAD = ROOT / "workloads" / "gen_delay_1k_128.json"


def modes(folder: str) -> dict[str, list[str]]:
    """The extra arguments of each mode (the legacy ones start their scheduler themselves)."""
    client = [sys.executable, "-m", "batsim_py.legacy_client.fcfs", "-w", str(WORKLOAD)]
    socket_path = f"unix:{folder}/bat_socket"
    endpoint = f"zmq:tcp://127.0.0.1:{free_port()}"
    return {
        "in-process fcfs": ["--scheduler", "fcfs"],
        "legacy v1, Unix socket": [
            "--legacy-protocol", "1", "-s", socket_path, "--scheduler-command",
            " ".join([*client, "-s", socket_path, "--version", "1"])],
        "legacy v3, ZeroMQ": [
            "--legacy-protocol", "3", "-s", endpoint, "--scheduler-command",
            " ".join([*client, "-s", endpoint, "--version", "3"])],
    }


def one_run(mode: str) -> tuple[float, str]:
    """Wall time of one whole run, and the digest of its jobs.csv."""
    with tempfile.TemporaryDirectory() as folder:
        cli = [sys.executable, "-m", "batsim_py.cli", "-q", "-p", str(PLATFORM),
               "-w", str(WORKLOAD), "-e", f"{folder}/out", *modes(folder)[mode]]
        start = time.perf_counter()
        subprocess.run(cli, check=True, cwd=ROOT)
        wall = time.perf_counter() - start
        return wall, hashlib.sha256(Path(f"{folder}/out_jobs.csv").read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    names = list(modes("/tmp"))
    stick = Yardstick()
    stick.sample()
    walls: dict[str, list[float]] = {name: [] for name in names}
    digests: set[str] = set()
    for _ in range(args.repeat):
        for name in names:
            wall, digest = one_run(name)
            walls[name].append(wall)
            digests.add(digest)
    stick.sample()
    base = statistics.median(walls[names[0]])
    print(f"{WORKLOAD.name} on {PLATFORM.name}: medians of {args.repeat} alternated runs "
          "(wall s, process start to exit)")
    for name in names:
        median = statistics.median(walls[name])
        print(f"  {name:24s} {median:6.2f}  {median / base:5.2f}x in-process  "
              f"{stick.ratio(median)}")
    print(f"  jobs.csv: {'identical in every mode' if len(digests) == 1 else 'DIFFERENT'}")
    print(f"  {stick.summary()}")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
