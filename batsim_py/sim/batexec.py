"""Batsim's `--no-sched` ("batexec") mode: every job runs at time 0, no scheduler at all.

Batsim 4.2.1 (src/job_submitter.cpp, `batexec_job_launcher_process`) creates one launcher per
workload instead of a submitter, and no server: the launcher starts an executor for each job
of its workload at once, on machines 0..res-1 whatever else runs there (jobs overlap and share
the hosts), with the walltime enforced; nobody hears of their ends, so jobs.csv has no rows
and the schedule metrics count no job. The launcher walks the workload's jobs in the order of
a `std::unordered_map<JobIdentifier, ...>` keyed by the full id, filled in file order: that
order decides which executor starts first, hence the Pajé trace's colours and states and the
energy trace's rows, so `stl_order` reproduces it (GCC's libstdc++, which Batsim is built with).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from batsim_py.decision import decisions as d
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import UsageError, WorkloadError

if TYPE_CHECKING:
    from batsim_py.sim.simulation import Simulation

_MASK = (1 << 64) - 1
# libstdc++'s std::hash<std::string> on 64-bit targets: MurmurHash64A-like, this multiplier
# and seed (std::_Hash_bytes); checked against g++ 12's std::hash in tests/sim/test_batexec.py.
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_SEED = 0xC70F6907
# Bucket counts a default-constructed libstdc++ unordered_map goes through when elements are
# inserted one at a time (max load factor 1: it grows as the element count passes the count);
# read off g++ 12 (bucket_count() after each insertion).
_BUCKETS = (1, 13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933,
            351061, 712697, 1447153, 2938679, 5967347, 12117689, 24607243)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def stl_hash(text: str) -> int:
    """std::hash<std::string>()(text) as libstdc++ computes it on a 64-bit machine."""
    data = text.encode()
    n = len(data)
    h = (_SEED ^ (n * _MUL)) & _MASK
    full = n & ~7
    for i in range(0, full, 8):
        k = (_shift_mix((int.from_bytes(data[i:i + 8], "little") * _MUL) & _MASK) * _MUL) & _MASK
        h = ((h ^ k) * _MUL) & _MASK
    if n & 7:
        h = ((h ^ int.from_bytes(data[full:], "little")) * _MUL) & _MASK
    return _shift_mix((_shift_mix(h) * _MUL) & _MASK)


def stl_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a libstdc++ unordered_map after inserting `keys` in turn.

    The map keeps one singly linked list; a bucket remembers the node before its first one.
    A key joins the front of its bucket if the bucket has nodes, else the front of the whole
    list; a rehash (when the element count would pass the bucket count) re-threads the list
    the same way in its current order."""
    head = ""  # the list's before-begin node (no job id is empty)
    nxt: dict[str, str | None] = {head: None}
    before: dict[int, str] = {}  # bucket -> the node before its first node
    hashes: dict[str, int] = {}
    size = 0
    nb = 1
    next_resize = 0
    for key in keys:
        if key in hashes:
            continue
        code = hashes[key] = stl_hash(key)
        if size + 1 > next_resize:
            if nb == _BUCKETS[-1]:
                raise WorkloadError(f"--no-sched: more than {nb} jobs in one workload")
            nb = next_resize = _BUCKETS[_BUCKETS.index(nb) + 1]
            node = nxt[head]
            nxt[head] = None
            before = {}
            head_bucket = 0
            while node is not None:
                after = nxt[node]
                b = hashes[node] % nb
                if b in before:
                    prev = before[b]
                    nxt[node] = nxt[prev]
                    nxt[prev] = node
                else:
                    nxt[node] = nxt[head]
                    nxt[head] = node
                    before[b] = head
                    if nxt[node] is not None:
                        before[head_bucket] = node
                    head_bucket = b
                node = after
        b = code % nb
        if b in before:
            prev = before[b]
            nxt[key] = nxt[prev]
            nxt[prev] = key
        else:
            first = nxt[head]
            nxt[key] = first
            nxt[head] = key
            if first is not None:
                before[hashes[first] % nb] = key
            before[b] = head
        size += 1
    out: list[str] = []
    at = nxt[head]
    while at is not None:
        out.append(at)
        at = nxt[at]
    return out


class NoScheduler(DecisionProcess):
    """The decision process of a `--no-sched` run: there is none, and nothing asks it."""

    def exchange(self, now: float, events: Sequence[Event]) -> d.Reply:
        raise AssertionError("--no-sched: no scheduler is ever asked")


def launch_all(sim: Simulation) -> None:
    """Start every job of every workload now, as Batsim's batexec launchers do.

    Launchers run in workload order, each creating its jobs' executors in unordered_map
    order; the executors then run in creation order (SimGrid runs actors created at the
    same time in creation order)."""
    from batsim_py.sim.jobs import JobRun, job_process

    nb = len(sim.hosts)
    for workload in sim.workloads:
        by_id = {job.id: job for job in workload.jobs}
        profiles = sim.profiles_of[workload.name]
        for job_id in stl_order(by_id):
            job = by_id[job_id]
            if job.res > nb:
                # Batsim indexes machines[i] past the end (an assertion failure or worse).
                raise WorkloadError(
                    f"--no-sched: job '{job_id}' requests {job.res} machines but the platform "
                    f"has {nb}: batexec runs a job on machines 0..res-1"
                )
            run = JobRun(job, profiles[job.profile])
            sim.runs[job_id] = run
            run.state = "RUNNING"
            run.alloc = range(job.res)
            run.host = sim.hosts[0]
            sim.nb_running += 1
            run.actor = sim.engine.spawn(job_process(sim, run), job_id, run.host)


def check_cli(args: Any) -> None:
    """Refuse what makes no sense without a scheduler, in one line, before anything runs.

    A scheduler option has nobody to drive; external events and workflows have submitters
    that talk to Batsim's server, which batexec never starts (Batsim 4.2.1 then reports a
    deadlock at the end, the events never delivered): refused rather than imitated."""
    given = [flag for flag, on in (
        ("--scheduler", args.scheduler is not None),
        ("--scheduler-command", getattr(args, "scheduler_command", None) is not None),
        ("--legacy-protocol", args.legacy_protocol is not None),
        ("--protocol flux", args.protocol == "flux"),
        ("--events", bool(args.events)),
        ("-W/--workflow", bool(getattr(args, "workflow", None))),
        ("--WS/--workflow-start", bool(getattr(args, "WS", None))),
        ("--enable-dynamic-jobs", args.enable_dynamic_jobs),
    ) if on]
    if given:
        raise UsageError(f"--no-sched runs the workloads without a scheduler: "
                         f"{', '.join(given)} cannot come with it")
