"""Dynamic jobs: what REGISTER_PROFILE and REGISTER_JOB do (`--enable-dynamic-jobs`).

Batsim parses both as soon as it reads the scheduler's reply (not at their timestamps): the
profile or job exists from then on. A registered job counts as submitted when its message
reaches the server, which then acknowledges it with JOB_SUBMITTED if
`--acknowledge-dynamic-jobs` is set. Anything invalid is the scheduler's mistake.
"""

from __future__ import annotations

from collections.abc import Container, MutableMapping

from batsim_py.decision.decisions import RegisterJob, RegisterProfile
from batsim_py.errors import SchedulerError, WorkloadError
from batsim_py.workload.jobs import parse_job
from batsim_py.workload.model import Job, ParallelProfile, Profile
from batsim_py.workload.profiles import parse_profile


def check_open(enabled: bool, finished: bool, what: str) -> None:
    if not enabled:
        raise SchedulerError(
            f"{what}: dynamic registration is disabled (run with --enable-dynamic-jobs)"
        )
    if finished:
        raise SchedulerError(
            f"{what}: registration is finished (the scheduler sent NOTIFY "
            "registration_finished); send continue_registration first"
        )


def register_profile(
    decision: RegisterProfile, profiles_of: MutableMapping[str, dict[str, Profile]]
) -> Profile:
    where = f"REGISTER_PROFILE {decision.workload_name}!{decision.profile_name}"
    profiles = profiles_of.setdefault(decision.workload_name, {})
    if decision.profile_name in profiles:
        raise SchedulerError(f"{where}: this profile already exists")
    try:
        profile = parse_profile(decision.profile_name, decision.profile, source=where)
    except WorkloadError as exc:
        raise SchedulerError(str(exc)) from None
    profiles[decision.profile_name] = profile
    return profile


def register_job(
    decision: RegisterJob, profiles_of: MutableMapping[str, dict[str, Profile]],
    known: MutableMapping[str, object], static_ids: Container[str] = (),
) -> Job:
    where = f"REGISTER_JOB {decision.job_id}"
    workload, sep, _ = decision.job_id.partition("!")
    if not sep:
        raise SchedulerError(f"{where}: the job id must be 'workload!name'")
    if workload not in profiles_of:
        raise SchedulerError(
            f"{where}: workload '{workload}' does not exist (register a profile in it first)"
        )
    try:
        job = parse_job(decision.job, workload=workload, source=where)
    except WorkloadError as exc:
        raise SchedulerError(str(exc)) from None
    if job.id in known or job.id in static_ids:
        raise SchedulerError(f"{where}: job '{job.id}' already exists")
    profile = profiles_of[workload].get(job.profile)
    if profile is None:
        raise SchedulerError(
            f"{where}: profile '{job.profile}' does not exist in workload '{workload}'"
        )
    if isinstance(profile, ParallelProfile) and len(profile.cpu) != job.res:
        raise SchedulerError(
            f"{where}: res ({job.res}) differs from the size of profile '{profile.name}' "
            f"({len(profile.cpu)})"
        )
    return job
