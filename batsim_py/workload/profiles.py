"""Validation of one profile JSON object into its typed record (research §3.4, §4).

Each profile type's load-time rules live in one parser here, so the engine can trust the
records it receives: a profile that reaches the simulation is well formed. Rules that need the
whole workload (composed references, `parallel` vector length vs a job's `res`) are checked by
the reader, which sees every profile and job.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.workload._fields import (
    integer,
    is_integer,
    number,
    number_array,
    require_object,
    show,
    string,
    type_name,
)
from batsim_py.workload.model import (
    ComposedProfile,
    DataStagingProfile,
    DelayProfile,
    ParallelHomogeneousPFSProfile,
    ParallelHomogeneousProfile,
    ParallelHomogeneousTotalProfile,
    ParallelProfile,
    Profile,
    RecvProfile,
    SendProfile,
    TraceProfile,
)
from batsim_py.workload.v5_profiles import V5_TYPES, as_v4

_BIG = 2**1023  # integers beyond a double's range go through the general path, which refuses them
_Parser = Callable[[str, str, Mapping[str, Any], int, str], Profile]


def _delay(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    return DelayProfile(name, ret, obj, number(where, obj, "delay", minimum=0.0, strict=True))


def _composed(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    seq = obj.get("seq")
    if not isinstance(seq, list) or not seq:
        raise WorkloadError(
            f"{where}: field 'seq' must be a non-empty array of profile names, "
            f"got {type_name(seq) if 'seq' in obj else 'nothing'}"
        )
    for i, item in enumerate(seq):
        if not isinstance(item, str):
            raise WorkloadError(
                f"{where}: field 'seq'[{i}] must be a profile name (string), "
                f"got {type_name(item)} {show(item)}"
            )
    repeat = integer(where, obj, "repeat", default=1)
    if repeat <= 0:
        raise WorkloadError(f"{where}: field 'repeat' must be >= 1, got {repeat}")
    return ComposedProfile(name, ret, obj, tuple(seq), repeat)


def _parallel(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    cpu = number_array(where, obj, "cpu")
    if not cpu:
        raise WorkloadError(f"{where}: field 'cpu' must not be empty (one value per executor)")
    com = number_array(where, obj, "com")
    if len(com) != len(cpu) * len(cpu):
        raise WorkloadError(
            f"{where}: field 'com' must hold len(cpu)^2 = {len(cpu) ** 2} values "
            f"(row-major matrix), got {len(com)}"
        )
    return ParallelProfile(name, ret, obj, cpu, com)


def _homogeneous(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    cpu = number(where, obj, "cpu", minimum=0.0)
    com = number(where, obj, "com", minimum=0.0)
    return ParallelHomogeneousProfile(name, ret, obj, cpu, com)


def _homogeneous_total(
    where: str, name: str, obj: Mapping[str, Any], ret: int, base: str
) -> Profile:
    cpu = number(where, obj, "cpu", minimum=0.0)
    com = number(where, obj, "com", minimum=0.0)
    return ParallelHomogeneousTotalProfile(name, ret, obj, cpu, com)


def _pfs(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    if "bytes_to_read" not in obj and "bytes_to_write" not in obj:
        raise WorkloadError(
            f"{where}: needs at least one of 'bytes_to_read' or 'bytes_to_write' (numbers >= 0)"
        )
    read = number(where, obj, "bytes_to_read", default=0.0, minimum=0.0)
    write = number(where, obj, "bytes_to_write", default=0.0, minimum=0.0)
    # "host" is the legacy name of the storage label.
    key = "storage" if "storage" in obj else "host"
    storage = string(where, obj, key, default="pfs")
    return ParallelHomogeneousPFSProfile(name, ret, obj, read, write, storage)


def _data_staging(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    nb_bytes = number(where, obj, "nb_bytes", minimum=0.0)
    src = string(where, obj, "from")
    dst = string(where, obj, "to")
    return DataStagingProfile(name, ret, obj, nb_bytes, src, dst)


def _trace(kind: str) -> _Parser:
    def parse(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
        trace = string(where, obj, "trace", nonempty=True)
        # Batsim resolves the trace against the workload file's directory.
        path = trace if os.path.isabs(trace) else os.path.join(base, trace)
        return TraceProfile(name, ret, obj, path, kind)

    return parse


def _send(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    msg = obj.get("msg")
    if not isinstance(msg, Mapping):
        raise WorkloadError(
            f"{where}: field 'msg' must be a JSON object (sent to the scheduler as is), "
            f"got {type_name(msg) if 'msg' in obj else 'nothing'}"
        )
    sleeptime = number(where, obj, "sleeptime", default=1e-7, minimum=0.0, strict=True)
    return SendProfile(name, ret, obj, msg, sleeptime)


def _recv(where: str, name: str, obj: Mapping[str, Any], ret: int, base: str) -> Profile:
    regex = string(where, obj, "regex", default=".*")
    success = string(where, obj, "success", default="")
    failure = string(where, obj, "failure", default="")
    timeout = string(where, obj, "timeout", default="")
    polltime = number(where, obj, "polltime", default=0.005, minimum=0.0, strict=True)
    return RecvProfile(name, ret, obj, regex, success, failure, timeout, polltime)


PARSERS: dict[str, _Parser] = {
    "delay": _delay,
    "composed": _composed,
    "parallel": _parallel,
    "parallel_homogeneous": _homogeneous,
    "parallel_homogeneous_total": _homogeneous_total,
    "parallel_homogeneous_pfs": _pfs,
    "data_staging": _data_staging,
    "usage_trace": _trace("usage_trace"),
    "smpi": _trace("smpi"),
    "send": _send,
    "recv": _recv,
}
"""Profile type name -> parser; the keys are the types batsim-py accepts."""


def parse_profile(
    name: str, obj: Mapping[str, Any], *, source: str, base_dir: str | None = None
) -> Profile:
    """Validate profile `name` of file `source` and build its record.

    `base_dir` is where relative trace paths are resolved (default: the directory of
    `source`). The original object is kept as `description` because Batsim forwards it to
    the scheduler verbatim.
    """
    if type(obj) is dict and obj.get("type") == "delay":  # the common case, fast
        delay, ret = obj.get("delay"), obj.get("ret", 0)
        if type(ret) is int and ((type(delay) is float and 0.0 < delay < math.inf)
                                 or (type(delay) is int and 0 < delay < _BIG)):
            return DelayProfile(name, ret, obj, float(delay))
    where = f"{source}: profile '{name}'"
    if type(obj) is not dict:
        require_object(where, obj)
    kind = obj.get("type")
    if kind is None:
        raise WorkloadError(
            f"{where}: missing mandatory field 'type' (one of {', '.join(PARSERS)})"
        )
    if not isinstance(kind, str):
        raise WorkloadError(f"{where}: field 'type' must be a string, got {type_name(kind)}")
    if kind in V5_TYPES:  # Batsim 5's names for the same profiles
        obj = as_v4(where, kind, obj)
        kind = obj["type"]
    parser = PARSERS.get(kind)
    if parser is None:
        # Batsim's own check is unreachable (it then asks for a 'trace' field); name the types.
        raise WorkloadError(f"{where}: unknown profile type '{kind}' (known: {', '.join(PARSERS)})")
    ret = obj.get("ret", 0)
    if type(ret) is not int and not is_integer(ret):
        raise WorkloadError(
            f"{where}: field 'ret' must be a JSON integer (0 = success), "
            f"got {type_name(ret)} {show(ret)}"
        )
    base = os.path.dirname(source) if base_dir is None else base_dir
    return parser(where, name, obj, ret, base)
