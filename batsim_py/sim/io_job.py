"""EXECUTE_JOB's `additional_io_job`: an IO profile merged into a job's parallel tasks.

Batsim 4.2.1 (src/protocol.cpp, jobs_execution.cpp, task_execution.cpp) reads
`{"profile_name", ["profile"], "alloc"}`; a given profile is registered under that name in the
job's workload (a name that exists already is an error), and the named profile must then exist.
Each leaf task of the job gets an IO profile: the IO profile itself for a job whose profile is
not a sequence; for a sequence (`composed`), the IO profile must be a sequence of the same
length and its i-th profile goes with the job's i-th (repetitions reuse them). When a leaf runs
a parallel task, the IO profile's computation vector and communication matrix (built for as
many hosts as the IO allocation has machines) are merged with the job's over the union of both
allocations, in machine id order: an amount is the job's, the IO's, or their sum where a
machine (or a pair of machines) is in both. The merged task then runs on the union, as one L07
action. Leaves that are not parallel tasks (delays, ...) ignore their IO profile.

Where Batsim's code has undefined behaviour, batsim-py stops with an error instead: a job leaf
with a storage profile (`parallel_homogeneous_pfs`, `data_staging`: Batsim's FIXME, its
matrices do not match the allocation), an IO profile that is not `parallel`,
`parallel_homogeneous` or `parallel_homogeneous_total`, or a sequence paired with a
non-sequence below the top level. An IO matrix with no communication counts as zeros (Batsim
reads past an empty vector there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from batsim_py.decision.decisions import AdditionalIOJob
from batsim_py.errors import SchedulerError, WorkloadError
from batsim_py.workload.model import (
    ComposedProfile,
    ParallelHomogeneousProfile,
    ParallelHomogeneousTotalProfile,
    ParallelProfile,
    Profile,
)
from batsim_py.workload.profiles import parse_profile

IO_PROFILES = (ParallelProfile, ParallelHomogeneousProfile, ParallelHomogeneousTotalProfile)


def resolve(io: AdditionalIOJob, job_id: str, job_profile: Profile,
            profiles: dict[str, Profile], nb_machines: int) -> Profile:
    """The IO profile of an EXECUTE_JOB (registering it when given), checked as Batsim does."""
    where = f"EXECUTE_JOB of job '{job_id}': additional_io_job"
    if io.profile is not None:
        if io.profile_name in profiles:
            raise SchedulerError(
                f"{where}: profile '{io.profile_name}' already exists (give a new name, or "
                "omit 'profile' to use the existing one)")
        try:
            profiles[io.profile_name] = parse_profile(io.profile_name, io.profile, source=where)
        except WorkloadError as exc:
            raise SchedulerError(str(exc)) from None
    profile = profiles.get(io.profile_name)
    if profile is None:
        raise SchedulerError(f"{where}: profile '{io.profile_name}' does not exist (give its "
                             "description in 'profile')")
    if isinstance(profile, ComposedProfile):
        _check_pair(where, job_profile, profile)
    for m in io.alloc:
        if not 0 <= m < nb_machines:
            raise SchedulerError(f"{where}: machine {m} of its alloc does not exist "
                                 f"(machines are 0-{nb_machines - 1})")
    return profile


def _check_pair(where: str, job_profile: Profile, io_profile: Profile) -> None:
    if not isinstance(job_profile, ComposedProfile):
        raise SchedulerError(
            f"{where}: the IO profile '{io_profile.name}' is a sequence (composed) but the "
            f"job's profile '{job_profile.name}' is '{job_profile.type}': they must be "
            "compatible to be merged")
    assert isinstance(io_profile, ComposedProfile)
    if len(io_profile.seq) != len(job_profile.seq):
        raise SchedulerError(
            f"{where}: IO profile sequence size ({len(io_profile.seq)}) and job profile "
            f"sequence size ({len(job_profile.seq)}) should be the same")


def sub_io(io: Profile | None, index: int, job_sub: Profile,
           profiles: Mapping[str, Profile], job_id: str) -> Profile | None:
    """The IO profile paired with the `index`-th profile of a job's sequence."""
    if io is None:
        return None
    if not isinstance(io, ComposedProfile):
        raise SchedulerError(
            f"job {job_id}: additional_io_job: profile '{io.name}' is not a sequence but is "
            "paired with a sequence of the job's profile; give a composed IO profile here")
    sub = profiles.get(io.seq[index])
    if sub is None:
        raise SchedulerError(f"job {job_id}: additional_io_job: profile '{io.seq[index]}' of "
                             f"sequence '{io.name}' does not exist")
    if isinstance(job_sub, ComposedProfile):
        _check_pair(f"job {job_id}: additional_io_job", job_sub, sub)
    return sub


def merged_task(sim: Any, run: Any, job_machines: Sequence[int], job_flops: np.ndarray,
                job_matrix: np.ndarray | None, io: Profile) -> tuple[list[int], np.ndarray,
                                                                   np.ndarray | None]:
    """Machines, flops and bytes of the job's parallel task merged with its IO profile's."""
    io_alloc = run.io_alloc
    n_io = len(io_alloc)
    where = f"job {run.job.id}: additional_io_job profile '{io.name}'"
    if not isinstance(io, IO_PROFILES):
        raise SchedulerError(
            f"{where} is '{io.type}': an IO profile must be parallel, parallel_homogeneous or "
            "parallel_homogeneous_total")
    if isinstance(io, ParallelProfile):
        if len(io.cpu) != n_io:
            raise SchedulerError(
                f"{where} is for {len(io.cpu)} hosts but the IO alloc has {n_io} machines")
        io_flops = np.array(io.cpu, dtype=np.float64)
        io_matrix = np.array(io.com, dtype=np.float64).reshape(n_io, n_io)
    else:
        cpu, com = io.cpu, io.com
        if isinstance(io, ParallelHomogeneousTotalProfile):
            cpu, com = cpu / n_io, com / n_io
        io_flops = np.full(n_io, float(cpu))
        io_matrix = np.full((n_io, n_io), float(com)) if com > 0 else np.zeros((n_io, n_io))
        np.fill_diagonal(io_matrix, 0.0)
    union = sorted(set(job_machines) | set(io_alloc))
    position = {m: i for i, m in enumerate(union)}
    j = np.array([position[m] for m in job_machines], dtype=np.intp)
    k = np.array([position[m] for m in io_alloc], dtype=np.intp)
    n = len(union)
    flops = np.zeros(n)
    flops[j] += job_flops
    flops[k] += io_flops
    matrix = np.zeros((n, n))
    if job_matrix is not None:
        matrix[np.ix_(j, j)] += job_matrix
    matrix[np.ix_(k, k)] += io_matrix
    for i, m in enumerate(union):
        if flops[i] > 1e-10 and m >= sim.nb_compute:
            raise SchedulerError(
                f"job {run.job.id}: the merged job and IO task computes {flops[i]:g} flops on "
                f"machine {m}, which is not a compute machine")
    return union, flops, (matrix if (matrix > 0).any() else None)
