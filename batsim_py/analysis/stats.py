"""`batsim-py stats PREFIX [PREFIX ...] [--json]`: the metrics table in the terminal.

The metrics and their formulas are those of `batsim_py.analysis.metrics`; with several
workloads in a run, a second table gives them per workload.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import pandas as pd

from batsim_py.analysis.metrics import LABELS, format_value, metrics_table, workload_metrics
from batsim_py.errors import BatsimPyError


def text_table(frame: pd.DataFrame) -> str:
    """Fixed-width table: metric labels, then one right-aligned column per run/workload."""
    header = ["metric"] + [str(c) for c in frame.columns]
    rows = [[LABELS.get(k, k)] + [format_value(k, frame.at[k, c]) for c in frame.columns]
            for k in frame.index]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        lines.append("  ".join([r[0].ljust(widths[0])]
                               + [v.rjust(w) for v, w in zip(r[1:], widths[1:], strict=True)]))
    return "\n".join(lines)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    return value


def stats(paths: Sequence[str], as_json: bool = False) -> str:
    from batsim_py.analysis.report import load_runs

    runs = load_runs(paths)
    if as_json:
        data = {}
        for run in runs:
            table = metrics_table([run])
            per_workload = workload_metrics(run)
            data[run.name] = {
                "metrics": {k: _json_value(table.at[k, run.name]) for k in table.index},
                "workloads": {w: {k: _json_value(v) for k, v in row.items()}
                              for w, row in per_workload.to_dict(orient="index").items()},
            }
        return json.dumps(data, indent=2)
    parts = [text_table(metrics_table(runs))]
    for run in runs:
        per_workload = workload_metrics(run)
        if len(per_workload) > 1:
            parts.append(f"\n{run.name}, per workload:")
            parts.append(text_table(per_workload.T))
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="batsim-py stats", description="Print the metrics of one or several runs.")
    parser.add_argument("prefixes", nargs="+", metavar="PREFIX",
                        help="output prefix (outputs/run for outputs/run_jobs.csv), folder, or "
                        "one output file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table "
                        "(null for a metric without a value, e.g. waiting time of no job)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        print(stats(args.prefixes, args.json))
    except BatsimPyError as exc:
        print(f"batsim-py: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
