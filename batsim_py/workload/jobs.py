"""Validation of one job JSON object into a `Job` (research §3.3).

This runs once per job of workloads with tens of thousands of jobs, so the common case (well
typed fields) takes a short path of exact type tests; the shared field helpers, which build
the detailed messages, are only reached when something looks wrong.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from itertools import repeat
from operator import itemgetter
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.workload import fast
from batsim_py.workload._fields import (
    integer,
    is_integer,
    number,
    show,
    string,
    type_name,
)
from batsim_py.workload.model import (
    _NAME_SLOT,
    FLOAT_SUBTIME,
    FLOAT_WALLTIME,
    ID,
    INT_SUBTIME,
    INT_WALLTIME,
    OTHER,
    PROFILE,
    RES,
    Job,
    JobShape,
    jobs_read,
)

_BANGS = re.compile(r"!+")
_BIG = 2**1023  # integers beyond a double's range go through number(), which refuses them


def job_identifier(raw: Any, *, workload: str, where: str) -> tuple[str, str]:
    """Batsim's identifier building: returns (workload part, job name).

    The text is prefixed with `<workload>!` only when it does not already contain the
    workload name *anywhere*; then it must split (runs of '!' count as one) into exactly two
    parts. Hence the quirks of §3.3: in w0, "w0_3" and "x!1" abort and "w0!3" is kept.
    An id whose workload part is not this workload ("aw0b!2" in w0) is accepted by Batsim
    but the job can then never be found; batsim-py refuses it at load time instead.
    """
    kind = type(raw)
    if kind is str:
        text = raw
    elif kind is int:
        text = str(raw)
    elif isinstance(raw, str):
        text = raw
    elif is_integer(raw):
        text = str(raw)
    else:
        raise WorkloadError(
            f"{where}: job id {show(raw)} must be a string or an integer, got {type_name(raw)}"
        )
    if workload not in text and "!" not in text:
        if not text:
            raise WorkloadError(f"{where}: job id {show(raw)} is invalid: the job name is empty")
        return workload, text  # the common case, without a regular expression
    candidate = text if workload in text else f"{workload}!{text}"
    parts = _BANGS.split(candidate)
    if len(parts) != 2:
        if workload in text:
            hint = (
                f"it contains the workload name '{workload}', so it must be "
                f"'{workload}!<name>'; rename the job so it does not contain '{workload}'"
            )
        else:
            hint = f"a job name may not contain '!' (it becomes '{candidate}')"
        raise WorkloadError(f"{where}: job id {show(raw)} is invalid: {hint}")
    wl, name = parts
    if not name or not wl:
        raise WorkloadError(f"{where}: job id {show(raw)} is invalid: the job name is empty")
    if wl != workload:
        raise WorkloadError(
            f"{where}: job id {show(raw)} is invalid: its workload part '{wl}' is not "
            f"'{workload}' (Batsim could never find this job); use '{workload}!{name}' or '{name}'"
        )
    return wl, name


def parse_job(obj: Mapping[str, Any], *, workload: str, source: str, owned: bool = False) -> Job:
    """Validate a job of workload `workload` read from file `source`.

    Its `description` is the original object with "id" replaced by the full identifier, key
    order and JSON number types preserved, because that is what Batsim forwards to the
    scheduler; the job keeps only what it takes to rebuild it (`Job.json_form`), not the
    object.
    `owned` is accepted for callers that pass objects parsed for the job alone; either way
    nothing of `obj` but its extra values is kept.
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise WorkloadError(f"{source}: a job must be a JSON object, got {type_name(obj)}")
    if "id" not in obj:
        raise WorkloadError(f"{source}: a job has no 'id' field: {show(dict(obj), 80)}")
    wl, name = job_identifier(obj["id"], workload=workload, where=source)
    full_id = f"{wl}!{name}"

    # Each number's code says how its value comes back in `description` (see JobShape).
    subtime = obj.get("subtime")
    if type(subtime) is int and -_EXACT <= subtime <= _EXACT:
        sub_code = INT_SUBTIME
    elif type(subtime) is float and math.isfinite(subtime):
        sub_code = FLOAT_SUBTIME
    else:
        sub_code = OTHER
        if not (type(subtime) is int and -_BIG < subtime < _BIG):
            subtime = number(f"{source}: job {full_id}", obj, "subtime")
    walltime = obj.get("walltime", -1.0)
    if type(walltime) is int and -_EXACT <= walltime <= _EXACT:
        wall_code = INT_WALLTIME
    elif type(walltime) is float and math.isfinite(walltime):
        wall_code = FLOAT_WALLTIME
    else:
        wall_code = OTHER
        if not (type(walltime) is int and -_BIG < walltime < _BIG):
            walltime = number(f"{source}: job {full_id}", obj, "walltime", default=-1.0)
    if walltime != -1 and not walltime > 0:
        raise WorkloadError(
            f"{source}: job {full_id}: field 'walltime' must be > 0, or -1 (or absent) for "
            f"no walltime, got {obj['walltime']!r}"
        )
    res = obj.get("res")
    res_code = RES
    if type(res) is not int or res < 0:
        res = integer(f"{source}: job {full_id}", obj, "res", minimum=0)
        res_code = OTHER
    profile = obj.get("profile")
    profile_code = PROFILE
    if type(profile) is not str:
        profile = string(f"{source}: job {full_id}", obj, "profile")
        profile_code = OTHER
    profile = sys.intern(profile)  # one string per profile, not one per job

    mapping = obj.get("smpi_ranks_to_hosts_mapping")
    if mapping is not None:
        _check_rank_mapping(f"{source}: job {full_id}", mapping, res)

    key = (tuple(obj), sub_code, wall_code, res_code, profile_code)
    last = _LAST
    if key == last[0]:  # (the usual case: the keys are the same objects, compared by identity)
        shape, others = last[1]
    else:
        shape, others = _known_shape(key)
    # Walltimes and sizes repeat from job to job: one object per distinct value, not per job.
    return Job(full_id, wl, name, float(subtime), _shared_walltime(walltime), _shared_size(res),
               profile, shape if not others else (shape, tuple([obj[k] for k in others])))


def parse_jobs(raw_jobs: list[Any], *, workload: str, source: str) -> tuple[Job, ...]:
    """`parse_job` of every object of `raw_jobs`, in order: the same jobs, the same errors.

    A workload whose job objects all have the same keys in the same order and the same exact
    number types (a generated or converted workload: tens of thousands to millions of jobs) is
    checked and built column by column, each check one C-level pass (`map`, `set`, `min`); any
    other workload, or one that fails a check, is parsed job by job (which names the first job
    at fault)."""
    out: list[Job] = []
    native = fast.NATIVE
    for lo in range(0, len(raw_jobs), _BLOCK):  # (blocks: columns of a million jobs are big)
        block = raw_jobs[lo:lo + _BLOCK]
        jobs = None if native is None else native.uniform_jobs(
            block, workload, Job, _JOB_SLOTS, _shape_of)
        if jobs is None:
            jobs = _uniform_jobs(block, workload)
        if jobs is None:
            jobs = [parse_job(obj, workload=workload, source=source) for obj in block]
        out += jobs
    return tuple(out)


_BLOCK = 1 << 16
# Job's slots, as the native loader sets them (workload/_cload.c, `uniform_jobs`).
_JOB_SLOTS = (Job.__dict__["id"], Job.__dict__["workload"], _NAME_SLOT, Job.__dict__["subtime"],
              Job.__dict__["walltime"], Job.__dict__["res"], Job.__dict__["profile"],
              Job.__dict__["json_form"])


def _shape_of(keys: tuple[str, ...], int_subtimes: int, int_walltimes: int) -> JobShape:
    """The JobShape of uniform jobs with keys `keys` (for the native loader: the values of
    the keys other than the five it knows are the jobs' own)."""
    key = (keys, INT_SUBTIME if int_subtimes else FLOAT_SUBTIME,
           INT_WALLTIME if int_walltimes else FLOAT_WALLTIME, RES, PROFILE)
    return _known_shape(key)[0]


def _number_column(values: list[Any], int_code: int, float_code: int) -> int | None:
    """The JobShape code of a column of numbers all of one exact type (ints within a double's
    exact range, or finite floats); None otherwise (the job-by-job path then decides)."""
    kinds = set(map(type, values))
    if kinds == {int}:
        return int_code if -_EXACT <= min(values) and max(values) <= _EXACT else None
    if kinds == {float}:
        return float_code if all(map(math.isfinite, values)) else None
    return None


def _uniform_jobs(raw_jobs: list[Any], workload: str) -> list[Job] | None:
    """The jobs of `raw_jobs` when every object has the keys of the first in the same order,
    well-typed values and the common kind of id (see `parse_jobs`); else None."""
    n = len(raw_jobs)
    if not n or set(map(type, raw_jobs)) != {dict}:
        return None
    keys = tuple(raw_jobs[0])
    if (not {"id", "subtime", "res", "profile"}.issubset(keys)
            or "smpi_ranks_to_hosts_mapping" in keys or "\0" in workload
            or not all(map(keys.__eq__, map(tuple, raw_jobs)))):
        return None
    raw_ids = list(map(itemgetter("id"), raw_jobs))
    id_kinds = set(map(type, raw_ids))
    if id_kinds == {int}:
        names: list[str] = list(map(str, raw_ids))
    elif id_kinds == {str}:
        names = raw_ids
    else:
        return None
    joined = "\0".join(names)
    if "!" in joined or workload in joined or min(map(len, names)) == 0:
        return None  # ids with a workload part, or invalid: job by job
    subtimes = list(map(itemgetter("subtime"), raw_jobs))
    sub_code = _number_column(subtimes, INT_SUBTIME, FLOAT_SUBTIME)
    if "walltime" in keys:
        walltimes = list(map(itemgetter("walltime"), raw_jobs))
        wall_code = _number_column(walltimes, INT_WALLTIME, FLOAT_WALLTIME)
        if wall_code is None:
            return None
        distinct = set(walltimes)
        if any(w != -1 and not w > 0 for w in distinct):
            return None
    else:
        wall_code = FLOAT_WALLTIME  # (as parse_job's default -1.0)
        walltimes = [-1.0] * n
        distinct = {-1.0}
    sizes = list(map(itemgetter("res"), raw_jobs))
    profiles = list(map(itemgetter("profile"), raw_jobs))
    if (sub_code is None or set(map(type, sizes)) != {int} or min(sizes) < 0
            or set(map(type, profiles)) != {str}):
        return None
    # One object per distinct walltime, size and profile name, as parse_job shares them.
    kept = {w: _shared_walltime(w) for w in distinct}
    walls = list(map(kept.__getitem__, walltimes))
    if max(sizes) > 256:
        shared = {r: _shared_size(r) for r in set(sizes) if r > 256}
        sizes = [shared.get(r, r) for r in sizes]
    interned = {p: sys.intern(p) for p in set(profiles)}
    profiles = list(map(interned.__getitem__, profiles))
    shape, others = _known_shape((keys, sub_code, wall_code, RES, PROFILE))
    forms: Any = (repeat(shape, n) if not others else
                  [(shape, tuple([obj[k] for k in others])) for obj in raw_jobs])
    full_ids = map((workload + "!").__add__, names)  # (the names hold no "!" nor workload)
    return jobs_read(full_ids, workload, map(float, subtimes), walls, sizes, profiles, forms)


_EXACT = 2**53  # every integer up to this one is exactly a double's value
# The shapes met so far, by (keys, codes of subtime, walltime, res and profile), with the keys
# whose values a job keeps itself: most workloads have one or a few. Bounded, for processes
# that read many different workloads.
_SHAPES: dict[tuple[Any, ...], tuple[JobShape, tuple[str, ...]]] = {}
_MAX_SHAPES = 4096
_LAST: list[Any] = [None, None]  # the last job's key and shape: the next one's, most often
_NUMBERS: dict[Any, float] = {}  # walltime (int or float) -> the float a job keeps
_SIZES: dict[int, int] = {}
_MAX_NUMBERS = 1 << 16


def _shared_walltime(walltime: Any) -> float:
    """The float a job keeps for `walltime` (an int or a float): one object per distinct
    value while the bounded table has room."""
    numbers = _NUMBERS
    wall = numbers.get(walltime)
    if wall is None or type(wall) is not float:
        wall = float(walltime)
        if len(numbers) < _MAX_NUMBERS:
            numbers[walltime] = wall
    return wall


def _shared_size(res: int) -> int:
    """One int object per distinct size above 256 (Python shares the smaller ones itself)
    while the bounded table has room."""
    if res > 256 and len(_SIZES) < _MAX_NUMBERS:
        return _SIZES.setdefault(res, res)
    return res


def _known_shape(key: tuple[Any, ...]) -> tuple[JobShape, tuple[str, ...]]:
    """The shape of jobs of `key` and the keys whose values a job keeps itself, made the first
    time, and remembered as the last one met (`_LAST`: the next job's, most often)."""
    known = _SHAPES.get(key)
    if known is None:
        known = _new_shape(key)
    _LAST[0], _LAST[1] = key, known
    return known


def _new_shape(key: tuple[Any, ...]) -> tuple[JobShape, tuple[str, ...]]:
    keys, sub_code, wall_code, res_code, profile_code = key
    codes = {"id": ID, "subtime": sub_code, "walltime": wall_code, "res": res_code,
             "profile": profile_code}
    shape = JobShape(keys, tuple(codes.get(k, OTHER) for k in keys))
    others = tuple(k for k, c in zip(shape.keys, shape.codes, strict=True) if c == OTHER)
    if len(_SHAPES) >= _MAX_SHAPES:
        _SHAPES.clear()
    known = _SHAPES[key] = (shape, others)
    return known


def _check_rank_mapping(where: str, mapping: Any, res: int) -> None:
    if not isinstance(mapping, list):
        raise WorkloadError(
            f"{where}: field 'smpi_ranks_to_hosts_mapping' must be an array of integers, "
            f"got {type_name(mapping)}"
        )
    for i, host in enumerate(mapping):
        if not is_integer(host) or not 0 <= host < res:
            raise WorkloadError(
                f"{where}: field 'smpi_ranks_to_hosts_mapping'[{i}] must be an integer in "
                f"[0, res={res}), got {show(host)}"
            )
