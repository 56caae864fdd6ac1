"""Campaign speed: N runs of 1,000 jobs (default 200) on Dask, against the same runs one
process after another, and Dask's cost per run.

    python benchmarks/bench_campaign.py [--runs 200] [--jobs 1000] [--workers 2] [--skip-cli]

The runs: in-process EASY on the shipped 128-machine cluster, each on its own generated
workload (seeds 0..N-1). Timed, wall clock:

1. the campaign on a LocalCluster of W workers (`batsim_py.campaign.run`), cluster start
   included, then from the first submission (the campaign's own "runs" phase);
2. the same runs one process after another: each run's `command.txt` (`batsim-py ...`, a new
   Python process per run, as a shell loop would run them);
3. the same runs one after another in this process, without Dask (`worker.run_one`: the code a
   Dask task runs, on the same workloads);
4. the campaign on ONE worker: its time (cluster start excluded, shown apart) minus the sum of
   the runs' own wall times (measured in the worker, `wall_seconds` of each result.json),
   divided by N, is Dask's cost per run (scheduling, transfer of the run configurations and
   records, the task's events) with the store's small writes. This difference within one
   phase does not depend on the machine's load drifting between phases, as (4) - (3) would on
   a shared machine.

Each phase writes into its own folder of a temporary directory; the outputs of (1) and (2) are
checked equal (but the wall-clock columns). Prints which kernel ran (compiled or pure Python).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))


def campaign(runs: int, jobs: int) -> dict:
    return {"name": "bench", "platforms": [str(PROJECT / "platforms" / "cluster128.xml")],
            "workloads": [{"generate": {"nb_jobs": jobs, "nb_res": 128}}],
            "schedulers": ["easy"], "seeds": list(range(runs))}


def timed_campaign(spec, root: str, workers: int) -> tuple[float, float]:
    """(wall with cluster start, wall from the cluster being up)."""
    import logging

    from distributed import Client, LocalCluster

    import batsim_py.campaign

    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(workers)
        t1 = time.perf_counter()
        table = batsim_py.campaign.run(spec, client, output=root)
        t2 = time.perf_counter()
    assert (table["status"] == "ok").all(), table[table["status"] != "ok"]
    return t2 - t0, t2 - t1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-cli", action="store_true", help="skip phase 2 (slowest)")
    args = parser.parse_args()

    from batsim_py.campaign import store
    from batsim_py.campaign.spec import load_spec
    from batsim_py.campaign.worker import run_one
    from batsim_py.native import kernel_label

    print(f"batsim-py {kernel_label()}; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f}")
    spec = load_spec(campaign(args.runs, args.jobs))
    n = len(spec.runs)
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        wall, runs_wall = timed_campaign(spec, os.path.join(tmp, "dask"), args.workers)
        print(f"1. campaign, {args.workers} workers: {wall:.1f} s ({runs_wall:.1f} s once the "
              f"cluster is up), {n / runs_wall:.2f} runs/s")

        if not args.skip_cli:
            env = dict(os.environ, PYTHONPATH=str(PROJECT))
            t0 = time.perf_counter()
            for r in spec.runs:
                folder = Path(store.run_folder(os.path.join(tmp, "dask"), r.run_id))
                argv = shlex.split((folder / "command.txt").read_text())
                argv[argv.index("-e") + 1] = os.path.join(tmp, "cli", r.run_id, "out")
                subprocess.run([sys.executable, "-m", "batsim_py.cli", *argv[1:]], env=env,
                               check=True, cwd=PROJECT)
            cli_wall = time.perf_counter() - t0
            print(f"2. one process after another (batsim-py per run): {cli_wall:.1f} s, "
                  f"{cli_wall / n:.3f} s per run; campaign speed-up x{cli_wall / wall:.2f} "
                  f"(x{cli_wall / runs_wall:.2f} once the cluster is up)")
            sys.path.insert(0, str(PROJECT / "tests" / "campaign"))
            from helpers import output_files

            for r in spec.runs[:: max(1, n // 10)]:
                a = Path(store.output_prefix(os.path.join(tmp, "dask"), r.run_id))
                b = Path(os.path.join(tmp, "cli", r.run_id, "out"))
                assert output_files(a) == output_files(b), r.run_id
            print("   (outputs of 1 and 2 identical but the wall-clock columns, every tenth "
                  "run checked)")

        root = os.path.join(tmp, "serial")
        for r in spec.runs:  # the same generated workloads, not timed
            os.makedirs(store.run_folder(root, r.run_id), exist_ok=True)
        t0 = time.perf_counter()
        for r in spec.runs:
            record = run_one(r, root)
            assert record["status"] == "ok", record
        serial = time.perf_counter() - t0
        print(f"3. one after another in one process, no Dask: {serial:.1f} s, "
              f"{serial / n:.3f} s per run")

        root1 = os.path.join(tmp, "dask1")
        wall1, runs1 = timed_campaign(spec, root1, 1)
        own = sum(store.read_marker(root1, r.run_id)["wall_seconds"] for r in spec.runs)
        print(f"4. campaign, 1 worker: {wall1:.1f} s ({runs1:.1f} s once the cluster is up, "
              f"start {wall1 - runs1:.1f} s); the runs' own time in the worker {own:.1f} s "
              f"({own / n:.3f} s per run; in one process without Dask, 3.: {serial / n:.3f} s)")
        print(f"   Dask's cost per run (campaign time once up - the runs' own time) / runs: "
              f"{(runs1 - own) / n * 1000:.1f} ms ({(runs1 - own) / own * 100:.1f}% of the runs' "
              "time; includes the marker, command.txt and attempts.log writes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
