"""`batsim-py generate OUT.json -n JOBS -r MACHINES`: a seeded synthetic workload of delay jobs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from batsim_py.errors import BatsimPyError
from batsim_py.workload.generate import generate_delay_workload
from batsim_py.workload.writer import write_workload_json


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="batsim-py generate",
        description="Write a seeded Batsim JSON workload of delay jobs: sizes log-uniform in "
        "[1, MAX_RES] (half rounded to a power of two), run times log-uniform in [MIN, MAX] "
        "seconds, Poisson arrivals scaled to the offered load. Same seed, same file.",
        epilog="example: batsim-py generate w.json -n 1000 -r 128 --seed 1 --load 0.8",
    )
    parser.add_argument("output", help="the workload file to write (Batsim JSON)")
    parser.add_argument("-n", "--nb-jobs", type=int, required=True, metavar="JOBS",
                        help="number of jobs")
    parser.add_argument("-r", "--nb-res", type=int, required=True, metavar="MACHINES",
                        help="machines of the platform (the workload's nb_res)")
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed (default 0): same seed, same workload")
    parser.add_argument("--load", type=float, default=0.7,
                        help="offered load: total work / (machines x span) (default 0.7)")
    parser.add_argument("--min-runtime", type=int, default=60, metavar="SECONDS",
                        help="shortest run time (default 60)")
    parser.add_argument("--max-runtime", type=int, default=36_000, metavar="SECONDS",
                        help="longest run time (default 36000)")
    parser.add_argument("--max-res", type=int, metavar="MACHINES",
                        help="largest job (default: MACHINES of -r)")
    parser.add_argument(
        "--walltime-factor", type=float, default=3.0, metavar="F",
        help="walltimes drawn in [run time, F x run time], rounded up to a minute "
        "(default 3); F <= 0: jobs without walltime",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        data = generate_delay_workload(
            args.nb_jobs,
            args.nb_res,
            seed=args.seed,
            load=args.load,
            min_runtime=args.min_runtime,
            max_runtime=args.max_runtime,
            max_res=args.max_res,
            walltime_factor=args.walltime_factor,
        )
    except BatsimPyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        write_workload_json(data, args.output)
    except OSError as e:
        print(f"error: {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"{args.output}: {len(data['jobs'])} jobs, {len(data['profiles'])} profiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
