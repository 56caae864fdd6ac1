"""One cluster's local resource manager, OAR-like: queues, backfilling, best-effort kills.

CiGri harvests a cluster through its local OAR, so what the grid achieves depends on what OAR
does with the best-effort jobs CiGri submits. This module is that OAR, reduced to the rules
that shape the outcome (`oar-team/oar3:oar/kao/meta_sched.py`, `research/seed-systems.md`
§3.5):

- **Queues by priority**: `admin` > `default` > `besteffort`. The normal queues are planned
  first, in that order, with FCFS, EASY or conservative backfilling (OAR's kamelot is
  conservative; `policy` picks one); the `besteffort` queue gets what is left free now.
- **Best-effort jobs do not exist for the normal queues** (`filter_besteffort` in
  meta_sched.py): a normal job is planned as if no best-effort job ran. When a normal job is
  to start and needs machines held by running best-effort jobs, those jobs are **killed**
  (OAR event `BESTEFFORT_KILL`, `check_besteffort_jobs_to_kill`) and the normal job starts
  once their machines are released: `kill_delay` seconds after the decision (OAR's kill is
  not instantaneous; research §3.8.1: parameter, default 0).
- Victims are the youngest best-effort jobs first (least work lost), then by job id, for
  determinism; a victim holding more machines than needed frees the rest.

Hence the invariant the tests check: a normal job starts at most `kill_delay` after the date
at which the planner (which ignores best-effort jobs) released it, and with `kill_delay = 0`
the normal jobs' dates are those of the same run without any best-effort job.

Planning is by machine counts (the machines of one cluster are alike); walltimes bound the
plans (`walltime = -1`: unbounded, such a job never ends in a plan). A job larger than its
cluster is refused (OAR's admission rules would refuse it: state Error, event
`TOO_BIG_FOR_CLUSTER`).

What CiGri reads is an `OarJob`: its OAR state (`Waiting`, `Launching`, `Running`,
`Terminated`, `Error`), dates and event, as OAR's REST API would show them.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

QUEUES = ("admin", "default", "besteffort")
POLICIES = ("fcfs", "easy", "conservative")


@dataclass(slots=True)
class OarJob:
    """A job as OAR knows it (and as CiGri's runner polls it)."""

    id: str
    queue: str
    res: int
    walltime: float  # -1: none
    submit: float
    state: str = "Waiting"  # Waiting, Launching, Running, Terminated, Error
    released: float = -1.0  # when the planner decided to start it (normal jobs)
    start: float = -1.0
    stop: float = -1.0
    event: str = ""  # BESTEFFORT_KILL, WALLTIME, REMOTE_WAITING_FRAG, ...
    exit_code: int = 0
    alloc: list[int] = field(default_factory=list)
    victims: set[str] = field(default_factory=set)  # best-effort jobs to kill before starting
    killer: str = ""  # best-effort job: the normal job it is killed for
    nb_killed: int = 0  # normal job: best-effort jobs killed to start it
    kill_event: str = ""  # event recorded when a kill asked for ends this job

    @property
    def besteffort(self) -> bool:
        return self.queue == "besteffort"

    def planned_end(self, now: float) -> float:
        """When the plans assume this running or launching job ends."""
        if self.walltime < 0:
            return math.inf
        begin = self.start if self.start >= 0 else max(self.released, now)
        return begin + self.walltime


@dataclass(slots=True)
class Actions:
    """What one scheduling pass asks the engine to do now."""

    starts: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    rejects: list[str] = field(default_factory=list)
    wakeups: list[float] = field(default_factory=list)


class OarCluster:
    """The OAR of one cluster: its machines (global Batsim ids), queues and running jobs."""

    def __init__(self, name: str, machines: tuple[int, ...], policy: str = "easy",
                 kill_delay: float = 0.0) -> None:
        if policy not in POLICIES:
            raise ValueError(f"cluster {name}: unknown policy '{policy}' "
                             f"(known: {', '.join(POLICIES)})")
        self.name = name
        self.machines = machines
        self.size = len(machines)
        self.policy = policy
        self.kill_delay = kill_delay
        self.free: list[int] = sorted(machines)  # machines nobody holds nor claims
        self.jobs: dict[str, OarJob] = {}
        self.waiting: dict[str, list[OarJob]] = {q: [] for q in QUEUES}
        self.running: dict[str, OarJob] = {}  # Running and Launching jobs
        self.kills_due: list[tuple[float, str]] = []  # (date, best-effort job) kills to send
        self.busy_by_cigri = 0  # machines held by CiGri's jobs (the updator's used_by_cigri)
        self.cigri_jobs: set[str] = set()
        self._pending_rejects: list[str] = []
        self.dirty = False

    # ------------------------------------------------------------------ state for CiGri
    def used(self) -> int:
        return self.size - len(self.free)

    def nb_waiting(self) -> int:
        return sum(len(q) for q in self.waiting.values())

    # ------------------------------------------------------------------ events
    def submit(self, job: OarJob, now: float) -> None:
        self.jobs[job.id] = job
        if job.res > self.size or job.res <= 0:
            job.state, job.event, job.stop = "Error", "TOO_BIG_FOR_CLUSTER", now
            self._pending_rejects.append(job.id)
        else:
            self.waiting[job.queue].append(job)
        self.dirty = True

    def delete(self, job_id: str, event: str, now: float) -> str | None:
        """oardel: a waiting job leaves the queue ('reject'), a running one is killed
        ('kill'); None when the job is already over."""
        job = self.jobs.get(job_id)
        if job is None or job.state in ("Terminated", "Error"):
            return None
        if job.state == "Waiting":
            self.waiting[job.queue].remove(job)
            job.state, job.event, job.stop = "Error", event, now
            return "reject"
        job.kill_event = job.kill_event or event
        if job.state == "Launching":  # not started yet: release what it claimed
            self._abort_launch(job, now)
            job.state, job.event, job.stop = "Error", event, now
            return "reject"
        return "kill"

    def ended(self, job_id: str, batsim_state: str, return_code: int, now: float) -> None:
        """A running job ended (completed, walltime, killed): release its machines."""
        job = self.running.pop(job_id, None)
        if job is None:
            return
        job.stop = now
        if batsim_state == "COMPLETED_SUCCESSFULLY":
            job.state, job.exit_code = "Terminated", 0
        elif batsim_state == "COMPLETED_FAILED":
            job.state, job.exit_code = "Terminated", return_code
        elif batsim_state == "COMPLETED_WALLTIME_REACHED":
            job.state, job.event = "Error", "WALLTIME"
        else:  # COMPLETED_KILLED
            job.state, job.event = "Error", job.kill_event or "EXTERMINATE"
        if job.id in self.cigri_jobs:
            self.busy_by_cigri -= job.res
        killer = self.running.get(job.killer) if job.killer else None
        released = job.alloc
        if killer is not None and job.id in killer.victims:
            killer.victims.discard(job.id)
            need = killer.res - len(killer.alloc)
            killer.alloc.extend(released[:need])
            released = released[need:]
        for m in released:
            bisect.insort(self.free, m)
        self.dirty = True

    # ------------------------------------------------------------------ scheduling
    def schedule(self, now: float) -> Actions:
        """One OAR scheduling pass at `now`."""
        act = Actions()
        act.rejects.extend(self._pending_rejects)
        self._pending_rejects.clear()
        self.dirty = False
        # Kills whose delay is over.
        while self.kills_due and self.kills_due[0][0] <= now:
            _, victim = self.kills_due.pop(0)
            job = self.running.get(victim)
            if job is not None and job.killer:  # still running and still in the way
                act.kills.append(victim)
        # Launching jobs whose victims are gone start now.
        for job in list(self.running.values()):
            if job.state == "Launching" and not job.victims and len(job.alloc) == job.res:
                self._start(job, now, act)
        self._plan_normal(now, act)
        self._fill_besteffort(now, act)
        return act

    def _plan_normal(self, now: float, act: Actions) -> None:
        queue = self.waiting["admin"] + self.waiting["default"]
        if not queue:
            return
        normal_running = [j for j in self.running.values() if not j.besteffort]
        avail = self.size - sum(j.res for j in normal_running)
        chosen: list[OarJob] = []
        if self.policy == "conservative":
            chosen = self._conservative(queue, normal_running, avail, now)
        else:
            shadow, extra = math.inf, 0
            blocked = False
            for job in queue:
                if not blocked:
                    if job.res <= avail:
                        chosen.append(job)
                        avail -= job.res
                        continue
                    if self.policy == "fcfs":
                        break
                    blocked = True
                    shadow, extra = self._reservation(job, normal_running + chosen, avail, now)
                    continue
                # EASY backfilling: fits now and does not delay the head's reservation.
                if job.res > avail:
                    continue
                ends = now + job.walltime if job.walltime >= 0 else math.inf
                if ends <= shadow:
                    chosen.append(job)
                    avail -= job.res
                elif job.res <= extra:
                    chosen.append(job)
                    avail -= job.res
                    extra -= job.res
        for job in chosen:
            self.waiting[job.queue].remove(job)
            self._release(job, now, act)

    def _reservation(self, head: OarJob, running: list[OarJob], avail: int,
                     now: float) -> tuple[float, int]:
        """EASY: the head's start (shadow time) and the machines spare at that date."""
        for end, res in sorted((j.planned_end(now), j.res) for j in running):
            avail += res
            if avail >= head.res:
                return end, avail - head.res
        return math.inf, 0

    def _conservative(self, queue: list[OarJob], running: list[OarJob], avail: int,
                      now: float) -> list[OarJob]:
        """Conservative backfilling: every waiting job, in order, gets the earliest
        reservation that fits the profile; those reserved at `now` start."""
        times = [now]
        free = [avail]
        for end, res in sorted((j.planned_end(now), j.res) for j in running):
            if end == math.inf:
                continue
            if end <= times[-1]:
                free[-1] += res
            else:
                times.append(end)
                free.append(free[-1] + res)
        chosen = []
        for job in queue:
            duration = job.walltime if job.walltime >= 0 else math.inf
            start_i = None
            for i in range(len(times)):
                if free[i] < job.res:
                    continue
                end = times[i] + duration
                ok = True
                for k in range(i, len(times)):
                    if times[k] >= end:
                        break
                    if free[k] < job.res:
                        ok = False
                        break
                if ok:
                    start_i = i
                    break
            if start_i is None:
                continue  # larger than what ever frees (unbounded jobs ahead): wait
            begin = times[start_i]
            end = begin + duration
            if end != math.inf and end not in times:
                k = bisect.bisect(times, end)
                times.insert(k, end)
                free.insert(k, free[k - 1])
            for k in range(start_i, len(times)):
                if times[k] >= end:
                    break
                free[k] -= job.res
            if begin == now:
                chosen.append(job)
        return chosen

    def _release(self, job: OarJob, now: float, act: Actions) -> None:
        """The planner starts `job` now: on free machines, else by killing best-effort jobs."""
        job.released = now
        take = min(job.res, len(self.free))
        job.alloc = self.free[:take]
        del self.free[:take]
        need = job.res - take
        if need:
            victims = sorted((j for j in self.running.values() if j.besteffort and not j.killer),
                             key=lambda j: (-j.start, j.id))
            for victim in victims:
                if need <= 0:
                    break
                victim.killer = job.id
                victim.kill_event = victim.kill_event or "BESTEFFORT_KILL"
                job.victims.add(victim.id)
                job.nb_killed += 1
                need -= victim.res
                if self.kill_delay > 0:
                    due = now + self.kill_delay
                    self.kills_due.append((due, victim.id))
                    act.wakeups.append(due)
                else:
                    act.kills.append(victim.id)
            if need > 0:  # cannot happen: best-effort machines are all the rest
                raise AssertionError(f"{self.name}: no machines for {job.id}")
            job.state = "Launching"
            self.running[job.id] = job
            return
        self.running[job.id] = job
        self._start(job, now, act)

    def _start(self, job: OarJob, now: float, act: Actions) -> None:
        job.state = "Running"
        job.start = now
        job.alloc.sort()
        self.running[job.id] = job
        if job.id in self.cigri_jobs:
            self.busy_by_cigri += job.res
        act.starts.append((job.id, tuple(job.alloc)))

    def _abort_launch(self, job: OarJob, now: float) -> None:
        self.running.pop(job.id, None)
        for m in job.alloc:
            bisect.insort(self.free, m)
        job.alloc = []
        for victim_id in job.victims:
            victim = self.running.get(victim_id)
            if victim is not None:
                victim.killer = ""
        job.victims.clear()
        self.dirty = True

    def _fill_besteffort(self, now: float, act: Actions) -> None:
        queue = self.waiting["besteffort"]
        while queue and queue[0].res <= len(self.free):
            job = queue.pop(0)
            job.alloc = self.free[:job.res]
            del self.free[:job.res]
            self._start(job, now, act)
