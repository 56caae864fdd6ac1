"""Reading a run's output files (batsim-py's or real Batsim's: the same files) into DataFrames.

A run is named by its prefix (`outputs/example` for `outputs/example_jobs.csv`, ...), by a
folder holding one set of outputs, or by one of its files, as `batsim-py compare` takes them.
Only `PREFIX_jobs.csv` is required; the machine states, the schedule summary and the energy
files are read when present. Columns keep Batsim's names; times are floats (NaN where Batsim
prints nothing, e.g. the start of a rejected job), ids and interval sets are strings, so a
DataFrame built by the Python API with the same columns goes through the same metrics.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from batsim_py.errors import AnalysisError, BatsimPyError, UsageError

JOB_TEXT_COLUMNS = ("job_id", "workload_name", "profile", "final_state", "allocated_resources",
                    "metadata")
JOB_FLOAT_COLUMNS = ("submission_time", "requested_time", "starting_time", "execution_time",
                     "finish_time", "waiting_time", "turnaround_time", "stretch",
                     "consumed_energy")
CATEGORY_COLUMNS = ("workload_name", "final_state")
REQUIRED_JOB_COLUMNS = ("job_id", "workload_name", "submission_time", "final_state",
                        "starting_time", "execution_time", "finish_time", "allocated_resources")
MACHINE_STATE_COLUMNS = ("nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle",
                         "nb_computing")


@dataclass
class Run:
    """The outputs of one simulation, as DataFrames (None: the file was not written)."""

    name: str
    jobs: pd.DataFrame
    machine_states: pd.DataFrame | None = None
    schedule: dict[str, Any] | None = None  # the one row of PREFIX_schedule.csv
    pstate_changes: pd.DataFrame | None = None
    consumed_energy: pd.DataFrame | None = None
    nb_machines: int | None = None  # compute machines; see `machine_count`
    _ranges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    # run_metrics of this jobs table, by (id of the table, tau): figures and tables of a
    # report ask several times. A new table (run.jobs = ...) is a new key.
    _metrics: dict[tuple[int, float], dict[str, float]] = field(default_factory=dict,
                                                               repr=False)

    def __post_init__(self) -> None:
        self.jobs = normalize_jobs(self.jobs, self.name)
        self._ranges_of = -1
        if self.nb_machines is None:
            self.nb_machines = machine_count(self.jobs, self.machine_states, self.schedule)

    @classmethod
    def from_results(cls, results: Any, name: str = "run") -> Run:
        """A run from the Python API's results (`batsim_py.simulate(...)`, `Simulator.run()`):
        their DataFrames have the columns of the output files, no file is written or read."""
        def frame(kind: str) -> pd.DataFrame | None:
            try:
                return getattr(results, kind)
            except BatsimPyError:  # that output was not produced (e.g. no -E)
                return None

        schedule = frame("schedule")
        return cls(name, results.jobs, frame("machine_states"),
                   schedule.iloc[0].to_dict() if schedule is not None and len(schedule) else None,
                   frame("pstate_changes"), frame("consumed_energy"))

    def allocation_ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, first machine, last machine) of every range of every allocation (cached)."""
        key = id(self.jobs)
        if self._ranges is None or self._ranges_of != key:
            self._ranges = allocation_ranges(self.jobs["allocated_resources"])
            self._ranges_of = key
        return self._ranges


def locate_run(path: str) -> dict[str, str]:
    """Output files of a run named by a prefix, a folder or one of its files: kind -> path."""
    from batsim_py.output.compare import locate

    try:
        found = locate(path)
    except UsageError as exc:
        raise AnalysisError(str(exc)) from None
    if "jobs" not in found:
        raise AnalysisError(f"{path}: no *_jobs.csv; analysis needs at least the jobs file")
    return found


def run_label(path: str) -> str:
    """A short name for a run in tables and legends: its prefix's last component."""
    found = locate_run(path)
    prefix = found["jobs"][: -len("_jobs.csv")]
    parts = os.path.normpath(os.path.abspath(prefix)).split(os.sep)
    # Real Batsim's runs are usually `<case>/expected/out`: "out" alone says nothing.
    if parts[-1] == "out":
        for part in reversed(parts[:-1]):
            if part not in ("expected", "outputs", "output", "out", ""):
                return part
    return parts[-1]


ANALYSIS_COLUMNS = REQUIRED_JOB_COLUMNS + ("waiting_time", "turnaround_time", "consumed_energy")
"""The jobs.csv columns the metrics and plots use (`load_run(..., minimal=True)`)."""


def load_run(path: str, name: str | None = None, minimal: bool = False) -> Run:
    """Read every output file of a run; AnalysisError names the file that cannot be read.

    `minimal`: read only the `ANALYSIS_COLUMNS` of jobs.csv (a third faster on a million
    jobs; what `batsim-py report` and `stats` do)."""
    found = locate_run(path)
    jobs = read_jobs(found["jobs"], ANALYSIS_COLUMNS if minimal else None)
    states = _read_csv(found["machine_states"]) if "machine_states" in found else None
    schedule = None
    if "schedule" in found:
        table = _read_csv(found["schedule"], dtype={"batsim_version": str})
        if len(table) != 1:
            raise AnalysisError(f"{found['schedule']}: expected one row, found {len(table)}")
        schedule = table.iloc[0].to_dict()
    pstates = None
    if "pstate_changes" in found:
        pstates = _read_csv(found["pstate_changes"], dtype={"machine_id": str})
    energy = _read_csv(found["consumed_energy"]) if "consumed_energy" in found else None
    return Run(name or run_label(path), jobs, states, schedule, pstates, energy)


def read_jobs(path: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """PREFIX_jobs.csv as a DataFrame: times as float, text as str, workload and final state
    as categories (a million-job table compares them many times; converted after reading:
    reading them as categories directly is slower)."""
    dtype: dict[str, Any] = {c: str for c in JOB_TEXT_COLUMNS}
    usecols = None
    if columns is not None:  # those of the file only: a missing one is named below
        wanted = set(columns)
        usecols = lambda c: c in wanted  # noqa: E731
    jobs = _read_csv(path, dtype=dtype, keep_default_na=False, usecols=usecols,
                     na_values={c: [""] for c in JOB_FLOAT_COLUMNS})
    if set(CATEGORY_COLUMNS) <= set(jobs.columns):
        jobs = jobs.assign(**{c: jobs[c].astype("category") for c in CATEGORY_COLUMNS})
    return normalize_jobs(jobs, path)


def _read_csv(path: str, **kwargs: Any) -> pd.DataFrame:
    try:
        return pd.read_csv(path, **kwargs)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise AnalysisError(f"{path}: cannot be read as CSV ({exc})") from None


def normalize_jobs(jobs: pd.DataFrame, where: str = "jobs") -> pd.DataFrame:
    """Check the columns metrics need and give them their types (a copy only if needed)."""
    missing = [c for c in REQUIRED_JOB_COLUMNS if c not in jobs.columns]
    if missing:
        raise AnalysisError(
            f"{where}: missing column(s) {', '.join(missing)}; expected the columns of "
            "Batsim's PREFIX_jobs.csv"
        )
    changes: dict[str, Any] = {}
    for c in JOB_FLOAT_COLUMNS:
        if c in jobs.columns and jobs[c].dtype != np.float64:
            changes[c] = pd.to_numeric(jobs[c], errors="coerce").astype(np.float64)
    alloc = jobs["allocated_resources"]
    if pd.api.types.is_numeric_dtype(alloc.dtype):  # all allocations "a": read as numbers
        changes["allocated_resources"] = pd.Series(
            ["" if v != v else str(int(v)) for v in alloc.tolist()], index=jobs.index,
            dtype=object)
    for c in ("job_id", "workload_name", "final_state"):
        dtype = jobs[c].dtype
        if not (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype)
                or pd.api.types.is_string_dtype(dtype)):
            changes[c] = jobs[c].astype(str)  # e.g. integer job ids
    if changes:
        jobs = jobs.assign(**changes)
    return jobs


def machine_count(jobs: pd.DataFrame, machine_states: pd.DataFrame | None,
                  schedule: dict[str, Any] | None) -> int:
    """Compute machines of the run: from the schedule summary, else the most machines ever
    counted in the machine states, else one more than the highest allocated machine id."""
    if schedule is not None and "nb_computing_machines" in schedule:
        return int(schedule["nb_computing_machines"])
    count = 0
    if machine_states is not None and len(machine_states):
        cols = [c for c in MACHINE_STATE_COLUMNS if c in machine_states.columns]
        count = int(machine_states[cols].sum(axis=1).max())
    _, _, hi = allocation_ranges(jobs["allocated_resources"])
    if len(hi):
        count = max(count, int(hi.max()) + 1)
    return count


def allocation_ranges(allocations: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expand interval sets ("0-3 7") into ranges: arrays (row, first id, last id).

    Allocations repeat (a million jobs on a thousand machines have some 175,000 distinct
    ones): each distinct text is parsed once, and the rows are expanded with numpy. Rows with
    no allocation (rejected jobs) give no range.
    """
    if isinstance(allocations.dtype, pd.CategoricalDtype):
        codes = allocations.cat.codes.to_numpy(dtype=np.int64)
        uniques = allocations.cat.categories.to_numpy(dtype=object)
    else:
        codes, uniques = pd.factorize(allocations.to_numpy(dtype=object),
                                      use_na_sentinel=True)
    count, flat = _parse_uniques(uniques)
    count = np.append(count, 0)  # code -1: no allocation
    offset = np.concatenate([[0], np.cumsum(count[:-1])])
    per_row = count[codes]
    rows = np.repeat(np.arange(len(codes), dtype=np.int64), per_row)
    starts = np.cumsum(per_row) - per_row
    k = np.arange(len(rows), dtype=np.int64) - np.repeat(starts, per_row)
    index = offset[codes[rows]] + k
    return rows, flat[index, 0], flat[index, 1]


def _parse_uniques(uniques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges of each distinct interval set: (number of ranges of each, all ranges in order
    as an (n, 2) array). One-range sets ("a" or "a-b", nearly all of them) are parsed at once
    by pandas' CSV reader; the others one by one."""
    texts = [u if isinstance(u, str) else "" for u in uniques]
    simple = [i for i, t in enumerate(texts) if t and " " not in t]
    owner: list[np.ndarray] = []
    ranges: list[np.ndarray] = []
    count = np.zeros(len(texts), dtype=np.int64)
    if simple:
        try:
            table = pd.read_csv(io.StringIO("\n".join(texts[i] for i in simple)), sep="-",
                                header=None, names=["lo", "hi"], dtype=np.float64)
            lo = table["lo"].to_numpy()
            hi = np.where(np.isnan(table["hi"].to_numpy()), lo, table["hi"].to_numpy())
            bad = np.isnan(lo) | (lo != np.floor(lo)) | (hi != np.floor(hi))
        except (ValueError, pd.errors.ParserError):
            table, bad = (), np.ones(1, dtype=bool)
        if len(table) != len(simple) or bad.any():
            simple_ok: list[int] = []  # let the one-by-one parser name the culprit
        else:
            simple_ok = simple
            owner.append(np.asarray(simple, dtype=np.int64))
            ranges.append(np.column_stack([lo, hi]).astype(np.int64))
            count[simple] = 1
    else:
        simple_ok = []
    done = set(simple_ok)
    for i, text in enumerate(texts):
        if i in done or not text:
            continue
        parts = _parse_ranges(text)
        count[i] = len(parts)
        owner.append(np.full(len(parts), i, dtype=np.int64))
        ranges.append(np.asarray(parts, dtype=np.int64).reshape(-1, 2))
    if not ranges:
        return count, np.zeros((0, 2), dtype=np.int64)
    order = np.argsort(np.concatenate(owner), kind="stable")
    return count, np.concatenate(ranges)[order]


def _parse_ranges(text: str) -> list[tuple[int, int]]:
    parts = []
    for token in text.split():
        lo, sep, hi = token.partition("-")
        try:
            parts.append((int(lo), int(hi) if sep else int(lo)))
        except ValueError:
            raise AnalysisError(
                f"allocated_resources '{text}': '{token}' is not a machine id or a range a-b"
            ) from None
    return parts


def allocation_sizes(run_or_jobs: Run | pd.DataFrame) -> np.ndarray:
    """Number of machines of each job's allocation (0 for a job that never ran)."""
    if isinstance(run_or_jobs, Run):
        rows, lo, hi = run_or_jobs.allocation_ranges()
        n = len(run_or_jobs.jobs)
    else:
        rows, lo, hi = allocation_ranges(run_or_jobs["allocated_resources"])
        n = len(run_or_jobs)
    return np.bincount(rows, weights=hi - lo + 1, minlength=n).astype(np.int64)
