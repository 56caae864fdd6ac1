"""Typed decisions a decision process returns to the engine (scheduler -> Batsim direction).

Every decision carries the simulated time at which the scheduler took it; a `Reply` also carries
the scheduler's `now` (a `now` above the request's means the scheduler took that long).

Records are slotted dataclasses, immutable by convention but not `frozen`: a frozen
dataclass's `__init__` sets each field through `object.__setattr__`, four times slower, and
hundreds of thousands of these are made per run (they stay hashable: `unsafe_hash`).
`ExecuteJob`, `RejectJob` and `Reply`, made per job, are compiled with the kernel
(decision/hot.py says what that changes) and imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from batsim_py.decision.hot import ExecuteJob as ExecuteJob
from batsim_py.decision.hot import RejectJob as RejectJob
from batsim_py.decision.hot import Reply as Reply


@dataclass(slots=True, unsafe_hash=True)
class AdditionalIOJob:
    """EXECUTE_JOB's `additional_io_job`: an IO profile merged into the job's parallel tasks,
    on its own allocation (batsim_py/sim/io_job.py says how)."""

    profile_name: str
    alloc: tuple[int, ...]  # sorted unique machine ids
    profile: Mapping[str, Any] | None = None  # given: registered under profile_name first


@dataclass(slots=True, unsafe_hash=True)
class KillJob:
    timestamp: float
    job_ids: tuple[str, ...]


@dataclass(slots=True, unsafe_hash=True)
class CallMeLater:
    timestamp: float
    at: float  # the requested wake-up time (the JSON field "timestamp" of its data)


@dataclass(slots=True, unsafe_hash=True)
class SetResourceState:
    timestamp: float
    resources: tuple[int, ...]
    state: int


@dataclass(slots=True, unsafe_hash=True)
class ChangeHostsPState(SetResourceState):
    """Batsim 5's ChangeHostsPStateEvent: with the energy model, a SET_RESOURCE_STATE; without
    it, each host's pstate (its speed) changes at once, busy or not, as Batsim 5 does it
    without its energy plugin."""


@dataclass(slots=True, unsafe_hash=True)
class SetJobMetadata:
    timestamp: float
    job_id: str
    metadata: str


@dataclass(slots=True, unsafe_hash=True)
class ChangeJobState:
    timestamp: float
    job_id: str
    job_state: str


@dataclass(slots=True, unsafe_hash=True)
class RegisterJob:
    timestamp: float
    job_id: str
    job: Mapping[str, Any]


@dataclass(slots=True, unsafe_hash=True)
class RegisterProfile:
    timestamp: float
    workload_name: str
    profile_name: str
    profile: Mapping[str, Any]


@dataclass(slots=True, unsafe_hash=True)
class NotifyDecision:
    timestamp: float
    type: str  # "registration_finished" | "continue_registration"


@dataclass(slots=True, unsafe_hash=True)
class Query:
    timestamp: float
    requests: Mapping[str, Any]


@dataclass(slots=True, unsafe_hash=True)
class ToJobMsg:
    timestamp: float
    job_id: str
    msg: str


Decision = Union[
    ExecuteJob,
    RejectJob,
    KillJob,
    CallMeLater,
    SetResourceState,
    SetJobMetadata,
    ChangeJobState,
    RegisterJob,
    RegisterProfile,
    NotifyDecision,
    Query,
    ToJobMsg,
]
