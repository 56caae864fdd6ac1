"""A job's life once the scheduler started it: its profile runs on its allocation, the walltime
races it, and a kill can stop it with a progress report.

One generator per running job, reading like Batsim's job executor: note the start, mark the
machines computing, execute the profile (a sequence shares one remaining-walltime counter),
mark the machines idle, tell the server. Return codes follow Batsim: 0 success, >0 the
profile's `ret`, -1 walltime reached (or killed while sleeping), -2 killed while a parallel
task was running.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from batsim_py.decision.events import ProgressNode
from batsim_py.errors import NotSupportedError, SchedulerError, WorkloadError
from batsim_py.sharing.ptask import AmountOverflow
from batsim_py.sim import io_job, job_messages
from batsim_py.sim.engine import EXEC, GET_FROM, PUT, PUT_TO, SLEEP, SPAWN, TIMEOUT
from batsim_py.sim.usage_trace import rank_traces
from batsim_py.workload.model import (
    ComposedProfile,
    DataStagingProfile,
    DelayProfile,
    Job,
    ParallelHomogeneousPFSProfile,
    ParallelHomogeneousProfile,
    ParallelHomogeneousTotalProfile,
    ParallelProfile,
    Profile,
    RecvProfile,
    SendProfile,
    TraceProfile,
)

if TYPE_CHECKING:  # (simulation.py imports this module; compiled together, typed natively)
    from batsim_py.sim.simulation import Simulation

PTASK_PROFILES = (
    ParallelProfile,
    ParallelHomogeneousProfile,
    ParallelHomogeneousTotalProfile,
    ParallelHomogeneousPFSProfile,
    DataStagingProfile,
)

STATE_OF_RETURN_CODE = {
    0: "COMPLETED_SUCCESSFULLY",
    -1: "COMPLETED_WALLTIME_REACHED",
    -2: "COMPLETED_KILLED",
}


def final_state(return_code: int) -> str:
    if return_code > 0:
        return "COMPLETED_FAILED"
    return STATE_OF_RETURN_CODE[return_code]


# Shared by the jobs that have no ranks (never written to). (Final: compiled, a C static.)
_NO_RANKS: Final[dict[int, Any]] = {}


class JobRun:
    """Mutable record of one job in the simulation (the static facts are in `job`)."""

    __slots__ = (
        "job", "profile", "state", "starting_time", "end_time", "alloc", "mapping",
        "return_code", "metadata", "actor", "kill_requested", "frames", "host", "reported",
        "abandoned", "energy", "storage_mapping", "ranks", "io_profile", "io_alloc", "inbox",
        "overrides",
    )

    def __init__(self, job: Job, profile: Profile) -> None:
        self.job = job
        self.profile = profile
        self.state = "SUBMITTED"
        self.starting_time = -1.0
        self.end_time = -1.0  # clock when it finished or was killed
        self.alloc: Sequence[int] = ()  # as EXECUTE_JOB gave it: a tuple or a range
        self.mapping: tuple[int, ...] | None = None
        self.return_code = -1
        self.metadata = ""
        self.actor: Any = None
        self.kill_requested = False
        self.reported = False
        # Tasks left running when their walltime was reached (a list once there is one).
        self.abandoned: list[Any] | tuple[()] = ()
        self.energy: Any = None  # joules of its machines at start, then consumed (with -E)
        self.storage_mapping: Mapping[str, int] | None = None
        self.ranks: dict[int, Any] = _NO_RANKS  # usage_trace rank actors still running
        self.io_profile: Profile | None = None  # EXECUTE_JOB's additional_io_job (io_job.py)
        self.io_alloc: tuple[int, ...] = ()
        self.inbox: Any = None  # TO_JOB_MSG strings not read yet by a recv profile (a deque)
        # profile name -> (machines, executor mapping) replacing alloc/mapping for its tasks
        # (batprotocol's profile_allocation_override), or None
        self.overrides: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None]] | None = None
        # Execution stack for progress reports: [profile, leaf start or task index] per level.
        self.frames: list[list[Any]] = []
        self.host = ""

    def progress(self, now: float, engine: Any) -> ProgressNode:
        """Batsim's progress tree of the running profile (JOB_KILLED `job_progress`)."""
        if not self.frames:
            return ProgressNode(profile_name=self.profile.name, progress=0.0)
        return _progress(self.frames, 0, now, engine, self.actor)


def _progress(
    frames: list[list[Any]], level: int, now: float, engine: Any, actor: Any
) -> ProgressNode:
    """The progress tree of `frames[level:]`, built from the innermost level outwards (a loop,
    not a recursion: composed profiles may nest thousands deep)."""
    inner: ProgressNode | None = None
    levels = frames[level:]
    levels.reverse()
    for frame in levels:
        profile, info = frame[0], frame[1]
        if isinstance(profile, (ComposedProfile, SendProfile, RecvProfile)):
            if inner is None:
                inner = ProgressNode(profile_name=profile.name, current_task_index=info)
            else:
                inner = ProgressNode(profile_name=profile.name, current_task_index=info,
                                     current_task=inner)
        else:
            inner = _leaf_progress(profile, info, now, engine, actor)
    assert inner is not None
    return inner


def _leaf_progress(profile: Any, info: Any, now: float, engine: Any, actor: Any) -> ProgressNode:
    if isinstance(profile, DelayProfile):
        return ProgressNode(profile_name=profile.name, progress=(now - info) / profile.delay)
    if isinstance(profile, PTASK_PROFILES) and info:
        return ProgressNode(profile_name=profile.name, progress=1.0 - engine.task_remains(actor))
    if isinstance(profile, TraceProfile):  # Batsim does not report a trace's progress
        return ProgressNode(profile_name=profile.name, current_task_index=-1)
    return ProgressNode(profile_name=profile.name, progress=0.0)


class Walltime:
    """The remaining walltime shared by every task of a job (-1: none)."""

    __slots__ = ("remaining",)

    def __init__(self, walltime: float) -> None:
        self.remaining = walltime


def delay_race(delay: float, remaining: float) -> tuple[float, bool]:
    """A delay against the walltime left (-1: none): how long it sleeps, and whether the
    walltime is reached first (a delay equal to it counts as reached, as in Batsim)."""
    if remaining < 0 or delay < remaining:
        return delay, False
    return remaining, True


def execute_profile(
    sim: Simulation, run: JobRun, profile: Profile, profiles: Mapping[str, Profile],
    wall: Walltime,
    io: Profile | None = None,
) -> Generator[tuple, Any, int]:
    """Run one profile to its end; return its Batsim return code. `io`: the IO profile merged
    into its parallel tasks (additional_io_job, see io_job.py).

    Composed profiles are walked with an explicit stack, not by recursion: a chain of thousands
    of nested composed profiles must not exhaust Python's stack, and a profile that contains
    itself is found the moment it is entered (a set of the composed profiles being run)."""
    if not isinstance(profile, ComposedProfile):
        return (yield from _execute_leaf(sim, run, profile, profiles, wall, io))
    levels: list[list[Any]] = []  # per composed level: [profile, index of its task, its io]
    active: set[int] = set()  # id() of the composed profiles on the stack
    child: Profile = profile
    child_io = io
    while True:
        if isinstance(child, ComposedProfile):
            if id(child) in active:
                raise WorkloadError(_cycle_message(run, child))
            active.add(id(child))
            run.frames.append([child, 0])
            levels.append([child, -1, child_io])
            ret = 0
        else:
            ret = yield from _execute_leaf(sim, run, child, profiles, wall, child_io)
        # Find the next task to run, closing the levels that are over.
        while True:
            level = levels[-1]
            composed: ComposedProfile = level[0]
            index = level[1] + 1
            if ret == 0 and index < len(composed.seq) * composed.repeat:
                level[1] = index
                run.frames[-1][1] = index
                i = index % len(composed.seq)
                child = profiles[composed.seq[i]]
                level_io = level[2]
                child_io = None if level_io is None else io_job.sub_io(
                    level_io, i, child, profiles, run.job.id)
                break
            if ret == 0:
                ret = composed.ret
            run.frames.pop()
            levels.pop()
            active.discard(id(composed))
            if not levels:
                return ret


def _cycle_message(run: JobRun, profile: Profile) -> str:
    names = [f[0].name for f in run.frames]
    start = next(i for i, f in enumerate(run.frames) if f[0] is profile)
    cycle = [*names[start:], profile.name]
    if len(cycle) > 8:
        cycle = [*cycle[:3], f"... {len(cycle) - 6} more ...", *cycle[-3:]]
    return (
        f"job {run.job.id}: composed profile '{profile.name}' contains itself "
        f"({' -> '.join(cycle)}); break the cycle in the workload"
    )


def _execute_leaf(
    sim: Simulation, run: JobRun, profile: Profile, profiles: Mapping[str, Profile],
    wall: Walltime,
    io: Profile | None,
) -> Generator[tuple, Any, int]:
    """Run a profile that is not composed; return its Batsim return code."""
    frame = [profile, 0]
    run.frames.append(frame)
    if isinstance(profile, DelayProfile):
        frame[1] = sim.engine.now
        remaining = wall.remaining
        seconds, reached = delay_race(profile.delay, remaining)
        yield (SLEEP, seconds)
        run.frames.pop()
        if reached:
            wall.remaining = 0.0
            return -1
        if remaining > 0:
            wall.remaining = remaining - seconds
        return profile.ret
    if isinstance(profile, PTASK_PROFILES):
        remaining = wall.remaining
        frame[1] = True  # in a task: its progress is read from the engine on a kill
        start = sim.engine.now
        # The task itself is built when the engine starts it (see Engine._start_task).
        result, task = yield (EXEC, lambda: ptask_of(sim, run, profile, io), remaining)  # noqa: B023
        if remaining >= 0:
            wall.remaining = remaining - (sim.engine.now - start)
        run.frames.pop()
        if result == "timeout":
            if not run.abandoned:
                run.abandoned = []
            run.abandoned.append(task)  # still running until Batsim forgets the job
            return -1
        if result == "cancelled":
            return -2
        return profile.ret
    if isinstance(profile, TraceProfile) and profile.kind == "usage_trace":
        ret = yield from execute_usage_trace(sim, run, profile, wall)
        run.frames.pop()
        return ret
    if isinstance(profile, (SendProfile, RecvProfile)):
        frame[1] = -1  # no sub-task (yet): Batsim's current_task_index
        ret = yield from job_messages.execute(sim, run, profile, profiles, wall, execute_profile)
        run.frames.pop()
        return ret
    raise NotSupportedError(
        f"job {run.job.id}: profile '{profile.name}' of type "
        f"'{getattr(profile, 'kind', profile.type)}' is not yet "
        "supported by batsim-py (supported: delay, composed, parallel, parallel_homogeneous, "
        "parallel_homogeneous_total, parallel_homogeneous_pfs, data_staging, usage_trace, "
        "send, recv)"
    )


def execute_usage_trace(
    sim: Simulation, run: JobRun, profile: TraceProfile, wall: Walltime
) -> Generator[tuple, Any, int]:
    """Replay one trace per rank, each rank an actor on its host (§4.5), as Batsim does: the
    job waits for every rank's 4-byte "done" message, within the remaining walltime, and kills
    the ranks still running when the walltime is reached."""
    traces = rank_traces(profile)
    nb_ranks = len(traces)
    mapping = run.job.description.get("smpi_ranks_to_hosts_mapping")
    if mapping is None:
        mapping = [rank % run.job.res for rank in range(nb_ranks)]  # round robin
    elif len(mapping) != nb_ranks:
        raise WorkloadError(
            f"job {run.job.id}: smpi_ranks_to_hosts_mapping has {len(mapping)} entries but "
            f"profile '{profile.name}' has {nb_ranks} ranks"
        )
    alloc, executors = placement(run, profile)
    hosts = [sim.hosts[alloc[i]] for i in executors]
    box = f"{run.job.id}_smpi_termination"
    run.ranks = {}
    for rank in range(nb_ranks):
        host = hosts[mapping[rank]]
        actor = yield (SPAWN, rank_process(sim, run, traces[rank], rank, host, box),
                       f"{run.job.id}_{rank}", host)
        run.ranks[rank] = actor
    engine = sim.engine
    remaining = wall.remaining
    while run.ranks:
        start = engine.now
        done: Any = yield (GET_FROM, box, remaining)  # a rank, or TIMEOUT (a string)
        if done == TIMEOUT:
            for actor in run.ranks.values():
                engine.kill(actor)
            run.ranks.clear()
            engine.drop_mailbox(box)
            return -1
        del run.ranks[done]
        if remaining >= 0:
            remaining = remaining - (engine.now - start)
            wall.remaining = remaining
    engine.drop_mailbox(box)
    return profile.ret


def rank_process(
    sim: Simulation, run: JobRun, lines: Sequence[tuple[float, float]], rank: int, host: str,
    box: str,
) -> Generator[tuple, Any, None]:
    """One rank: each `m_usage u f` line uses max(round(u x cores), 1) cores of its host, each
    computing f flops; then it tells the job it is done."""
    network = sim.engine.network
    cores = sim.machines_by_host[host].host.cores
    for usage, flops in lines:
        k = max(int(usage * cores + 0.5), 1)  # C round(): halves away from zero
        yield (EXEC, lambda k=k, flops=flops: network.row([host] * k, [flops] * k, None), -1)
    yield (PUT_TO, rank, sim.cost_between(host, run.host, 4.0), box)


def placement(run: JobRun, profile: Profile) -> tuple[Sequence[int], Sequence[int]]:
    """Where `profile`'s executors run: machines and executor i -> index into them. The job's
    allocation, unless its ExecuteJobEvent overrides this profile's (Batsim 5 looks the task's
    profile up in profile_allocation_override the same way, src/jobs_execution.cpp)."""
    alloc: Sequence[int] = run.alloc
    mapping: Sequence[int] | None = run.mapping
    overrides = run.overrides
    if overrides is not None:
        found = overrides.get(profile.name)
        if found is not None:
            alloc, mapping = found
    return alloc, (mapping if mapping is not None else range(len(alloc)))


def ptask_of(sim: Simulation, run: JobRun, profile: Profile, io: Profile | None = None) -> Any:
    """The parallel task a profile runs on the job's executors (batsim-semantics §4.3), merged
    with the IO profile `io` if the job has an additional_io_job."""
    if io is not None and isinstance(profile, (DataStagingProfile, ParallelHomogeneousPFSProfile)):
        raise SchedulerError(
            f"job {run.job.id}: additional_io_job cannot be merged into profile "
            f"'{profile.name}' of type {profile.type} (Batsim 4.2.1 cannot either: its "
            "matrices do not match the allocation); merge the IO into the profile instead")
    alloc, mapping = placement(run, profile)
    machines = [alloc[i] for i in mapping]
    n = len(machines)
    if isinstance(profile, DataStagingProfile):
        # Between two storage machines; the job's own machines take no part.
        src = storage_machine(sim, run, profile.source, required=True)
        dst = storage_machine(sim, run, profile.destination, required=True)
        matrix = None
        if profile.nb_bytes > 0:
            matrix = np.array([[0.0, profile.nb_bytes], [0.0, 0.0]])
        return _row(sim, run, profile, [sim.hosts[src], sim.hosts[dst]], [0.0, 0.0], matrix)
    if isinstance(profile, ParallelHomogeneousPFSProfile):
        # The executors read from / write to one storage machine, appended last.
        storage = storage_machine(sim, run, profile.storage, required=False)
        hosts = [sim.hosts[m] for m in machines] + [sim.hosts[storage]]
        matrix = None
        if profile.bytes_to_read > 0 or profile.bytes_to_write > 0:
            matrix = np.zeros((n + 1, n + 1))
            matrix[:n, n] = profile.bytes_to_write
            matrix[n, :n] = profile.bytes_to_read
        return _row(sim, run, profile, hosts, np.zeros(n + 1), matrix)
    if isinstance(profile, ParallelProfile):
        k = len(profile.cpu)
        if n != k:
            raise SchedulerError(
                f"job {run.job.id}: profile '{profile.name}' needs {k} executors but the "
                f"allocation gives {n}"
            )
        flops = np.array(profile.cpu, dtype=np.float64)
        com = np.array(profile.com, dtype=np.float64).reshape(k, k)
        matrix = com if (com > 0).any() else None
    else:
        assert isinstance(profile, (ParallelHomogeneousProfile, ParallelHomogeneousTotalProfile))
        cpu, comm = profile.cpu, profile.com
        if isinstance(profile, ParallelHomogeneousTotalProfile):
            cpu, comm = cpu / n, comm / n
        flops = np.full(n, float(cpu))
        matrix = None
        if comm > 0:
            matrix = np.full((n, n), float(comm))
            np.fill_diagonal(matrix, 0.0)
    for i, m in enumerate(machines):
        if flops[i] > 1e-10 and m >= sim.nb_compute:
            raise SchedulerError(
                f"job {run.job.id}: executor {i} computes on machine {m}, which is not a "
                "compute machine"
            )
    if io is not None:
        machines, flops, matrix = io_job.merged_task(sim, run, machines, flops, matrix, io)
    hosts = [sim.hosts[m] for m in machines]
    return _row(sim, run, profile, hosts, flops, matrix)


def _row(sim: Simulation, run: JobRun, profile: Profile, hosts: list, flops: Any,
         matrix: Any) -> Any:
    try:
        return sim.engine.network.row(hosts, flops, matrix)
    except AmountOverflow as exc:
        raise WorkloadError(f"job {run.job.id}: profile '{profile.name}': {exc}") from None


def storage_machine(sim: Simulation, run: JobRun, label: str, required: bool) -> int:
    """The storage machine a profile's label names (EXECUTE_JOB storage_mapping, §4.3)."""
    mapping = run.storage_mapping
    if mapping is not None and label in mapping:
        machine = mapping[label]
    elif not required and mapping is None and len(sim.machines.storage) == 1:
        machine = sim.machines.storage[0].id
    else:
        raise SchedulerError(
            f"job {run.job.id}: no storage machine for label '{label}': give it in the "
            "EXECUTE_JOB storage_mapping"
            + ("" if required else " (or use a platform with exactly one storage machine)")
        )
    if not sim.nb_compute <= machine < len(sim.hosts):
        raise SchedulerError(
            f"job {run.job.id}: storage_mapping['{label}'] = {machine} is not a storage machine"
        )
    return machine


def job_process(sim: Simulation, run: JobRun) -> Generator[tuple, Any, None]:
    """The executor of one job, on the host of its lowest allocated machine."""
    run.starting_time = now = sim.engine.now
    trace = sim.energy_trace
    if trace is not None:
        run.energy = trace.on_machines(run.alloc)
        trace.entry(now, "s")
    sim.machine_states.job_starts(run.alloc, now)
    paje = sim.paje
    if paje is not None:
        paje.job_starts(run.job.id, run.alloc, now)
    profile = run.profile
    if type(profile) is DelayProfile:
        # The common case, as execute_profile would run it, without its generator (and
        # delay_race inlined: a delay equal to the walltime counts as reached).
        frames = run.frames
        frames.append([profile, now])
        delay = profile.delay
        walltime = run.job.walltime
        if walltime < 0 or delay < walltime:
            yield (SLEEP, delay)
            ret = profile.ret
        else:
            yield (SLEEP, walltime)
            ret = -1
        frames.pop()
    else:
        ret = yield from execute_profile(
            sim, run, profile, sim.profiles_of[run.job.workload], Walltime(run.job.walltime),
            run.io_profile,
        )
    sim.on_job_finished(run, ret)
    if sim.options.no_sched:
        # No server to tell: the executor ends here, and SimGrid cancels the activities of an
        # actor that ends, so a task left running at the walltime stops now (with a server it
        # stops as the job is forgotten, once its end was delivered: the same date).
        for task in run.abandoned:
            sim.engine.drop_task(task)
        return
    if run.state != "COMPLETED_KILLED":
        # (A kill reports through the killer; with --no-sched there is no server to tell.)
        # (Nothing may follow: Simulation.quiet_wake drops the executor after this message.)
        yield (PUT, ("JOB_COMPLETED", run), sim.cost(run.host))
