"""DIR/report.html: the campaign's runs compared across its factors.

Why not one page of every run: a campaign has hundreds of runs, and the question is how a
factor (the scheduler, the load, the platform) moves the metrics. For every factor with more
than one level the page gives the mean and standard deviation of the main metrics per level
(over all the other factors' levels) and a box plot per metric; when the scheduler varies, a
table puts the schedulers side by side for each combination of the other factors. The
metrics are those of `batsim_py.analysis.metrics` (the table's columns); one run's own page
is `batsim-py report DIR/runs/ID/out`, the analysis report of its output files.
"""

from __future__ import annotations

import base64
import html
import os

import pandas as pd

from batsim_py.analysis.metrics import LABELS, format_value
from batsim_py.analysis.report import STYLE
from batsim_py.campaign import store

FACTORS = ("platform", "workload", "scheduler", "timing", "energy", "seed", "replication")
"""Factors compared (a scheduler's level includes its options)."""
MAIN_METRICS = ("makespan", "waiting_mean", "bsld_mean", "utilisation", "queue_mean",
                "energy_joules")
PLOTTED = ("waiting_mean", "bsld_mean", "utilisation")


def _text(value: object) -> str:
    """A factor level as text (a missing seed: "-")."""
    return "-" if value is None or value is pd.NA or (isinstance(value, float) and value != value
                                                      ) else str(value)


def _levels(frame: pd.DataFrame, factor: str) -> pd.Series:
    """The level of every run; a scheduler's with its options (`fcfs_sleep {"x":1}`)."""
    if factor == "scheduler" and "sched_options" in frame:
        return frame["scheduler"] + frame["sched_options"].map(lambda o: f" {o}" if o else "")
    return frame[factor].map(_text)


def varying_factors(frame: pd.DataFrame) -> list[str]:
    """Factors with several levels (seeds and replications among the runs that have one:
    runs of workload files have none)."""
    out = []
    for f in FACTORS:
        if f in frame:
            levels = _levels(frame, f)
            if levels[levels != "-"].nunique() > 1:
                out.append(f)
    return out


def _metrics(frame: pd.DataFrame) -> list[str]:
    return [m for m in MAIN_METRICS if m in frame and frame[m].notna().any()]


def factor_summary(frame: pd.DataFrame, factor: str) -> pd.DataFrame:
    """Per level of `factor`: runs, failed runs, mean and std of the main metrics (ok runs)."""
    ok = frame[frame["status"] == store.STATUS_OK]
    keys = _levels(frame, factor)
    out = pd.DataFrame({"runs": frame.groupby(keys).size(),
                        "failed": (frame["status"] == store.STATUS_FAILED).groupby(keys).sum()})
    grouped = ok.groupby(_levels(ok, factor))
    for m in _metrics(frame):
        out[f"{m} mean"] = grouped[m].mean()
        out[f"{m} std"] = grouped[m].std(ddof=0)
    return out


def _html_frame(frame: pd.DataFrame, index_name: str) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for idx, row in frame.iterrows():
        cells = []
        for col, value in row.items():
            key = str(col).split(" ")[0]
            text = (str(int(value)) if col in ("runs", "failed") and pd.notna(value)
                    else format_value(key, value) if isinstance(value, (int, float))
                    else str(value))
            cells.append(f"<td>{html.escape(text)}</td>")
        rows.append(f"<tr><th>{html.escape(str(idx))}</th>{''.join(cells)}</tr>")
    return (f"<table><tr><th>{html.escape(index_name)}</th>{head}</tr>{''.join(rows)}"
            "</table>")


def _boxplots(frame: pd.DataFrame, factor: str) -> bytes | None:
    from matplotlib.figure import Figure

    from batsim_py.analysis.plots import png_bytes

    ok = frame[frame["status"] == store.STATUS_OK]
    metrics = [m for m in PLOTTED if m in ok and ok[m].notna().any()]
    if not metrics or not len(ok):
        return None
    levels = sorted(_levels(ok, factor).unique())
    fig = Figure(figsize=(4.2 * len(metrics), 3.6))
    for i, m in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        data = [ok.loc[_levels(ok, factor) == lv, m].dropna().to_numpy() for lv in levels]
        ax.boxplot(data)
        ax.set_xticks(range(1, len(levels) + 1), levels, rotation=30, ha="right", fontsize=8)
        ax.set_title(LABELS.get(m, m), fontsize=9)
        ax.set_xlabel(factor)
    fig.tight_layout()
    return png_bytes(fig)


def scheduler_table(frame: pd.DataFrame, metric: str = "bsld_mean") -> pd.DataFrame | None:
    """Schedulers side by side (columns) for each combination of the other varying factors."""
    factors = varying_factors(frame)
    others = [f for f in FACTORS if f != "scheduler" and (f in factors or f in ("seed",))
              and f in frame]
    if "scheduler" not in factors or metric not in frame:
        return None
    ok = frame[frame["status"] == store.STATUS_OK].copy()
    if not len(ok):
        return None
    ok["_scheduler"] = _levels(ok, "scheduler")
    ok["_case"] = (ok[others].apply(lambda col: col.name + "=" + col.map(_text))
                   .agg(" ".join, axis=1) if others else pd.Series("all", index=ok.index))
    return ok.pivot_table(index="_case", columns="_scheduler", values=metric, aggfunc="mean")


def render(frame: pd.DataFrame, name: str, root: str) -> str:
    from batsim_py import __version__

    counts = frame["status"].value_counts()
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>batsim-py campaign {html.escape(name)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>batsim-py campaign {html.escape(name)}</h1>",
        f"<p>{len(frame)} runs: {counts.get(store.STATUS_OK, 0)} ok, "
        f"{counts.get(store.STATUS_FAILED, 0)} failed, "
        f"{counts.get(store.STATUS_TIMEOUT, 0)} timed out, {counts.get(store.STATUS_PENDING, 0)} "
        "not run yet. Table: <code>metrics.parquet</code>, <code>metrics.csv</code>; one run's "
        "own report: <code>batsim-py report runs/ID/out</code>.</p>",
    ]
    factors = varying_factors(frame)
    pivot = scheduler_table(frame)
    if pivot is not None:
        parts.append("<h2>Schedulers side by side (bounded slowdown, mean)</h2>")
        parts.append(_html_frame(pivot.map(lambda v: format_value("bsld_mean", v)), "case"))
    for factor in factors:
        parts.append(f"<h2>By {html.escape(factor)}</h2>")
        parts.append(_html_frame(factor_summary(frame, factor), factor))
        png = _boxplots(frame, factor)
        if png is not None:
            encoded = base64.b64encode(png).decode("ascii")
            parts.append(f'<figure><img alt="metrics by {html.escape(factor)}" '
                         f'src="data:image/png;base64,{encoded}"><figcaption>Distribution '
                         f"over the runs of each level of {html.escape(factor)}."
                         "</figcaption></figure>")
    if not factors:
        parts.append("<p>No factor has more than one level: nothing to compare.</p>")
    failed = frame[frame["status"].isin([store.STATUS_FAILED, store.STATUS_TIMEOUT])]
    if len(failed):
        parts.append("<h2>Failed and timed-out runs</h2>")
        parts.append(_html_frame(failed.set_index("run_id")[["error"]], "run"))
    parts.append(f'<p class="note">Written by batsim-py {html.escape(__version__)}.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_campaign_report(frame: pd.DataFrame, root: str, name: str) -> str:
    """Write DIR/report.html (atomically); its path."""
    path = os.path.join(root, "report.html")
    store.write_atomic(path, render(frame, name, root))
    return path
