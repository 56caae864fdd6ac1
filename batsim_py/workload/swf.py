"""Conversion of Standard Workload Format traces (.swf, Parallel Workloads Archive) to Batsim JSON.

Real traces are the usual input of scheduling studies, and Batsim reads only its JSON format.
The conversion is deliberately simple: every job becomes a `delay` job whose delay is the
trace's run time, so replaying a trace reproduces its run times, not its performance on
another machine.

SWF lines hold 18 whitespace-separated fields (`-1` = unknown); lines starting with ';' are
comments, where the header may give `MaxProcs:` / `MaxNodes:`. The fields used are:
1 job number -> `id`, 2 submit time -> `subtime`, 4 run time -> the delay, 5 allocated
processors (8 requested processors when unknown, or first with `use_requested_res`) -> `res`,
9 requested time -> `walltime` (absent when unknown).
A job with an unusable run time (<= 0: typically cancelled before it started) or size is
invalid: it is skipped with a warning naming its line, or aborts with `strict`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.workload.model import Workload
from batsim_py.workload.reader import absolute_path, parse_workload

SWF_FIELDS = 18
_MAX_PROCS = re.compile(r"^;\s*Max(Procs|Nodes)\s*:\s*(\d+)", re.IGNORECASE)


@dataclass
class SwfConversion:
    """The Batsim JSON object plus what was left out, so callers can report it."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0


def _num_text(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(x)


def _json_number(x: float) -> int | float:
    # SWF times are usually integers; keep them JSON integers so the file stays exact.
    return int(x) if x == int(x) else x


def swf_to_json(
    path: str,
    *,
    nb_res: int | None = None,
    profile_per_job: bool = False,
    use_requested_res: bool = False,
    use_walltime: bool = True,
    shift_subtimes: bool = False,
    strict: bool = False,
) -> SwfConversion:
    """Convert the SWF file `path` to a Batsim JSON workload object.

    `nb_res` defaults to the header's MaxProcs (or MaxNodes), else the largest job. Profiles
    are shared by jobs with the same run time (`delay_<runtime>`) unless `profile_per_job`.
    `shift_subtimes` makes the first submission happen at 0.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except FileNotFoundError:
        raise WorkloadError(f"{path}: SWF file not found (check the path)") from None
    except OSError as e:
        raise WorkloadError(f"{path}: cannot read SWF file: {e.strerror or e}") from None

    conv = SwfConversion(data={})
    header_procs: int | None = None
    rows: list[tuple[int, int, float, float, int, float]] = []  # line, id, sub, run, res, wall
    seen: dict[int, int] = {}

    def invalid(lineno: int, why: str) -> None:
        msg = f"{path}:{lineno}: {why}"
        if strict:
            raise WorkloadError(msg + " (fix or remove the line, or convert without strict)")
        conv.warnings.append(msg + "; line skipped")
        conv.skipped += 1

    for lineno, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            m = _MAX_PROCS.match(text)
            if m and header_procs is None:
                header_procs = int(m.group(2))
            continue
        parts = text.split()
        if len(parts) < SWF_FIELDS:
            invalid(lineno, f"{len(parts)} fields, SWF lines have {SWF_FIELDS}")
            continue
        try:
            values = [float(p) for p in parts[:SWF_FIELDS]]
        except ValueError:
            invalid(lineno, "a field is not a number")
            continue
        if not all(math.isfinite(v) for v in values):
            invalid(lineno, "a field is not a finite number")
            continue
        job_id, submit, run = values[0], values[1], values[3]
        alloc, requested, req_time = values[4], values[7], values[8]
        if job_id != int(job_id):
            invalid(lineno, f"job number {parts[0]} is not an integer")
            continue
        if submit < 0:
            invalid(lineno, f"submit time {parts[1]} is negative")
            continue
        if run <= 0:
            invalid(lineno, f"run time {parts[3]} is not > 0 (job never ran)")
            continue
        first, second = (requested, alloc) if use_requested_res else (alloc, requested)
        size = first if first > 0 else second
        if size <= 0 or size != int(size):
            invalid(lineno, "neither allocated nor requested processors is a positive integer")
            continue
        jid = int(job_id)
        if jid in seen:
            invalid(lineno, f"job number {jid} already used on line {seen[jid]}")
            continue
        seen[jid] = lineno
        wall = req_time if use_walltime and req_time > 0 else -1.0
        rows.append((lineno, jid, submit, run, int(size), wall))

    if nb_res is None:
        nb_res = header_procs or max((r[4] for r in rows), default=1)
    if nb_res <= 0:
        raise WorkloadError(f"{path}: nb_res must be > 0, got {nb_res}")

    offset = min((r[2] for r in rows), default=0.0) if shift_subtimes else 0.0
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for lineno, jid, submit, run, size, wall in rows:
        if size > nb_res:
            invalid(lineno, f"job {jid} needs {size} processors, the platform has {nb_res}")
            continue
        pname = f"job_{jid}" if profile_per_job else f"delay_{_num_text(run)}"
        if pname not in profiles:
            profiles[pname] = {"type": "delay", "delay": _json_number(run)}
        job: dict[str, Any] = {
            "id": jid,
            "subtime": _json_number(submit - offset),
            "res": size,
            "profile": pname,
        }
        if wall > 0:
            job["walltime"] = _json_number(wall)
        jobs.append(job)

    conv.data = {
        "description": f"converted from SWF trace {path}",
        "nb_res": nb_res,
        "jobs": jobs,
        "profiles": profiles,
    }
    return conv


def swf_to_workload(path: str, name: str = "w0", **options: Any) -> Workload:
    """Convert and validate in one step, as if the JSON had been written and loaded."""
    conv = swf_to_json(path, **options)
    return parse_workload(conv.data, name=name, path=absolute_path(path), source=path)
