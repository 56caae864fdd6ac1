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

from batsim_py.analysis.metrics import (
    LABELS,
    format_value,
    metrics_table,
    run_metrics,
    workload_metrics,
)
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


def _json_value(key: str, value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if key.startswith("nb_"):  # counts (tables store them as floats)
        return int(value)
    return value


def stats(paths: Sequence[str], as_json: bool = False) -> str:
    from batsim_py.analysis.report import load_runs

    runs = load_runs(paths)
    if as_json:
        data = {}
        for run in runs:
            per_workload = workload_metrics(run)
            data[run.name] = {
                "metrics": {k: _json_value(k, v) for k, v in run_metrics(run).items()},
                "workloads": {str(w): {k: _json_value(k, v) for k, v in row.items()}
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
        sys.stdout.flush()
    except BatsimPyError as exc:
        print(f"batsim-py: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = None  # type: ignore[assignment]  # nothing more to flush at exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
