"""`python -m batsim_py.tools.genworkload OUT.json -n JOBS -r RES`: synthetic delay jobs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from batsim_py.errors import BatsimPyError
from batsim_py.workload.generate import generate_delay_workload
from batsim_py.workload.writer import write_workload_json


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="genworkload", description="Generate a seeded Batsim JSON workload of delay jobs."
    )
    parser.add_argument("output", help="output Batsim JSON workload")
    parser.add_argument("-n", "--nb-jobs", type=int, required=True)
    parser.add_argument("-r", "--nb-res", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load", type=float, default=0.7, help="target offered load")
    parser.add_argument("--min-runtime", type=int, default=60)
    parser.add_argument("--max-runtime", type=int, default=36_000)
    parser.add_argument("--max-res", type=int, help="largest job (default nb_res)")
    parser.add_argument(
        "--walltime-factor", type=float, default=3.0, help="<= 0: jobs without walltime"
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
