"""`batsim-py report PREFIX [PREFIX ...]`: one self-contained HTML page (figures embedded as
PNG data) with the metrics and the plots of one run, or a comparison of several runs.

    batsim-py report outputs/example                 # writes outputs/example_report.html
    batsim-py report outputs/fcfs outputs/easy -o cmp.html --png figures/
"""

from __future__ import annotations

import argparse
import base64
import html
import os
import sys
import time
from collections.abc import Sequence

import pandas as pd

from batsim_py.analysis.load import Run, locate_run, run_label
from batsim_py.analysis.metrics import (
    BSLD_THRESHOLD,
    LABELS,
    format_value,
    metrics_table,
    workload_metrics,
)
from batsim_py.errors import BatsimPyError

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.7em; }
td { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
figcaption { color: #555; font-size: 0.9em; }
.note { color: #555; font-size: 0.9em; }
"""


def load_runs(paths: Sequence[str]) -> list[Run]:
    """Load every run, giving each a distinct name (the prefix's last part, numbered if
    two runs share it)."""
    from batsim_py.analysis.load import load_run

    runs: list[Run] = []
    seen: dict[str, int] = {}
    for path in paths:
        name = run_label(path)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name} #{seen[name]}"
        runs.append(load_run(path, name, minimal=True))
    return runs


def figures(runs: Sequence[Run], colour_by: str | None = None) -> list[tuple[str, str, object]]:
    """(file stem, caption, Figure) of every plot of the report, in page order."""
    from batsim_py.analysis import plots

    out: list[tuple[str, str, object]] = []
    if len(runs) > 1:
        out.append(("comparison", "Runs side by side: distributions of waiting time and "
                    "bounded slowdown, utilisation, mean waiting time, utilisation over time.",
                    plots.comparison(runs)))
    for run in runs:
        stem = _safe(run.name)
        out.append((f"{stem}_gantt", f"{run.name}: jobs on machines.",
                    plots.gantt(run, colour_by)))
        out.append((f"{stem}_utilisation", f"{run.name}: machines computing and jobs waiting "
                    "over time.", plots.utilisation_queue(run)))
        fig = plots.machine_states(run)
        if fig is not None:
            out.append((f"{stem}_machine_states", f"{run.name}: machines in each state "
                        "(PREFIX_machine_states.csv).", fig))
        fig = plots.power_energy(run)
        if fig is not None:
            out.append((f"{stem}_energy", f"{run.name}: platform power and cumulated energy "
                        "(PREFIX_consumed_energy.csv, -E).", fig))
    return out


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _table(frame: pd.DataFrame, header: str) -> str:
    """HTML table of metrics: rows are metric keys (labelled), columns runs or workloads."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for key in frame.index:
        cells = "".join(f"<td>{html.escape(format_value(key, frame.at[key, c]))}</td>"
                        for c in frame.columns)
        rows.append(f"<tr><th>{html.escape(LABELS.get(key, key))}</th>{cells}</tr>")
    return (f"<table><tr><th>{html.escape(header)}</th>{head}</tr>" + "".join(rows)
            + "</table>")


def render_html(runs: Sequence[Run], pngs: Sequence[tuple[str, str, bytes]]) -> str:
    """The page: title, metrics of every run, per-workload metrics, figures."""
    from batsim_py import __version__

    names = ", ".join(run.name for run in runs)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>batsim-py report: {html.escape(names)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>batsim-py report: {html.escape(names)}</h1>",
        "<h2>Metrics</h2>",
        _table(metrics_table(list(runs)), "metric"),
        f'<p class="note">Bounded slowdown: max(1, turnaround / max(execution time, '
        f"{BSLD_THRESHOLD:g} s)). Utilisation: machine-seconds used by jobs over "
        "machine-seconds available until the makespan (unavailable time excluded). Mean "
        "queue length: total waiting time over the makespan. Formulas: "
        "<code>batsim_py/analysis/metrics.py</code>.</p>",
    ]
    for run in runs:
        per_workload = workload_metrics(run)
        if len(per_workload) > 1:
            parts.append(f"<h3>{html.escape(run.name)}: per workload</h3>")
            parts.append(_table(per_workload.T, "metric"))
    parts.append("<h2>Figures</h2>")
    for stem, caption, data in pngs:
        encoded = base64.b64encode(data).decode("ascii")
        parts.append(f'<figure id="{html.escape(stem)}"><img alt="{html.escape(caption)}" '
                     f'src="data:image/png;base64,{encoded}"><figcaption>'
                     f"{html.escape(caption)}</figcaption></figure>")
    parts.append(f'<p class="note">Written by batsim-py {html.escape(__version__)}.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(paths: Sequence[str], output: str | None = None, png_dir: str | None = None,
                 colour_by: str | None = None) -> str:
    """Load the runs, draw the figures, write the page (and the PNGs); return the page's
    path (default: PREFIX_report.html for one run, report.html for several)."""
    from batsim_py.analysis.plots import png_bytes

    runs = load_runs(paths)
    if output is None:
        output = (locate_run(paths[0])["jobs"][: -len("_jobs.csv")] + "_report.html"
                  if len(runs) == 1 else "report.html")
    pngs = []
    for stem, caption, fig in figures(runs, colour_by):
        pngs.append((stem, caption, png_bytes(fig)))  # type: ignore[arg-type]
    for path, run in zip(paths, runs, strict=True):  # grid runs (batsim-py cigri, docs/cigri.md)
        prefix = locate_run(path)["jobs"][: -len("_jobs.csv")]
        if os.path.exists(prefix + "_grid_usage.csv"):
            from batsim_py.grid.plots import taps_figure, usage_figure

            stem = _safe(run.name)
            pngs.append((f"{stem}_grid_usage", f"{run.name}: the grid's machines used by local "
                         "jobs, by CiGri, idle (PREFIX_grid_usage.csv).",
                         png_bytes(usage_figure(prefix))))
            pngs.append((f"{stem}_cigri_taps", f"{run.name}: CiGri's taps over time "
                         "(PREFIX_cigri_taps.csv).", png_bytes(taps_figure(prefix))))
    if png_dir is not None:
        os.makedirs(png_dir, exist_ok=True)
        for stem, _, data in pngs:
            with open(os.path.join(png_dir, stem + ".png"), "wb") as f:
                f.write(data)
    page = render_html(runs, pngs)
    folder = os.path.dirname(output)
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, output)
    return output


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="batsim-py report",
        description="Write one self-contained HTML page with the metrics and plots of a run, "
        "or a comparison of several runs.",
    )
    parser.add_argument("prefixes", nargs="+", metavar="PREFIX",
                        help="output prefix (outputs/run for outputs/run_jobs.csv), folder, or "
                        "one output file; several: a comparison")
    parser.add_argument("-o", "--output", metavar="FILE", help="HTML file to write (default "
                        "PREFIX_report.html for one run, report.html for several)")
    parser.add_argument("--png", metavar="DIR", help="also write every figure as a PNG file")
    parser.add_argument("--colour-by", choices=("state", "workload"),
                        help="Gantt colours (default: workload if several, else final state)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    started = time.perf_counter()
    try:
        path = write_report(args.prefixes, args.output, args.png, args.colour_by)
    except BatsimPyError as exc:
        print(f"batsim-py: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"batsim-py: error: cannot write the report: {exc}", file=sys.stderr)
        return 1
    print(f"report written to {path} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
