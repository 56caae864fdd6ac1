"""The records a workload is made of: jobs and profiles, as validated from the input files.

They cross every boundary (engine, schedulers, protocol), so they are small immutable records. The
original JSON object of each job and profile is kept (`description`) because Batsim forwards it
to the scheduler verbatim (key order and integer/float types preserved).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(slots=True, unsafe_hash=True)
class Job:
    """A job as read (immutable by convention; not `frozen`, whose `__init__` is four times
    slower, for workloads of a million jobs)."""

    id: str  # full identifier "workload!name", e.g. "w0!1"
    workload: str
    name: str
    subtime: float
    walltime: float  # -1.0 means no walltime
    res: int
    profile: str  # profile name, in the same workload
    description: Mapping[str, Any] = field(compare=False, repr=False)


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
