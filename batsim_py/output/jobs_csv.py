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
from operator import attrgetter
from types import MemberDescriptorType, ModuleType
from typing import TYPE_CHECKING, TextIO

import numpy as np

from batsim_py import intervalset
from batsim_py.output.fixed import fixed6, native_text
from batsim_py.workload import model
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


PURE_JOB_RECORD = JobRecord  # (the reference, which tests compare the C type with)
if not TYPE_CHECKING and native_text() is not None:
    # The same record as a C type where the native writer is built (output/_ctext.c): cheaper
    # to make, read by the writer at fixed offsets as this dataclass's slots are, and not
    # tracked by the cyclic garbage collector (a record never refers back to a record), whose
    # passes over the young objects otherwise scan every record a run keeps (f_50k: 49,000
    # once). It behaves as this class does (constructor, attributes, ==, repr, copy, pickle,
    # subclasses); BATSIM_PY_PURE keeps this class, the reference.
    JobRecord = native_text().JobRecord  # noqa: F811


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
    # Through float64: numpy converts Python floats to long double one slow call at a time.
    # From a list: `np.fromiter` over the map takes 2.5 times longer (0.26 us a value), and
    # the list (of floats that exist anyway) is 8 MB for a million jobs.
    column = np.array(list(values), dtype=np.float64)
    if len(column) != count:
        raise ValueError(f"{len(column)} values, {count} expected")
    return column.astype(LD)


def compute_times(records: Sequence[JobRecord]) -> tuple[JobTimes, np.ndarray, np.ndarray]:
    """Batsim's long double job metrics, with the runtime and finish columns (non-rejected
    rows, in row order)."""
    states = list(map(_STATE, records))
    ran = (records if "REJECTED" not in states else
           [r for r, s in zip(records, states, strict=True) if s != "REJECTED"])
    n = len(ran)
    native = native_text()
    if native is not None:  # (the three dates of each record read in one C pass)
        doubles = np.empty((3, n), dtype=np.float64)
        native.record_doubles(ran if type(ran) is list else list(ran), *doubles)
        start, end, sub = doubles.astype(LD)
    else:
        start = _column(map(_START_TIME, ran), n)
        end = _column(map(_END_TIME, ran), n)
        sub = _column(map(_SUBTIME, map(_JOB, ran)), n)
    runtime = end - start
    runtime[runtime == 0] = NO_RUNTIME
    finish = start + runtime
    waiting = start - sub
    turnaround = finish - sub
    slowdown = turnaround / runtime
    times = JobTimes(
        final_states=tuple(states) if ran is records else tuple(map(_STATE, ran)),
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


_JOB = attrgetter("job")
_NAME, _WORKLOAD, _PROFILE = attrgetter("name"), attrgetter("workload"), attrgetter("profile")
_SUBTIME, _RES, _WALLTIME = attrgetter("subtime"), attrgetter("res"), attrgetter("walltime")
_STATE, _START_TIME = attrgetter("final_state"), attrgetter("starting_time")
_END_TIME = attrgetter("end_time")
_ALLOC, _ENERGY = attrgetter("alloc"), attrgetter("consumed_energy")
_METADATA = attrgetter("metadata")
_RANGE_START, _RANGE_STOP, _RANGE_STEP = attrgetter("start"), attrgetter("stop"), attrgetter("step")
# "success,final_state" of each final state.
_STATE_TEXT = {s: f"{1 if s == 'COMPLETED_SUCCESSFULLY' else 0},{s}" for s in (
    "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_KILLED",
    "COMPLETED_WALLTIME_REACHED")}


def _alloc_columns(allocs: list) -> tuple[list, list, list] | None:
    """The allocations of a chunk as three columns (first machine, "-" or "", last machine
    or ""), when they are all contiguous ranges (the usual case): their text without a
    call per job. None otherwise."""
    if set(map(type, allocs)) != {range} or set(map(_RANGE_STEP, allocs)) != {1}:
        return None
    n = len(allocs)
    starts = np.fromiter(map(_RANGE_START, allocs), dtype=np.int64, count=n)
    stops = np.fromiter(map(_RANGE_STOP, allocs), dtype=np.int64, count=n)
    widths = stops - starts
    if n and widths.min() < 1:
        return None
    single = widths == 1
    dashes = np.full(n, "-", dtype=object)
    dashes[single] = ""
    lasts = (stops - 1).astype(object)
    lasts[single] = ""
    return starts.tolist(), dashes.tolist(), lasts.tolist()


def _chunk_text(chunk: Sequence[JobRecord], printed: Sequence[np.ndarray], jobs: list[Job],
                names: list[str]) -> str:
    """The rows of `chunk` (jobs that all ran: `printed` holds their runtime, finish, waiting,
    turnaround and stretch doubles), the text `_row` gives each, made by one C-level `%` over
    the values laid out column by column (slice assignments): no Python call per job.
    `jobs`, `names`: the chunk's jobs and their names."""
    n = len(chunk)
    columns: list[tuple[str, list | map]] = [
        ("%s", names), ("%s", list(map(_WORKLOAD, jobs))),
        ("%s", list(map(_PROFILE, jobs))),
        fixed6(np.fromiter(map(_SUBTIME, jobs), dtype=np.float64, count=n)),
        ("%d", list(map(_RES, jobs)))]
    walltimes = list(map(_WALLTIME, jobs))
    distinct = set(walltimes)
    if 0.0 in distinct or any(w != w for w in distinct):  # (-0.0 == 0.0; nan != nan)
        columns.append(("%f", walltimes))
    else:  # a few distinct values: each printed once
        texts = {w: "%f" % w for w in distinct}
        columns.append(("%s", list(map(texts.__getitem__, walltimes))))
    states = list(map(_STATE, chunk))
    columns.append(("%s", [_STATE_TEXT.get(s) or _state_text(s) for s in states]))
    columns.append(fixed6(np.fromiter(map(_START_TIME, chunk), dtype=np.float64, count=n)))
    columns += [fixed6(c) for c in printed]
    allocs = list(map(_ALLOC, chunk))
    split = _alloc_columns(allocs)
    if split is None:
        columns += [("%s", [intervalset.format(a) for a in allocs]), ("%s", [""] * n),
                    ("%s", [""] * n)]
    else:
        columns += [("%s", split[0]), ("%s", split[1]), ("%s", split[2])]
    energies = list(map(_ENERGY, chunk))
    tail = ""
    energies_given = set(energies) != {None}
    if not energies_given:
        tail = "-1.000000"
    else:
        columns.append(("%s", ["-1.000000" if e is None else ld_text(e) for e in energies]))
    metadata = list(map(_METADATA, chunk))
    if set(metadata) == {""}:
        tail += ',""'
    else:
        columns.append(("%s", metadata))
    width = len(columns)
    flat: list = [None] * (width * n)
    for k, (_, values) in enumerate(columns):
        flat[k::width] = values
    formats = [f for f, _ in columns]
    # name,workload,profile,subtime,res,walltime,success+state,start,5 printed,alloc (3 parts)
    row = ",".join(formats[:13]) + ",%s%s%s,"
    if width == 16:  # energies and metadata constant
        row += tail
    elif energies_given:
        row += "%s" + (tail or ',"%s"')
    else:  # energies constant, metadata given
        row += '-1.000000,"%s"'
    return (row + "\n") * n % tuple(flat)


def _native_rows(native: ModuleType, chunk: Sequence[JobRecord], printed: Sequence[np.ndarray],
                 jobs: list[Job], names: list[str], states: list[str]) -> bytes:
    """The rows `_chunk_text` writes, as UTF-8 bytes, by the native writer (output/_ctext.c):
    the same columns handed over as lists (`states`: the final states) and float64 arrays."""
    energies = list(map(_ENERGY, chunk))
    return native.jobs_rows(
        names, list(map(_WORKLOAD, jobs)), list(map(_PROFILE, jobs)), list(map(_RES, jobs)),
        states, list(map(_ALLOC, chunk)),
        None if set(energies) == {None} else [None if e is None else ld_text(e)
                                               for e in energies],
        list(map(_METADATA, chunk)), intervalset.format,
        (list(map(_SUBTIME, jobs)), list(map(_WALLTIME, jobs)), list(map(_START_TIME, chunk)),
         *(np.ascontiguousarray(c, dtype=np.float64) for c in printed)))


def _name_slot() -> object:
    """The slot holding a Job's name (workload/model.py: None when the name is the end of the
    id), for the native writer to read without the `name` property's call (a third of a row's
    cost), when `Job.name` is that property; else None (the writer reads `name`)."""
    slot = getattr(model, "_NAME_SLOT", None)
    name = Job.__dict__.get("name")
    if (type(slot) is MemberDescriptorType and isinstance(name, property)
            and name.fget is getattr(model, "_job_name", None)):
        return slot
    return None


def _state_text(state: str) -> str:
    return f"{1 if state == 'COMPLETED_SUCCESSFULLY' else 0},{state}"


def _quoting_needed(jobs: list[Job], names: list[str]) -> bool:
    """Whether a text column of `jobs` needs CSV quotes (C-level scans of each column)."""
    return any(c in text for text in ("".join(names), "".join(map(_WORKLOAD, jobs)),
                                      "".join(map(_PROFILE, jobs))) for c in ',"\r\n')


def write_rows(records: Sequence[JobRecord], out: TextIO) -> JobTimes:
    """Write the whole file (header included); return the metrics schedule.csv needs.

    Rows are formatted a chunk at a time, the printed doubles taken from the long double
    columns as the chunk needs them; a chunk without rejected jobs (the usual case) is
    formatted by one C-level `%`.
    """
    times, runtime, finish = compute_times(records)
    columns = (runtime, finish, times.waiting, times.turnaround, times.slowdown)
    out.write(HEADER + "\n")
    native = native_text()
    # The usual case, no job rejected: the native writer reads the records itself.
    rows_of = native.jobs_rows_of if native is not None and not times.nb_rejected else None
    name_slot = _name_slot() if rows_of is not None else None  # (the same for every chunk)
    binary = getattr(out, "buffer", None)  # a file's bytes, for the native writer's rows
    if binary is not None:
        out.flush()  # (then text and bytes interleave: flush before each text write)
    j = 0  # next row of the columns (rejected jobs have none)
    for lo in range(0, len(records), CHUNK):
        chunk = records[lo:lo + CHUNK]
        if rows_of is not None:
            if type(chunk) is not list:
                chunk = list(chunk)
            with np.errstate(over="ignore"):  # (as below)
                direct = rows_of(chunk, tuple(c[j:j + len(chunk)].astype(float)
                                              for c in columns), intervalset.format, ld_text,
                                 name_slot)
            if direct is not None:  # (None: a text column to quote: the paths below)
                j += len(chunk)
                if binary is not None:
                    binary.write(direct)
                else:
                    out.write(direct.decode())
                continue
        jobs = list(map(_JOB, chunk))
        names = list(map(_NAME, jobs))  # (read once: `Job.name` may be computed)
        if _quoting_needed(jobs, names):
            chunk = [_quoted(r) for r in chunk]  # rare
            jobs = list(map(_JOB, chunk))
            names = list(map(_NAME, jobs))
        states = list(map(_STATE, chunk))
        n = len(chunk) - states.count("REJECTED")
        with np.errstate(over="ignore"):  # a long double beyond the doubles prints inf
            printed = [c[j:j + n].astype(float) for c in columns]
        j += n
        if n == len(chunk) and native is not None:
            rows = _native_rows(native, chunk, printed, jobs, names, states)
            if binary is not None:
                binary.write(rows)
            else:
                out.write(rows.decode())
        elif n == len(chunk):
            out.write(_chunk_text(chunk, printed, jobs, names))
        else:
            rows = iter(zip(*(c.tolist() for c in printed), strict=True))
            out.write("".join(
                _row(r, None if r.final_state == "REJECTED" else next(rows)) for r in chunk
            ))
            if binary is not None:
                out.flush()
    return times


def format_rows(records: Sequence[JobRecord]) -> tuple[str, JobTimes]:
    """The whole file as a string (tests, small runs), and the metrics."""
    buffer = io.StringIO()
    times = write_rows(records, buffer)
    return buffer.getvalue(), times
