"""The records a workload is made of: jobs and profiles, as validated from the input files.

They cross every boundary (engine, schedulers, protocol), so they are small immutable records.
Batsim forwards each job's and profile's original JSON object to the scheduler verbatim (key
order and integer/float types preserved): a profile keeps it (`description`); a job read from a
file keeps only how to rebuild it (`JobShape`, shared by the jobs whose objects have the same
keys and number types, and the values of its other keys), because a million such objects
would take most of a large run's memory (750 MB of 1.4 GB for a million jobs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

# How a JobShape rebuilds the value of one key of a job's JSON object.
ID = 0  # the job's full id ("w0!1"), as Batsim rewrites it
FLOAT_SUBTIME = 1  # `subtime` as the float it was
INT_SUBTIME = 2  # `subtime` as the integer it was (exactly a double's value)
FLOAT_WALLTIME = 3
INT_WALLTIME = 4
RES = 5
PROFILE = 6
OTHER = 7  # the next value of the job's own extra values


@dataclass(frozen=True, slots=True)
class JobShape:
    """The layout of the JSON objects of jobs: their keys in order and, for each, where its value
    comes from (the job's fields or its extra values). Shared by every job of that layout."""

    keys: tuple[str, ...]
    codes: tuple[int, ...]  # ID, FLOAT_SUBTIME ... OTHER, one per key

    def build(self, job: Job, extra: tuple[Any, ...]) -> dict[str, Any]:
        """The JSON object of `job` (whose extra values are `extra`), as it was read."""
        obj: dict[str, Any] = {}
        other = 0
        for key, code in zip(self.keys, self.codes, strict=True):
            if code == OTHER:
                obj[key] = extra[other]
                other += 1
            elif code == ID:
                obj[key] = job.id
            elif code == PROFILE:
                obj[key] = job.profile
            elif code == RES:
                obj[key] = job.res
            elif code == INT_SUBTIME:
                obj[key] = int(job.subtime)
            elif code == FLOAT_SUBTIME:
                obj[key] = job.subtime
            elif code == INT_WALLTIME:
                obj[key] = int(job.walltime)
            else:
                obj[key] = job.walltime
        return obj


@dataclass(slots=True, unsafe_hash=True, init=False)
class Job:
    """A job as read (immutable by convention; not `frozen`, whose `__init__` is four times
    slower, for workloads of a million jobs).

    `description` is the job's JSON object, as Batsim forwards it (id rewritten to the full id,
    key order and number types as read). Given as a Mapping, it is kept as is; a job read from
    a file is given, and keeps, only how to rebuild it (`json_form`): `description` then
    rebuilds the object, a new dict at each read (read it once per use).

    `name` is not kept when it is the end of `id` ("w0!12" -> "12", every job read from a
    file): read, it is cut from `id` (55 bytes less per job, 52 MB of a million-job run).
    """

    id: str  # full identifier "workload!name", e.g. "w0!1"
    workload: str
    name: str  # (a property over this slot, which holds None when `id` gives the name)
    subtime: float
    walltime: float  # -1.0 means no walltime
    res: int
    profile: str  # profile name, in the same workload
    # The JSON object (a Mapping), or its JobShape, or (JobShape, values of its OTHER keys).
    json_form: Any = field(compare=False, repr=False)

    def __init__(self, id: str, workload: str, name: str, subtime: float, walltime: float,
                 res: int, profile: str, description: Any = None, *,
                 json_form: Any = None) -> None:
        # (`json_form=` is how dataclasses.replace passes the kept form on.)
        self.id = id
        self.workload = workload
        _NAME_SLOT.__set__(self, None if (len(id) == len(workload) + 1 + len(name)
                                          and id.endswith(name) and id.startswith(workload)
                                          and id[len(workload)] == "!") else name)
        self.subtime = subtime
        self.walltime = walltime
        self.res = res
        self.profile = profile
        self.json_form = description if json_form is None else json_form

    @property
    def description(self) -> Mapping[str, Any]:
        """The job's JSON object (see the class's docstring)."""
        form = self.json_form
        if type(form) is JobShape:
            return form.build(self, ())
        if type(form) is tuple:
            return form[0].build(self, form[1])
        return form  # type: ignore[no-any-return]


_NAME_SLOT: Any = Job.__dict__["name"]  # the slot's descriptor, hidden by the property below
_get_name = _NAME_SLOT.__get__


def _job_name(job: Job) -> str:
    name: str | None = _get_name(job)
    return job.id[len(job.workload) + 1:] if name is None else name


Job.name = property(  # type: ignore[assignment,method-assign,misc]
    _job_name, _NAME_SLOT.__set__, doc="The job's name in its workload (`id` without "
    "'workload!').")


def jobs_read(ids: Iterable[str], workload: str, subtimes: Iterable[float],
              walltimes: Iterable[float], sizes: Iterable[int], profiles: Iterable[str],
              forms: Iterable[Any]) -> list[Job]:
    """Jobs read from a file whose ids are all `workload + "!" + name`: what `Job(id,
    workload, name, ...)` makes for each (its name slot then holds None), made three times
    faster for the tens of thousands of jobs of a large workload by setting the slots of a
    new object directly instead of calling `__init__` (the call with its keyword-only
    argument and the name test cost more than the eight stores)."""
    new = object.__new__
    set_name = _NAME_SLOT.__set__
    out: list[Job] = []
    append = out.append
    for job_id, subtime, walltime, res, profile, form in zip(
            ids, subtimes, walltimes, sizes, profiles, forms, strict=True):
        job = new(Job)
        job.id = job_id
        job.workload = workload
        set_name(job, None)
        job.subtime = subtime
        job.walltime = walltime
        job.res = res
        job.profile = profile
        job.json_form = form
        append(job)
    return out


@dataclass(frozen=True, slots=True)
class Profile:
    """Fields every profile has. Subclasses add their type's fields."""

    type: ClassVar[str] = ""
    name: str
    ret: int
    description: Mapping[str, Any] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class DelayProfile(Profile):
    type: ClassVar[str] = "delay"
    delay: float


@dataclass(frozen=True, slots=True)
class ComposedProfile(Profile):
    type: ClassVar[str] = "composed"
    seq: tuple[str, ...]
    repeat: int = 1


@dataclass(frozen=True, slots=True)
class ParallelProfile(Profile):
    type: ClassVar[str] = "parallel"
    cpu: tuple[float, ...]
    com: tuple[float, ...]  # row-major k x k


@dataclass(frozen=True, slots=True)
class ParallelHomogeneousProfile(Profile):
    type: ClassVar[str] = "parallel_homogeneous"
    cpu: float
    com: float


@dataclass(frozen=True, slots=True)
class ParallelHomogeneousTotalProfile(Profile):
    type: ClassVar[str] = "parallel_homogeneous_total"
    cpu: float
    com: float


@dataclass(frozen=True, slots=True)
class ParallelHomogeneousPFSProfile(Profile):
    type: ClassVar[str] = "parallel_homogeneous_pfs"
    bytes_to_read: float
    bytes_to_write: float
    storage: str = "pfs"


@dataclass(frozen=True, slots=True)
class DataStagingProfile(Profile):
    type: ClassVar[str] = "data_staging"
    nb_bytes: float
    source: str  # JSON field "from"
    destination: str  # JSON field "to"


@dataclass(frozen=True, slots=True)
class TraceProfile(Profile):
    """`usage_trace` and `smpi`: a file listing one per-rank trace file per line."""

    type: ClassVar[str] = "usage_trace"
    trace: str  # path as resolved against the workload file's directory
    kind: str = "usage_trace"  # or "smpi"


@dataclass(frozen=True, slots=True)
class SendProfile(Profile):
    type: ClassVar[str] = "send"
    msg: Mapping[str, Any]
    sleeptime: float = 1e-7


@dataclass(frozen=True, slots=True)
class RecvProfile(Profile):
    type: ClassVar[str] = "recv"
    regex: str = ".*"
    on_success: str = ""
    on_failure: str = ""
    on_timeout: str = ""
    polltime: float = 0.005


@dataclass(frozen=True, slots=True)
class Workload:
    name: str  # "w0", "w1", ...
    path: str  # absolute path as Batsim reports it (cwd + "/" + given path when relative)
    nb_res: int
    jobs: tuple[Job, ...]  # file order
    profiles: Mapping[str, Profile]  # only profiles reachable from a job (Batsim drops the others)
