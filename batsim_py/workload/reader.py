"""Loading a Batsim JSON workload file into a validated `Workload` (research §3.1-3.4).

Order follows Batsim: top-level checks, profiles, jobs, then the checks that need both
(profile existence, `parallel` sizes, composed references, duplicate ids). Profiles that no
job can reach are then dropped, because Batsim frees them and they are absent from
SIMULATION_BEGINS.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.rapidjson_number import rapidjson_double
from batsim_py.text import line_of, lone_surrogate
from batsim_py.workload import fast
from batsim_py.workload._fields import is_integer, show, type_name
from batsim_py.workload.jobs import _JOB_SLOTS, _shape_of, parse_jobs
from batsim_py.workload.model import (
    ComposedProfile,
    DelayProfile,
    Job,
    ParallelProfile,
    Profile,
    RecvProfile,
    Workload,
)
from batsim_py.workload.profiles import parse_profile


class _NonFiniteConstant(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity; Batsim's parser does not.
    raise _NonFiniteConstant(name)


def read_json(path: str, *, source: str | None = None) -> Any:
    """Parse a JSON file, turning every failure into a one-line `WorkloadError`.

    `json.load` keeps integers as int and floats as float: Batsim forwards numbers with
    their JSON type.
    """
    src = source or path
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # Floats as Batsim's RapidJSON reads them (17-digit values may differ by an ulp).
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=rapidjson_double)
    except FileNotFoundError:
        raise WorkloadError(f"{src}: workload file not found (check the path)") from None
    except IsADirectoryError:
        raise WorkloadError(f"{src}: is a directory, expected a workload JSON file") from None
    except OSError as e:
        raise WorkloadError(f"{src}: cannot read workload file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise WorkloadError(
            f"{src}: not UTF-8 text at byte {e.start}; save the workload as UTF-8 JSON"
        ) from None
    except json.JSONDecodeError as e:
        raise WorkloadError(
            f"{src}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}"
        ) from None
    except _NonFiniteConstant as e:
        raise WorkloadError(
            f"{src}: invalid JSON: {e} is not a JSON number; use a finite number"
        ) from None
    except RecursionError:
        raise WorkloadError(f"{src}: invalid JSON: nesting too deep") from None
    except ValueError as e:  # numbers Python or RapidJSON cannot hold (1e999, 5000 digits)
        raise WorkloadError(f"{src}: invalid JSON: {e}") from None
    escape = lone_surrogate(text, data)
    if escape is not None:
        raise WorkloadError(
            f"{src}:{line_of(text, escape)}: invalid JSON: the escape {escape} is half of a "
            "UTF-16 surrogate pair, not a character (no file could hold it); fix or remove it"
        )
    return data


def absolute_path(path: str) -> str:
    """Batsim's absolute name: cwd + "/" + path when relative, deliberately not normalised."""
    return path if os.path.isabs(path) else os.getcwd() + "/" + path


def _listing(names: Iterable[str], limit: int = 10) -> str:
    names = list(names)
    text = ", ".join(names[:limit])
    if len(names) > limit:
        text += f", ... ({len(names) - limit} more)"
    return text or "none"


def parse_workload(
    data: Any, *, name: str, path: str, source: str, owned: bool = False,
    scanned: _Scanned | None = None,
) -> Workload:
    """Validate already-parsed JSON `data` as workload `name` (file `source`); `owned`: the
    job objects of `data` may become the jobs' descriptions (nothing else holds `data`);
    `scanned`: the jobs, read from the text by the native loader (`data`'s are then none)."""
    if not isinstance(data, Mapping):
        raise WorkloadError(
            f"{source}: the top level must be a JSON object with 'nb_res', 'profiles' and "
            f"'jobs', got {type_name(data)}"
        )
    for key in ("nb_res", "profiles", "jobs"):
        if key not in data:
            raise WorkloadError(f"{source}: missing mandatory top-level field '{key}'")
    nb_res = data["nb_res"]
    if not is_integer(nb_res) or nb_res <= 0:
        raise WorkloadError(
            f"{source}: top-level field 'nb_res' must be a JSON integer > 0, "
            f"got {type_name(nb_res)} {show(nb_res)}"
        )
    raw_profiles = data["profiles"]
    if not isinstance(raw_profiles, Mapping):
        raise WorkloadError(
            f"{source}: top-level field 'profiles' must be an object mapping profile names "
            f"to profiles, got {type_name(raw_profiles)}"
        )
    raw_jobs = data["jobs"]
    if not isinstance(raw_jobs, list):
        raise WorkloadError(
            f"{source}: top-level field 'jobs' must be an array of jobs, got {type_name(raw_jobs)}"
        )

    base_dir = os.path.dirname(path)
    profiles, only_delays = _parse_profiles(raw_profiles, source, base_dir)
    if scanned is None:
        jobs = parse_jobs(raw_jobs, workload=name, source=source)
        used = _check_jobs(jobs, profiles, source, only_delays)
    else:
        jobs, used, distinct = scanned
        used = _check_jobs(jobs, profiles, source, only_delays, used, distinct)
    if only_delays:  # (no profile references another: every profile kept is used)
        kept = used
    else:
        _check_references(profiles, source)
        kept = _reachable(used, profiles)
    # Keyed by the jobs' own name objects (`used` holds them), file order kept: the run looks
    # each job's profile up, and a key that is the very object is found without comparing
    # the text (f_50k: 7,675 profiles, 50,000 look-ups).
    same = {p: p for p in used}
    return Workload(
        name=name,
        path=path,
        nb_res=nb_res,
        jobs=jobs,
        profiles={same.get(p, p): prof for p, prof in profiles.items() if p in kept},
    )


# DelayProfile's slots (some of them its base's), as the native loader sets them.
_DELAY_SLOTS = tuple(next(c.__dict__[slot] for c in DelayProfile.__mro__ if slot in c.__dict__)
                     for slot in ("name", "ret", "description", "delay"))


def _parse_profiles(
    raw_profiles: Mapping[str, Any], source: str, base_dir: str
) -> tuple[dict[str, Profile], bool]:
    """`parse_profile` of each profile, in order, and whether all are plain delay profiles
    (the native loader's, when built, which leaves the others to `parse_profile`)."""
    native = fast.NATIVE
    delays = None if native is None else native.delay_profiles(raw_profiles, DelayProfile,
                                                                _DELAY_SLOTS)
    if delays is None:
        return {pname: parse_profile(pname, pobj, source=source, base_dir=base_dir)
                for pname, pobj in raw_profiles.items()}, False
    if None not in delays.values():
        return delays, True
    return {pname: parse_profile(pname, raw_profiles[pname], source=source, base_dir=base_dir)
            if prof is None else prof for pname, prof in delays.items()}, False


_PROFILE_OF = attrgetter("profile")
_ID_OF = attrgetter("id")


def _check_jobs(jobs: tuple[Job, ...], profiles: Mapping[str, Profile], source: str,
                only_delays: bool = False, used: set[str] | None = None,
                distinct: bool = False) -> set[str]:
    """Raise the first error in job order; return the names of the profiles the jobs use.

    A workload of tens of thousands of jobs is checked a few C-level passes at a time (distinct
    ids, the distinct profile names defined, none of them `parallel`: `only_delays` says
    that no profile is); only a workload that fails one of them is walked job by job, to name
    the first job at fault. (The native loader gives `used`, and says when the ids are
    `distinct`: increasing integers.)"""
    if used is None:
        used = set(map(_PROFILE_OF, jobs))
    if ((distinct or len(set(map(_ID_OF, jobs))) == len(jobs)) and used.issubset(profiles.keys())
            and (only_delays
                 or not any(isinstance(profiles[p], ParallelProfile) for p in used))):
        return used
    seen: set[str] = set()
    for job in jobs:
        if job.id in seen:
            raise WorkloadError(
                f"{source}: job {job.id}: duplicated job id; every job needs a distinct 'id'"
            )
        seen.add(job.id)
        profile = profiles.get(job.profile)
        if profile is None:
            raise WorkloadError(
                f"{source}: job {job.id}: profile '{job.profile}' is not defined "
                f"(defined: {_listing(profiles)})"
            )
        if isinstance(profile, ParallelProfile) and len(profile.cpu) != job.res:
            raise WorkloadError(
                f"{source}: job {job.id}: res = {job.res} but its parallel profile "
                f"'{profile.name}' has {len(profile.cpu)} cpu values; they must be equal"
            )
    return used


def _references(profile: Profile) -> tuple[str, ...]:
    if isinstance(profile, ComposedProfile):
        return profile.seq
    if isinstance(profile, RecvProfile):
        return tuple(p for p in (profile.on_success, profile.on_failure, profile.on_timeout) if p)
    return ()


def _check_references(profiles: Mapping[str, Profile], source: str) -> None:
    for profile in profiles.values():
        for ref in _references(profile):
            if ref not in profiles:
                raise WorkloadError(
                    f"{source}: profile '{profile.name}': references profile '{ref}', "
                    f"which is not defined (defined: {_listing(profiles)})"
                )


def _reachable(used: set[str], profiles: Mapping[str, Profile]) -> set[str]:
    """The profiles that the jobs use (`used`) and those they reference, recursively."""
    kept: set[str] = set()
    stack = list(used)
    while stack:
        pname = stack.pop()
        if pname in kept:
            continue
        kept.add(pname)
        stack.extend(_references(profiles[pname]))
    return kept


# The jobs the native loader read from a workload's text, the profile names they use, and
# whether their ids are distinct for sure.
_Scanned = tuple[tuple[Job, ...], set[str], bool]


def _read_fast(path: str, name: str) -> tuple[Any, _Scanned | None] | None:
    """The JSON value of workload file `path` decoded by orjson and, when its jobs array has
    the plainest layout (`_cload.scan_jobs`), that array's jobs, read from the text by the
    native loader (the value then has no jobs); None where the reference reader must read it
    (`fast.decode`)."""
    native = fast.NATIVE
    assert native is not None and fast.ORJSON is not None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None  # (read_json says why)
    found = native.scan_jobs(data, name, Job, _JOB_SLOTS, _shape_of)
    if found is None:
        decoded = fast.decode(data)
        return None if decoded is None else (decoded, None)
    start, stop, jobs, used, distinct = found
    decoded = fast.decode(b"".join((data[:start], b"[]", data[stop:])))
    return None if decoded is None else (decoded, (tuple(jobs), used, distinct))


def load_workload(path: str, name: str) -> Workload:
    """Read and validate the workload file `path`, naming it `name` ("w0", "w1", ...).

    Error messages name the file as the user gave it. The cyclic garbage collector is paused
    meanwhile, as `run.build_simulation` pauses it around all the reading: the objects made
    here (up to millions) hold no reference cycles, and each of its passes would scan them.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        read = _read_fast(path, name) if fast.ORJSON is not None else None
        data, scanned = (read_json(path, source=path), None) if read is None else read
        return parse_workload(data, name=name, path=absolute_path(path), source=path,
                              owned=True, scanned=scanned)
    finally:
        if was_enabled:
            gc.enable()
