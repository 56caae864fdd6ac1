"""Typed events the engine hands to a decision process (Batsim -> scheduler direction).

Transport-free: the ZeroMQ peer turns them into Batsim JSON in `protocol/`, in-process
schedulers read them directly. Field names follow the Batsim protocol.

Records are slotted dataclasses, immutable by convention but not `frozen`: a frozen
dataclass's `__init__` sets each field through `object.__setattr__`, four times slower, and
hundreds of thousands of these are made per run (they stay hashable: `unsafe_hash`).
`JobSubmitted` and `JobCompleted`, made per job, are compiled with the kernel (decision/hot.py
says what that changes) and imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from batsim_py.decision.hot import JobCompleted as JobCompleted
from batsim_py.decision.hot import JobSubmitted as JobSubmitted
from batsim_py.workload.model import Profile


@dataclass(slots=True, unsafe_hash=True)
class Resource:
    id: int
    name: str
    state: str
    properties: Mapping[str, str]
    zone_properties: Mapping[str, str]


@dataclass(slots=True, unsafe_hash=True)
class SimulationBegins:
    timestamp: float
    nb_resources: int
    nb_compute_resources: int
    nb_storage_resources: int
    allow_compute_sharing: bool
    allow_storage_sharing: bool
    config: Mapping[str, Any]
    compute_resources: tuple[Resource, ...]
    storage_resources: tuple[Resource, ...]
    workloads: Mapping[str, str]
    profiles: Mapping[str, Mapping[str, Profile]]


@dataclass(slots=True, unsafe_hash=True)
class ProgressNode:
    """Progress of a killed job's profile: a leaf has `progress`, a sequence the current task."""

    profile_name: str
    progress: float | None = None
    current_task_index: int | None = None
    current_task: ProgressNode | None = None


@dataclass(slots=True, unsafe_hash=True)
class JobKilled:
    timestamp: float
    job_ids: tuple[str, ...]
    job_progress: Mapping[str, ProgressNode] = field(default_factory=dict)


@dataclass(slots=True, unsafe_hash=True)
class ResourceStateChanged:
    timestamp: float
    resources: tuple[int, ...]
    state: str


@dataclass(slots=True, unsafe_hash=True)
class RequestedCall:
    timestamp: float


@dataclass(slots=True, unsafe_hash=True)
class Notify:
    """NOTIFY events: `no_more_static_job_to_submit`, `no_more_external_event_to_occur`,
    `event_machine_(un)available` (with resources) and generic external events (with data)."""

    timestamp: float
    type: str
    resources: tuple[int, ...] | None = None
    data: Mapping[str, Any] | None = None


@dataclass(slots=True, unsafe_hash=True)
class Answer:
    timestamp: float
    consumed_energy: float


@dataclass(slots=True, unsafe_hash=True)
class FromJobMsg:
    timestamp: float
    job_id: str
    msg: Mapping[str, Any]


@dataclass(slots=True, unsafe_hash=True)
class SimulationEnds:
    timestamp: float


Event = Union[
    SimulationBegins,
    JobSubmitted,
    JobCompleted,
    JobKilled,
    ResourceStateChanged,
    RequestedCall,
    Notify,
    Answer,
    FromJobMsg,
    SimulationEnds,
]
