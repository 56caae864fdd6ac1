"""What pybatsim 3.2.1's `batsim.sched` layer does around a scheduling function.

Schedulers built on that layer (`schedFcfs`, `schedEasySjfBackfill`, ...) share its conventions,
which decide timestamps and job order, so they live here once:
- a scheduling pass runs after each JOB_SUBMITTED, JOB_COMPLETED and JOB_KILLED event (not after
  NOTIFY or REQUESTED_CALL), then the scheduler's clock advances by `sched-delay` (1e-21 s by
  default: invisible except at tiny `now`, but added with float arithmetic exactly as pybatsim);
- decisions carry the clock at the time they are taken; the reply's `now` is the final clock and
  its events are sorted by timestamp (stable);
- jobs are considered in submission order; a job whose `deps` (ids in the job object) are not all
  completed is not runnable;
- machines are the compute resources, in the order SIMULATION_BEGINS lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batsim_py.decision.decisions import Decision, Reply
from batsim_py.decision.events import (
    Event,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    SimulationBegins,
)
from batsim_py.decision.interface import DecisionProcess
from batsim_py.wire import wire_time

DEFAULT_SCHED_DELAY = 1e-21


def _timestamp(decision: Decision) -> float:
    return decision.timestamp


class SchedJob:
    """A queued or running job as the `batsim.sched` layer sees it."""

    __slots__ = ("id", "req", "wall", "subtime", "deps", "state", "alloc", "start", "seq")

    def __init__(self, job_id: str, req: int, wall: float, subtime: float,
                 deps: tuple[str, ...], seq: int) -> None:
        self.id = job_id
        self.req = req
        self.wall = wall
        self.subtime = subtime
        self.deps = deps
        self.state = "open"  # open | running | completed | rejected
        self.alloc: Sequence[int] = ()  # (fcfs: a range of ids, in machine-list order)
        self.start = 0.0
        self.seq = seq


class SchedLayerScheduler(DecisionProcess):
    """Base for the `batsim.sched`-style schedulers: event handling, clock and job records."""

    def __init__(self, *, sched_delay: float | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        opts = dict(options or {})
        delay = sched_delay if sched_delay is not None else opts.get("sched-delay")
        # pybatsim: float(options.get("sched-delay", None) or 1e-21)
        self.sched_delay = float(delay or DEFAULT_SCHED_DELAY)
        self.options = opts
        self.time = 0.0
        self.machines: list[int] = []
        self.jobs: dict[str, SchedJob] = {}
        self._out: list[Decision] = []

    # -------------------------------------------------------------- hooks for subclasses

    def on_begin(self, event: SimulationBegins) -> None:
        """Set up per-platform state (machines are already known)."""

    def on_job_submitted(self, job: SchedJob) -> None:
        """Queue a new job (the pass runs afterwards)."""

    def on_job_finished(self, job: SchedJob) -> None:
        """Release a finished job's machines (the pass runs afterwards)."""

    def schedule(self) -> None:
        """One scheduling pass at `self.time`; emit decisions with `self.emit`."""
        raise NotImplementedError

    # -------------------------------------------------------------- plumbing

    def emit(self, decision: Decision) -> None:
        self._out.append(decision)

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self.time = float(now)
        self._out = []
        for event in events:
            if isinstance(event, JobSubmitted):
                job = event.job
                desc = job.description  # (rebuilt at each read: read it once)
                deps = desc.get("deps")
                # (subtime and walltime as a scheduler reads them from Batsim's `%.6f`:
                # a subtime of more decimals than that is later than the `now` it came with)
                record = SchedJob(job.id, job.res, wire_time(desc.get("walltime", -1)),
                                  wire_time(desc.get("subtime", job.subtime)),
                                  tuple(str(d) for d in deps) if isinstance(deps, list) else (),
                                  len(self.jobs))
                self.jobs[job.id] = record
                self.on_job_submitted(record)
                self._pass()
            elif isinstance(event, JobCompleted):
                ended = self.jobs.get(event.job_id)
                if ended is not None and ended.state == "running":
                    ended.state = "completed"
                    self.on_job_finished(ended)
                self._pass()
            elif isinstance(event, JobKilled):
                self._pass()
            elif isinstance(event, SimulationBegins):
                self.machines = [r.id for r in event.compute_resources]
                self.on_begin(event)
        out = self._out
        if len(out) > 1:
            out.sort(key=_timestamp)  # (stable, as pybatsim's sort)
        return Reply(self.time, tuple(out))

    def _pass(self) -> None:
        self.schedule()
        self.time += self.sched_delay

    def runnable(self, job: SchedJob) -> bool:
        if not job.deps:
            return True
        workload = job.id.rsplit("!", 1)[0]
        for dep in job.deps:
            full = dep if "!" in dep else f"{workload}!{dep}"
            other = self.jobs.get(full)
            if other is None or other.state != "completed":
                return False
        return True
