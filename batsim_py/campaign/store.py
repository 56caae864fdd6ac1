"""The results store of a campaign: one folder per run, a completion marker, the metrics table.

Layout of the campaign folder DIR:

    DIR/campaign.json               the campaign's runs (id, factors), written at each start
    DIR/runs/ID/out_jobs.csv ...    the run's output files (prefix DIR/runs/ID/out)
    DIR/runs/ID/w0.json             a generated workload, as the run read it
    DIR/runs/ID/command.txt         the same run alone on the command line
    DIR/runs/ID/attempts.log        one line per start of the run (host, pid, time)
    DIR/runs/ID/result.json         the completion marker: status, error, metrics
    DIR/metrics.parquet, .csv       one row per run of the campaign

Why a marker written last: a run is complete exactly when `result.json` exists. It is written
(to a temporary file, then renamed: atomic on POSIX file systems) only after the outputs are
in place, so a run stopped at any instant (SIGTERM, SIGKILL of its worker, a lost node) either
has its marker and all its outputs, or no marker and is run again on resume. A run that fails
(bad input, a scheduler's error) gets a marker too, with status "failed" and the error's one
line: it is a result (the same inputs fail the same way), and does not stop the others;
`--retry-failed` runs such runs again. So does a run stopped at the per-run time limit
(status "timeout"), whose partial output files are removed before its marker is written.

Workers write into DIR directly (a run's outputs never travel through Dask): on a cluster,
DIR must be on a file system every worker sees (NFS, Lustre, ...), see docs/campaigns.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from batsim_py.analysis.metrics import LABELS

MARKER = "result.json"
OUTPUT_STEM = "out"
METRIC_COLUMNS = tuple(LABELS)
STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_TIMEOUT = "timeout"  # stopped at the per-run time limit: no outputs kept
STATUS_PENDING = "pending"  # in the table: not run yet (an interrupted campaign)


def run_folder(root: str, run_id: str) -> str:
    return os.path.join(root, "runs", run_id)


def output_prefix(root: str, run_id: str) -> str:
    """The run's `-e PREFIX`: its files are PREFIX_jobs.csv, ... (`batsim-py report PREFIX`)."""
    return os.path.join(run_folder(root, run_id), OUTPUT_STEM)


@contextlib.contextmanager
def _replacing(path: str) -> Iterator[str]:
    """A temporary file beside `path` to write; renamed over `path` when the block ends,
    removed if it raises: `path` is always either its old content or the whole new one."""
    fd, tmp = tempfile.mkstemp(prefix=".campaign-", suffix=".tmp",
                               dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: str, text: str) -> None:
    """Write `text` to `path` all at once: a temporary file beside it, flushed, renamed."""
    with _replacing(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def remove_outputs(root: str, run_id: str) -> int:
    """Remove the run's output files (PREFIX_*): a run stopped half-way must not leave files
    that look like a finished run's. How many were removed."""
    folder = run_folder(root, run_id)
    stem = OUTPUT_STEM + "_"
    removed = 0
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return 0
    for name in names:
        if name.startswith((stem, ".campaign-", ".batsim-py-")):  # outputs, temporary files
            os.unlink(os.path.join(folder, name))
            removed += 1
    return removed


def read_marker(root: str, run_id: str) -> dict[str, Any] | None:
    """The run's record, or None if the run is not complete. A marker that cannot be read
    (it cannot be half-written, but a user may edit it) counts as absent: the run is redone."""
    try:
        with open(os.path.join(run_folder(root, run_id), MARKER), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("run_id") != run_id:
        return None
    return record


def is_complete(root: str, run_id: str, retry_failed: bool = False) -> bool:
    record = read_marker(root, run_id)
    if record is None:
        return False
    return not (retry_failed and record.get("status") != STATUS_OK)


def write_campaign_index(root: str, name: str, source: str, runs: Iterable[Any]) -> None:
    """DIR/campaign.json: which runs make the campaign (ids, factors, the command line)."""
    os.makedirs(os.path.join(root, "runs"), exist_ok=True)
    data = {
        "name": name,
        "source": source,
        "runs": [{"run_id": r.run_id, **r.factors()} for r in runs],
    }
    write_atomic(os.path.join(root, "campaign.json"), json.dumps(data, indent=1) + "\n")


def table(root: str, runs: Iterable[Any]) -> Any:
    """The metrics table of `runs` (RunConfigs, in order) from their markers: one row per
    run, pending runs included (status "pending", no metrics). Nothing wall-clock is in it:
    the same campaign gives the same table, whatever the workers."""
    import pandas as pd

    rows = []
    for r in runs:
        record = read_marker(root, r.run_id)
        row: dict[str, Any] = {"run_id": r.run_id, **r.factors()}
        if record is None:
            row["status"], row["error"] = STATUS_PENDING, ""
            metrics: dict[str, Any] = {}
        else:
            row["status"], row["error"] = record["status"], record.get("error") or ""
            metrics = record.get("metrics") or {}
        for key in METRIC_COLUMNS:
            value = metrics.get(key)
            row[key] = float("nan") if value is None else value
        rows.append(row)
    frame = pd.DataFrame(rows)
    if not len(frame):
        return frame
    for col in ("seed", "replication", "workload_seed"):
        frame[col] = frame[col].astype("Int64")
    for key in METRIC_COLUMNS:  # counts as integers (missing: <NA>), the others as floats
        frame[key] = frame[key].astype("Int64" if key.startswith("nb_") else "float64")
    return frame


def write_table(root: str, frame: Any) -> list[str]:
    """DIR/metrics.parquet and DIR/metrics.csv (each written atomically); their paths."""
    from batsim_py.campaign.deps import need

    need("pyarrow", "pandas writes the Parquet table with it")
    csv_path = os.path.join(root, "metrics.csv")
    write_atomic(csv_path, frame.to_csv(index=False))
    parquet_path = os.path.join(root, "metrics.parquet")
    with _replacing(parquet_path) as tmp:
        frame.to_parquet(tmp, index=False, engine="pyarrow")
    return [parquet_path, csv_path]
