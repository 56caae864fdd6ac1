"""`batsim-py cigri GRID.json`: simulate a grid of OAR clusters harvested by CiGri.

Prints the grid's figures (utilisation split local/CiGri, campaign makespans, kills, wasted
work); `--baseline` also simulates the same grid without CiGri and prints both side by side,
with the difference of the local jobs' mean waiting time (what CiGri costs local users).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from batsim_py.errors import BatsimPyError


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="batsim-py cigri",
        description="Simulate a grid of OAR clusters (one zone each) with their local "
        "workloads, harvested by CiGri's best-effort campaigns (docs/cigri.md).",
        epilog="example: batsim-py cigri examples/cigri/grid_small.json -e outputs/grid "
        "--baseline",
    )
    parser.add_argument("grid", help="grid description (JSON): platform, clusters, campaigns")
    parser.add_argument("-e", "--export", metavar="PREFIX", default="outputs/grid",
                        help="output prefix (default outputs/grid)")
    parser.add_argument("--no-cigri", action="store_true",
                        help="simulate the grid without CiGri (local workloads only)")
    parser.add_argument("--baseline", action="store_true",
                        help="also simulate the grid without CiGri (outputs PREFIX_nocigri_*) "
                        "and compare")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--png", metavar="DIR",
                        help="also plot the grid's usage (local/CiGri/idle) and the taps over "
                        "time into DIR/grid_usage.png and DIR/cigri_taps.png")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    import logging

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        from batsim_py.grid.inputs import load_grid
        from batsim_py.grid.metrics import campaign_window, grid_metrics, local_horizon
        from batsim_py.grid.outputs import write_outputs
        from batsim_py.grid.run import run_grid
        from batsim_py.output.files import check_prefix

        spec = load_grid(args.grid)
        check_prefix(args.export)
        run = run_grid(spec, with_cigri=not args.no_cigri, export=args.export)
        figures: dict[str, Any] = {"cigri" if not args.no_cigri else "nocigri": None}
        if args.baseline and not args.no_cigri:
            base = run_grid(spec, with_cigri=False, export=args.export + "_nocigri")
            horizon = local_horizon(base)
            window = campaign_window(run)
            with_cigri = grid_metrics(run, horizon, window)
            without = grid_metrics(base, horizon, window)
            write_outputs(run, args.export, with_cigri)
            write_outputs(base, args.export + "_nocigri", without)
            figures = {"cigri": with_cigri, "nocigri": without,
                       "local_mean_waiting_time_increase":
                       with_cigri["local_mean_waiting_time"] - without["local_mean_waiting_time"],
                       "utilisation_gain": with_cigri["utilisation"] - without["utilisation"]}
        else:
            figures = {"cigri" if not args.no_cigri else "nocigri": grid_metrics(run)}
        if args.png and run.cigri is not None:
            from batsim_py.grid.plots import write_pngs

            write_pngs(args.export, args.png)
    except BatsimPyError as e:
        print(f"batsim-py cigri: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("batsim-py cigri: interrupted: the grid's own outputs were not written",
              file=sys.stderr)
        return 130
    except Exception as e:  # a bug in batsim-py: one line all the same
        from batsim_py.text import printable

        print(f"batsim-py cigri: internal error: {type(e).__name__}: {printable(str(e))} "
              "(please report it)", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(figures, indent=1, sort_keys=True))
        return 0
    runs = [k for k in ("cigri", "nocigri") if isinstance(figures.get(k), dict)]
    keys = [k for k in figures[runs[0]] if k != "campaign_makespans"]
    print(f"{'figure':32s}" + "".join(f"{r:>16s}" for r in runs))
    for k in keys:
        print(f"{k:32s}" + "".join(f"{_fmt(figures[r].get(k, '')):>16s}" for r in runs))
    for r in runs:
        for name, span in figures[r].get("campaign_makespans", {}).items():
            print(f"makespan of campaign {name:11s}{_fmt(span):>16s}")
    for k in ("local_mean_waiting_time_increase", "utilisation_gain"):
        if k in figures:
            print(f"{k:32s}{_fmt(figures[k]):>16s}")
    print(f"outputs: {args.export}_*")
    return 0
