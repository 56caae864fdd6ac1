"""`PREFIX_jobs.csv`: one row per job, in the order the server learnt of its end (§7.1).

Batsim keeps job times in long double and derives every column from them before printing the
double value with `%f`; numpy's longdouble is the same 80-bit type on x86-64, so the printed
digits (down to the sign of `-0.000000`) come out identical. The columns are computed for all
jobs at once when the file is written: numpy's long double is slow one scalar at a time.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TextIO

import numpy as np

from batsim_py import intervalset
from batsim_py.workload.model import Job

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
)

LD = np.longdouble


def ld_text(x: object) -> str:
    """C's `%Lf` of a long double: 6 decimals, rounded from the long double itself."""
    return np.format_float_positional(x, precision=6, unique=False, fractional=True, trim="k")


NO_RUNTIME = LD("1e-5")  # Batsim's runtime for a job that took no time
CHUNK = 20_000  # rows formatted and written at a time: a million-job file never sits in memory


@dataclass(slots=True)
class JobRecord:
    """A job as it ended: what its row needs (times are the simulation clock's doubles).

    The static columns are read from `job`, which the workload keeps anyway (one record per job
    lives until the end of the run: it must stay small).
    """

    job: Job
    final_state: str
    starting_time: float  # unused when rejected
    end_time: float  # clock when it finished or was killed; unused when rejected
    alloc: Sequence[int]
    consumed_energy: object  # long double joules with -E, None without
    metadata: str


@dataclass(frozen=True, slots=True)
class JobTimes:
    """Long double columns of the jobs that ran (rejected ones excluded), in row order."""

    final_states: tuple[str, ...]
    nb_rejected: int
    waiting: np.ndarray
    completion: np.ndarray
    turnaround: np.ndarray
    slowdown: np.ndarray


def _column(values: Iterable[float], count: int) -> np.ndarray:
    # Through float64: numpy converts Python floats to long double one slow call at a time;
    # `fromiter` fills the array without a list of a million floats first.
    return np.fromiter(values, dtype=np.float64, count=count).astype(LD)


def compute_times(records: Sequence[JobRecord]) -> tuple[JobTimes, np.ndarray, np.ndarray]:
    """Batsim's long double job metrics, with the runtime and finish columns (non-rejected
    rows, in row order)."""
    ran = [r for r in records if r.final_state != "REJECTED"]
    n = len(ran)
    start = _column((r.starting_time for r in ran), n)
    end = _column((r.end_time for r in ran), n)
    sub = _column((r.job.subtime for r in ran), n)
    runtime = end - start
    runtime[runtime == 0] = NO_RUNTIME
    finish = start + runtime
    waiting = start - sub
    turnaround = finish - sub
    slowdown = turnaround / runtime
    times = JobTimes(
        final_states=tuple(r.final_state for r in ran),
        nb_rejected=len(records) - len(ran),
        waiting=waiting,
        completion=finish,
        turnaround=turnaround,
        slowdown=slowdown,
    )
    return times, runtime, finish


_ROW = '%s,%s,%s,%f,%d,%f,%d,%s,%f,%f,%f,%f,%f,%f,%s,%s,"%s"\n'
_REJECTED_ROW = '%s,%s,%s,%f,%d,%f,0,REJECTED,,,,,,,,,"%s"\n'


def _fields(r: JobRecord, printed: tuple) -> tuple:
    """The values of `_ROW` for a job that ran; `printed`: runtime, finish, waiting,
    turnaround and stretch as doubles."""
    job = r.job
    return (
        job.name, job.workload, job.profile, job.subtime, job.res, job.walltime,
        1 if r.final_state == "COMPLETED_SUCCESSFULLY" else 0, r.final_state,
        r.starting_time, *printed, intervalset.format(r.alloc),
        "-1.000000" if r.consumed_energy is None else ld_text(r.consumed_energy),
        r.metadata,
    )


_NEEDS_QUOTES = re.compile('[,"\r\n]')


def csv_text(text: str) -> str:
    """A text column as the CSV standard (RFC 4180) writes it: as is, or between double quotes
    (inner ones doubled) when it holds a comma, a double quote or a line break. Batsim writes
    ids raw, which corrupts its file; ordinary ids are written identically either way."""
    if _NEEDS_QUOTES.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


def _quoted(r: JobRecord) -> JobRecord:
    """`r` with its job's text columns quoted (a copy: the job itself is left alone)."""
    job = r.job
    named = replace(job, name=csv_text(job.name), workload=csv_text(job.workload),
                    profile=csv_text(job.profile))
    return JobRecord(named, r.final_state, r.starting_time, r.end_time, r.alloc,
                     r.consumed_energy, r.metadata)


def _row(r: JobRecord, printed: tuple | None) -> str:
    """One row, newline included (`printed` is None for a rejected job)."""
    if printed is None:
        job = r.job
        return _REJECTED_ROW % (
            job.name, job.workload, job.profile, job.subtime, job.res, job.walltime, r.metadata)
    return _ROW % _fields(r, printed)


def _flat_fields(chunk: Sequence[JobRecord], printed: Sequence[list]) -> list:
    """The values of `_ROW` for every row of `chunk` (jobs that all ran), row after row: the
    same values `_fields` gives, laid out column by column in C-level slice assignments."""
    n = len(chunk)
    width = _ROW.count("%")
    flat: list = [None] * (width * n)
    jobs = [r.job for r in chunk]
    flat[0::width] = [j.name for j in jobs]
    flat[1::width] = [j.workload for j in jobs]
    flat[2::width] = [j.profile for j in jobs]
    flat[3::width] = [j.subtime for j in jobs]
    flat[4::width] = [j.res for j in jobs]
    flat[5::width] = [j.walltime for j in jobs]
    states = [r.final_state for r in chunk]
    flat[6::width] = [1 if s == "COMPLETED_SUCCESSFULLY" else 0 for s in states]
    flat[7::width] = states
    flat[8::width] = [r.starting_time for r in chunk]
    for k, column in enumerate(printed):
        flat[9 + k::width] = column
    flat[14::width] = [intervalset.format(r.alloc) for r in chunk]
    flat[15::width] = ["-1.000000" if r.consumed_energy is None else ld_text(r.consumed_energy)
                       for r in chunk]
    flat[16::width] = [r.metadata for r in chunk]
    return flat


def write_rows(records: Sequence[JobRecord], out: TextIO) -> JobTimes:
    """Write the whole file (header included); return the metrics schedule.csv needs.

    Rows are formatted a chunk at a time, the printed doubles taken from the long double
    columns as the chunk needs them; a chunk without rejected jobs (the usual case) is
    formatted by one C-level `%`.
    """
    times, runtime, finish = compute_times(records)
    columns = (runtime, finish, times.waiting, times.turnaround, times.slowdown)
    out.write(HEADER + "\n")
    j = 0  # next row of the columns (rejected jobs have none)
    for lo in range(0, len(records), CHUNK):
        chunk = records[lo:lo + CHUNK]
        if _NEEDS_QUOTES.search("".join(
                chain.from_iterable((r.job.name, r.job.workload, r.job.profile) for r in chunk))):
            chunk = [_quoted(r) for r in chunk]  # rare: one C-level scan decides
        n = sum(1 for r in chunk if r.final_state != "REJECTED")
        with np.errstate(over="ignore"):  # a long double beyond the doubles prints inf
            printed = [c[j:j + n].astype(float).tolist() for c in columns]
        j += n
        if n == len(chunk):
            out.write((_ROW * n) % tuple(_flat_fields(chunk, printed)))
        else:
            rows = iter(zip(*printed, strict=True))
            out.write("".join(
                _row(r, None if r.final_state == "REJECTED" else next(rows)) for r in chunk
            ))
    return times


def format_rows(records: Sequence[JobRecord]) -> tuple[str, JobTimes]:
    """The whole file as a string (tests, small runs), and the metrics."""
    buffer = io.StringIO()
    times = write_rows(records, buffer)
    return buffer.getvalue(), times
