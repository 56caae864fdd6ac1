"""Validation of one job JSON object into a `Job` (research §3.3).

This runs once per job of workloads with tens of thousands of jobs, so the common case (well
typed fields) takes a short path of exact type tests; the shared field helpers, which build
the detailed messages, are only reached when something looks wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.workload._fields import (
    integer,
    is_integer,
    number,
    show,
    string,
    type_name,
)
from batsim_py.workload.model import Job

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

    `description` is the original object with "id" replaced by the full identifier, key order
    and JSON number types preserved, because that is what Batsim forwards to the scheduler.
    `owned`: `obj` was parsed for this job alone and becomes the description itself (no copy:
    a million-job workload keeps a million of them).
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise WorkloadError(f"{source}: a job must be a JSON object, got {type_name(obj)}")
    if "id" not in obj:
        raise WorkloadError(f"{source}: a job has no 'id' field: {show(dict(obj), 80)}")
    wl, name = job_identifier(obj["id"], workload=workload, where=source)
    full_id = f"{wl}!{name}"

    subtime = obj.get("subtime")
    if not ((type(subtime) is int and -_BIG < subtime < _BIG)
            or (type(subtime) is float and math.isfinite(subtime))):
        subtime = number(f"{source}: job {full_id}", obj, "subtime")
    walltime = obj.get("walltime", -1.0)
    if not ((type(walltime) is int and -_BIG < walltime < _BIG)
            or (type(walltime) is float and math.isfinite(walltime))):
        walltime = number(f"{source}: job {full_id}", obj, "walltime", default=-1.0)
    if walltime != -1 and not walltime > 0:
        raise WorkloadError(
            f"{source}: job {full_id}: field 'walltime' must be > 0, or -1 (or absent) for "
            f"no walltime, got {obj['walltime']!r}"
        )
    res = obj.get("res")
    if type(res) is not int or res < 0:
        res = integer(f"{source}: job {full_id}", obj, "res", minimum=0)
    profile = obj.get("profile")
    if type(profile) is not str:
        profile = string(f"{source}: job {full_id}", obj, "profile")

    mapping = obj.get("smpi_ranks_to_hosts_mapping")
    if mapping is not None:
        _check_rank_mapping(f"{source}: job {full_id}", mapping, res)

    description = obj if owned and type(obj) is dict else dict(obj)
    description["id"] = full_id  # same key position: dict assignment keeps insertion order
    return Job(full_id, wl, name, float(subtime), float(walltime), res, profile, description)


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
