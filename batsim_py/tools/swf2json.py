"""`batsim-py swf2json TRACE.swf OUT.json`: convert an SWF trace to Batsim JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from batsim_py.errors import BatsimPyError
from batsim_py.workload.reader import parse_workload
from batsim_py.workload.swf import swf_to_json
from batsim_py.workload.writer import write_workload_json


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="batsim-py swf2json",
        description="Convert a Standard Workload Format trace (Parallel Workloads Archive) to "
        "a Batsim JSON workload of delay jobs: one job per valid line, run time as its "
        "delay; lines that cannot be jobs are skipped and listed.",
        epilog="example: batsim-py swf2json trace.swf w.json --shift",
    )
    parser.add_argument("swf", help="input .swf trace")
    parser.add_argument("output", help="output Batsim JSON workload")
    parser.add_argument("--nb-res", type=int, help="platform size (default: header MaxProcs)")
    parser.add_argument("--profile-per-job", action="store_true", help="one profile per job")
    parser.add_argument(
        "--use-requested-res", action="store_true", help="res = requested processors first"
    )
    parser.add_argument("--no-walltime", action="store_true", help="ignore requested times")
    parser.add_argument("--shift", action="store_true", help="first submission at time 0")
    parser.add_argument("--strict", action="store_true", help="abort on an invalid line")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not list skipped lines")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        conv = swf_to_json(
            args.swf,
            nb_res=args.nb_res,
            profile_per_job=args.profile_per_job,
            use_requested_res=args.use_requested_res,
            use_walltime=not args.no_walltime,
            shift_subtimes=args.shift,
            strict=args.strict,
        )
        # Validate before writing so a bad conversion never produces a file.
        parse_workload(conv.data, name="w0", path=args.output, source=args.output)
        write_workload_json(conv.data, args.output)
    except (BatsimPyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        for warning in conv.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    print(
        f"{args.output}: {len(conv.data['jobs'])} jobs, {len(conv.data['profiles'])} profiles, "
        f"nb_res {conv.data['nb_res']}, {conv.skipped} lines skipped"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
