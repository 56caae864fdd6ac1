"""Job and profile records from the JSON objects Batsim forwards (JOB_SUBMITTED, SIMULATION_BEGINS).

The workload layer owns the parsing rules (`parse_job`, `parse_profile`); this module only adapts
them to messages (a job in a message already carries its full `workload!name` id) and turns their
errors into `ProtocolError`. A small fallback keeps the codec usable while the workload parsers are
not importable (it builds the same records with the fields schedulers read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batsim_py.errors import BatsimPyError, ProtocolError
from batsim_py.workload.model import Job, Profile

try:  # pragma: no cover - depends on the workload package's progress
    from batsim_py.workload.jobs import parse_job as _parse_job
except ImportError:  # pragma: no cover
    _parse_job = None
try:  # pragma: no cover
    from batsim_py.workload.profiles import parse_profile as _parse_profile
except ImportError:  # pragma: no cover
    _parse_profile = None


def job_from_json(obj: Any, *, where: str) -> Job:
    if not isinstance(obj, Mapping):
        raise ProtocolError(f"{where}: 'job' is not an object")
    full_id = obj.get("id")
    if not isinstance(full_id, str) or "!" not in full_id:
        raise ProtocolError(f"{where}: job 'id' must be a string 'workload!name' (got {full_id!r})")
    workload = full_id.split("!", 1)[0]
    if _parse_job is not None:
        try:
            return _parse_job(obj, workload=workload, source=where)
        except BatsimPyError as exc:
            raise ProtocolError(f"{where}: {exc}") from exc
    return _fallback_job(obj, full_id, workload, where)


def profile_from_json(name: str, obj: Any, *, where: str) -> Profile:
    if not isinstance(obj, Mapping):
        raise ProtocolError(f"{where}: profile '{name}' is not an object")
    if _parse_profile is not None:
        try:
            return _parse_profile(name, obj, source=where)
        except BatsimPyError as exc:
            raise ProtocolError(f"{where}: {exc}") from exc
    ret = obj.get("ret", 0)
    return Profile(name=name, ret=ret if isinstance(ret, int) else 0, description=obj)


def _fallback_job(obj: Mapping[str, Any], full_id: str, workload: str, where: str) -> Job:
    def num(key: str, default: float | None = None) -> float:
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProtocolError(f"{where}: job {full_id}: '{key}' must be a number")
        return float(value)

    res = obj.get("res")
    if isinstance(res, bool) or not isinstance(res, int):
        raise ProtocolError(f"{where}: job {full_id}: 'res' must be an integer")
    profile = obj.get("profile")
    if not isinstance(profile, str):
        raise ProtocolError(f"{where}: job {full_id}: 'profile' must be a string")
    return Job(
        id=full_id,
        workload=workload,
        name=full_id.split("!", 1)[1],
        subtime=num("subtime"),
        walltime=num("walltime", -1.0),
        res=res,
        profile=profile,
        description=obj,
    )
