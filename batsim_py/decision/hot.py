"""The records made once or twice per job, compiled with the kernel (batsim_py/native.py).

`JobSubmitted` and `JobCompleted` (events), `ExecuteJob`, `RejectJob` and `Reply`
(decisions) are defined here and imported by `batsim_py.decision.events` and
`batsim_py.decision.decisions`, where users find them with the other records (same classes).
They are six of the objects a run makes per job; as interpreted dataclasses each cost an
interpreted `__init__` call, and each read of a field from compiled code a generic attribute
look-up. Compiled, they are built and read natively.

What compiling changes for a user (docs/schedulers.md): the records cannot be subclassed by
interpreted classes, and a `float` field holds a float (an int given becomes a float, the
value the protocol carries anyway). They stay slotted dataclasses (fields, `replace`, equality,
hashing, repr), and copy and pickle (`__reduce__`). Their `__init__` is written out: the one
`dataclass` would write stays interpreted under mypyc. It takes any sequence where a tuple is
kept (`Reply.decisions`, `ExecuteJob.mapping`) and keeps a tuple, as compiled attributes
check their types.

The other records stay in events.py and decisions.py, interpreted: they are rare per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from batsim_py.workload.model import Job, Profile

if TYPE_CHECKING:
    from batsim_py.decision.decisions import AdditionalIOJob, Decision


def _tuple(items: Sequence[Any]) -> tuple[Any, ...]:
    return items if type(items) is tuple else tuple(items)


@dataclass(slots=True, unsafe_hash=True, init=False)
class JobSubmitted:
    timestamp: float
    job: Job
    profile: Profile | None = None  # with --forward-profiles-on-submission

    def __init__(self, timestamp: float, job: Job, profile: Profile | None = None) -> None:
        self.timestamp = timestamp
        self.job = job
        self.profile = profile

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (JobSubmitted, (self.timestamp, self.job, self.profile))

    @property
    def job_id(self) -> str:
        return self.job.id


@dataclass(slots=True, unsafe_hash=True, init=False)
class JobCompleted:
    timestamp: float
    job_id: str
    job_state: str
    return_code: int
    alloc: Sequence[int]  # as EXECUTE_JOB gave it (a tuple, or a range when contiguous)

    def __init__(self, timestamp: float, job_id: str, job_state: str, return_code: int,
                 alloc: Sequence[int]) -> None:
        self.timestamp = timestamp
        self.job_id = job_id
        self.job_state = job_state
        self.return_code = return_code
        self.alloc = alloc

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (JobCompleted, (self.timestamp, self.job_id, self.job_state, self.return_code,
                               self.alloc))


@dataclass(slots=True, unsafe_hash=True, init=False)
class ExecuteJob:
    timestamp: float
    job_id: str
    alloc: Sequence[int]  # sorted unique machine ids (a tuple, or a range when contiguous)
    mapping: tuple[int, ...] | None = None  # executor i -> index into alloc
    storage_mapping: Mapping[str, int] | None = None
    additional_io_job: AdditionalIOJob | None = None
    # batprotocol's profile_allocation_override: (profile name, machines, executor mapping)
    # for the tasks of that profile instead of alloc/mapping (sim/jobs.py `placement`).
    profile_overrides: tuple[tuple[str, tuple[int, ...], tuple[int, ...] | None], ...] | None \
        = None

    def __init__(self, timestamp: float, job_id: str, alloc: Sequence[int],
                 mapping: Sequence[int] | None = None,
                 storage_mapping: Mapping[str, int] | None = None,
                 additional_io_job: AdditionalIOJob | None = None,
                 profile_overrides: Sequence[tuple[str, tuple[int, ...], tuple[int, ...] | None]]
                 | None = None) -> None:
        self.timestamp = timestamp
        self.job_id = job_id
        self.alloc = alloc
        self.mapping = None if mapping is None else _tuple(mapping)
        self.storage_mapping = storage_mapping
        self.additional_io_job = additional_io_job
        self.profile_overrides = None if profile_overrides is None else _tuple(profile_overrides)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (ExecuteJob, (self.timestamp, self.job_id, self.alloc, self.mapping,
                             self.storage_mapping, self.additional_io_job,
                             self.profile_overrides))


@dataclass(slots=True, unsafe_hash=True, init=False)
class RejectJob:
    timestamp: float
    job_id: str

    def __init__(self, timestamp: float, job_id: str) -> None:
        self.timestamp = timestamp
        self.job_id = job_id

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RejectJob, (self.timestamp, self.job_id))


@dataclass(slots=True, unsafe_hash=True, init=False)
class Reply:
    now: float
    decisions: tuple[Decision, ...] = field(default_factory=tuple)

    def __init__(self, now: float, decisions: Sequence[Decision] = ()) -> None:
        self.now = now
        self.decisions = _tuple(decisions)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (Reply, (self.now, self.decisions))
