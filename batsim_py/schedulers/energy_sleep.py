"""`fcfs_sleep`: first come first served, putting machines to sleep when they idle.

An energy-aware policy shipped with batsim-py (not a pybatsim clone). Jobs start in order on
the lowest awake idle machines; when the head of the queue does not fit, sleeping machines are
woken for it (and nothing overtakes it). A machine idle for `idle_timeout` seconds that the
queue does not need is switched to its sleep pstate (the first `sleep_pstates` triplet of its
host); a CALL_ME_LATER brings the scheduler back when the next machine reaches that timeout.
Needs `-E` and hosts with a `sleep_pstates` property.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from batsim_py.decision.decisions import (
    CallMeLater,
    Decision,
    ExecuteJob,
    RejectJob,
    Reply,
    SetResourceState,
)
from batsim_py.decision.events import (
    Event,
    JobCompleted,
    JobSubmitted,
    ResourceStateChanged,
    SimulationBegins,
)
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import UsageError

IDLE, BUSY, ASLEEP, WAKING, FALLING = "idle", "busy", "asleep", "waking", "falling asleep"


class FcfsSleep(DecisionProcess):
    name = "fcfs_sleep"
    needs_energy = True  # (checked before the run: batsim_py/run.py)

    def __init__(self, *, idle_timeout: float = 60.0, compute_pstate: int = 0) -> None:
        if idle_timeout <= 0:
            raise UsageError(f"fcfs_sleep: idle_timeout must be > 0, got {idle_timeout}")
        self.idle_timeout = float(idle_timeout)
        self.compute_pstate = int(compute_pstate)
        self.state: list[str] = []
        self.idle_since: list[float] = []
        self.sleep_pstate: list[int] = []
        self.queue: deque[tuple[str, int]] = deque()
        self.calls: set[float] = set()

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out: list[Decision] = []
        for e in events:
            if isinstance(e, SimulationBegins):
                self._begin(e, now)
            elif isinstance(e, JobSubmitted):
                if e.job.res > len(self.state) or e.job.res <= 0:
                    out.append(RejectJob(now, e.job_id))
                else:
                    self.queue.append((e.job_id, e.job.res))
            elif isinstance(e, JobCompleted):
                for m in e.alloc:
                    self.state[m] = IDLE
                    self.idle_since[m] = now
            elif isinstance(e, ResourceStateChanged):
                awake = int(e.state) == self.compute_pstate
                for m in e.resources:
                    self.state[m] = IDLE if awake else ASLEEP
                    self.idle_since[m] = now
        self._schedule(now, out)
        return Reply(now, tuple(out))

    def _begin(self, e: SimulationBegins, now: float) -> None:
        n = len(e.compute_resources)
        self.state = [IDLE] * n
        self.idle_since = [now] * n
        for r in e.compute_resources:
            triplet = r.properties.get("sleep_pstates", "").split(",")[0].strip()
            if not triplet:
                raise UsageError(
                    f"fcfs_sleep: machine {r.id} ({r.name}) has no sleep_pstates property"
                )
            self.sleep_pstate.append(int(triplet.split(":")[0]))

    def _schedule(self, now: float, out: list[Decision]) -> None:
        state = self.state
        while self.queue:
            job_id, res = self.queue[0]
            idle = [m for m, s in enumerate(state) if s == IDLE]
            if len(idle) >= res:
                alloc = tuple(idle[:res])
                for m in alloc:
                    state[m] = BUSY
                out.append(ExecuteJob(now, job_id, alloc))
                self.queue.popleft()
                continue
            coming = sum(1 for s in state if s == WAKING)
            missing = res - len(idle) - coming
            asleep = [m for m, s in enumerate(state) if s == ASLEEP]
            wake = tuple(asleep[:max(missing, 0)])
            if wake:
                for m in wake:
                    state[m] = WAKING
                out.append(SetResourceState(now, wake, self.compute_pstate))
            break
        needed = self.queue[0][1] if self.queue else 0
        idle = [m for m, s in enumerate(state) if s == IDLE]
        spare = idle[needed:] if needed else idle
        tired = [m for m in spare if now - self.idle_since[m] >= self.idle_timeout]
        by_pstate: dict[int, list[int]] = {}
        for m in tired:
            state[m] = FALLING
            by_pstate.setdefault(self.sleep_pstate[m], []).append(m)
        for pstate, machines in sorted(by_pstate.items()):
            out.append(SetResourceState(now, tuple(machines), pstate))
        rested = [self.idle_since[m] + self.idle_timeout for m in spare if state[m] == IDLE]
        if rested:
            at = min(rested)
            if at > now and at not in self.calls:
                self.calls.add(at)
                out.append(CallMeLater(now, at))
