"""The lean `--timing ideal`: the same run as the general kernel's ideal mode, without its
actor machinery where the inputs do not need it.

With ideal timing every internal message takes no time, so what a run prints depends only on
*order*: which messages Batsim's server receives before it calls the scheduler (its batching
rule, batsim-semantics §5.5), in which order same-date completions are handled, and the dates
SimGrid's clock gives the sleeps. This kernel reproduces exactly that order, and nothing else:

- The clock is the engine's (`Engine.add_sleep`, `Engine.step`): the same sleep heap and
  step-by-step subtraction, so every date carries the same rounding.
- There are no messages and no mailbox actions: a FIFO queue of (sender, message) and at most
  one message in flight, handed to the server when nothing else runs (as
  `Engine._deliver_instant` does), or in a step of zero seconds when a sleep may end in it.
- Batsim's server is a small state machine calling the `Simulation`'s own handlers (jobs,
  decisions, output records); the request-reply, submitter, waiter and killer actors are the
  `Simulation`'s own generators, run here in the same rounds as the engine runs them; a job is
  a three-state object instead of a generator (its start, its end, its report).
- The common case takes no rounds at all (`Express._chain`): a scheduler reply applied while
  nothing else is pending or due is applied decision after decision, as the rounds would.

`why_not(sim)` chooses, before the run, from the inputs: anything this kernel does not cover
(energy, platform profiles, external events, dynamic jobs, user SimPy code or signals, peers
that bind to the simulation, profiles other than delay, the legacy and batprotocol peers'
rules) runs the general kernel (`sim/engine.py`), as does `BATSIM_PY_EXPRESS=0`. Every decision
a scheduler may send is applied by the same handler as in the general kernel (decisions that
need an excluded feature fail there with the same error), so a run never has to change kernel
midway. `Simulation.kernel` says which kernel ran.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from typing import Any

from batsim_py.decision import events as ev
from batsim_py.decision.decisions import ExecuteJob
from batsim_py.sim.engine import GET, PUT, SLEEP, SPAWN, Actor, Engine
from batsim_py.sim.jobs import delay_race
from batsim_py.sim.submitter import submitter_process
from batsim_py.workload.model import DelayProfile

log = logging.getLogger(__name__)

#: Environment switch: "0" forces the general kernel for `--timing ideal` too.
SWITCH = "BATSIM_PY_EXPRESS"

# The server's states (what it does when it runs next).
_START, _GOT, _SPAWNING, _ENDING, _LOOP = range(5)


def why_not(sim: Any) -> str | None:
    """Why this simulation needs the general kernel; None when the lean one covers it."""
    o = sim.options
    if o.timing != "ideal":
        return "--timing batsim"
    if os.environ.get(SWITCH, "") == "0":
        return f"{SWITCH}=0"
    if o.energy:
        return "the energy model (-E)"
    if sim.engine.availability is not None:
        return "the platform's speed/bandwidth/latency profiles"
    if not sim.engine.instant:
        return "messages stepped one by one (engine.instant = False)"
    if sim.event_lists:
        return "external events (--events)"
    if o.dynamic_jobs:
        return "dynamic jobs"
    if o.end_in_last_batch:
        return "the legacy protocol's last batch"
    if o.v5_semantics:
        return "Batsim 5's rules (batprotocol)"
    if (sim._env is not None or sim.signals is not None or sim.user_sources
            or sim.end_hooks):
        return "user code (SimPy processes, signals, sources or end hooks)"
    if _binds(sim.decision):
        return "a decision process bound to the simulation (EDC, Flux)"
    for w in sim.workloads:
        profiles = sim.profiles_of[w.name]
        for name in {job.profile for job in w.jobs}:
            profile = profiles.get(name)
            if type(profile) is not DelayProfile:
                kind = getattr(profile, "type", "missing")
                return f"profile '{name}' of workload {w.name} is not a delay ({kind})"
    return None


def _binds(decision: object) -> bool:
    """A peer (or a peer it wraps) that needs the simulation itself (run._bind_simulation)."""
    peer: object = decision
    for _ in range(8):
        if peer is None:
            return False
        if getattr(peer, "bind_simulation", None) is not None:
            return True
        peer = getattr(peer, "inner", None) or getattr(peer, "scheduler", None)
    return False


def choose(sim: Any) -> bool:
    """Pick the kernel of this run (before it starts): True for the lean one. Logged, and
    kept in `sim.kernel`."""
    reason = why_not(sim)
    if reason is None:
        sim.kernel = "express"
        log.debug("kernel: express (lean --timing ideal, sim/express.py)")
        return True
    sim.kernel = "general"
    if sim.options.timing == "ideal":
        log.debug("kernel: general (sim/engine.py): %s", reason)
    return False


class _Job:
    """A running delay job, as `jobs.job_process` runs one: its start (machines, Pajé), its
    sleep against the walltime, its end, its report to the server."""

    __slots__ = ("sim", "run", "state", "ret")

    def __init__(self, sim: Any, run: Any) -> None:
        self.sim = sim
        self.run = run
        self.state = 0
        self.ret = 0

    def send(self, value: Any) -> tuple:
        state = self.state
        run = self.run
        sim = self.sim
        if state == 0:
            now = sim.engine.now
            run.starting_time = now
            sim.machine_states.job_starts(run.alloc, now)
            if sim.paje is not None:
                sim.paje.job_starts(run.job.id, run.alloc, now)
            profile = run.profile
            run.frames.append([profile, now])
            seconds, reached = delay_race(profile.delay, run.job.walltime)
            self.ret = -1 if reached else profile.ret
            self.state = 1
            return (SLEEP, seconds)
        if state == 1:
            run.frames.pop()
            sim.on_job_finished(run, self.ret)
            self.state = 2
            if run.state != "COMPLETED_KILLED":
                return (PUT, ("JOB_COMPLETED", run), None)
        # Over, as a generator would be (Actor.send returns requests); the run holds its
        # actor, which holds this: break the cycle, as a finished generator drops its frame.
        self.run = None
        raise StopIteration

    def close(self) -> None:  # killed (Engine.kill)
        self.state = 3
        self.run = None


class _Reply:
    """The request-reply actor of one scheduler call, as `Simulation.request_reply` runs it:
    the call, then each decision's message at its timestamp, then "ready" at the reply's
    `now` (without a generator; the messages are the same)."""

    __slots__ = ("sim", "now", "events", "decisions", "reply_now", "i", "msg", "pending")

    def __init__(self, sim: Any, now: float, events: list[Any]) -> None:
        self.sim = sim
        self.now = now
        self.events: list[Any] | None = events
        self.decisions: Any = None
        self.reply_now = 0.0
        self.i = 0
        self.msg: tuple = _READY
        self.pending = False  # the message of decision i is built, a sleep may be running

    def send(self, value: Any) -> tuple:
        sim = self.sim
        decisions = self.decisions
        if decisions is None:
            events = self.events
            assert events is not None
            reply = sim.ask(self.now, events)
            self.events = None
            decisions = self.decisions = reply.decisions
            self.reply_now = reply.now
        i = self.i
        n = len(decisions)
        if i > n:
            raise StopIteration
        if not self.pending:
            self.pending = True
            now = sim.engine.now
            if i < n:
                decision = decisions[i]
                if type(decision) is ExecuteJob:  # (decision_message's first case)
                    self.msg = ("DECISION", decision)
                else:
                    self.msg = sim.decision_message(decision)
                if decision.timestamp > now:
                    return (SLEEP, decision.timestamp - now)
            else:
                self.msg = _READY
                if self.reply_now > now:
                    return (SLEEP, self.reply_now - now)
        self.pending = False
        self.i = i + 1
        return (PUT, self.msg, None)


_READY = ("SCHED_READY",)


class _Comm:
    """Stands for the message in flight in a step of zero seconds (its place among the
    sleeps ending in that step is its creation order)."""

    def send(self, value: Any) -> None:  # pragma: no cover - never run as an actor
        return None


class Express:
    """One run of the lean kernel over a built `Simulation`."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.engine: Engine = sim.engine
        self.queue: deque[tuple[Actor, Any]] = deque()  # posted, not yet received
        self.waiting = False  # the server waits for a message and none is queued
        self.inflight: tuple[Actor, Any, bool, int] | None = None
        self.state = _START
        self.value: Any = None  # what the server resumes with (a message, a child)
        self.spawned = 0  # spawns of the current handler already made
        self.rr: Actor | None = None  # the latest request-reply actor
        self.alive = True  # the server runs (it ends once SIMULATION_ENDS is acknowledged)
        self.comm = Actor(_Comm(), "message", "")  # type: ignore[arg-type]
        sim.spawn_job = self.spawn_job
        self.handlers = {
            "JOBS": sim.on_jobs_submitted,
            "JOB_COMPLETED": sim.on_job_completed,
            "SCHED_READY": sim.on_sched_ready,
            "DECISION": self.on_decision,
            "HELLO": _ignore,
            "BYE": sim.on_submitter_bye,
            "WAITING_DONE": sim.on_waiting_done,
            "KILLING_DONE": sim.on_killing_done,
        }

    # ------------------------------------------------------------------ server
    def on_decision(self, msg: tuple) -> None:
        """Simulation.on_decision, its first case without the dispatch."""
        decision = msg[1]
        if type(decision) is ExecuteJob:
            self.sim.execute_job(decision)
        else:
            self.sim.on_decision(msg)

    def server(self) -> Any:
        """The server's next request (as `Simulation.server` would yield it)."""
        sim = self.sim
        state = self.state
        if state == _START:
            sim.events.append(sim.simulation_begins())
            self.state = _LOOP
            return self.call_scheduler()
        if state == _GOT:
            msg = self.value
            self.handlers[msg[0]](msg)
            self.spawned = 0
            state = _SPAWNING
        elif state == _SPAWNING:
            run = sim._spawns[self.spawned][1]
            if run is not None:
                run.actor = self.value
            self.spawned += 1
        elif state == _ENDING:
            sim.end_sent = True
            state = _LOOP
        if state == _SPAWNING:
            spawns = sim._spawns
            if self.spawned < len(spawns):
                self.state = _SPAWNING
                return self.child(*spawns[self.spawned])
            spawns.clear()
            if sim.sched_ready and not sim.end_acknowledged and not self.queue:
                if sim.events:
                    self.state = _LOOP
                    return self.call_scheduler()
                if not sim.end_sent and (sim.nb_submitters_done == sim.nb_submitters
                                         and sim.everything_done()):
                    if sim.on_end is not None:
                        sim.on_end()
                    sim.events.append(ev.SimulationEnds(sim.stamp()))
                    self.state = _ENDING
                    return self.call_scheduler()
        if sim.end_acknowledged:
            return None
        self.state = _GOT
        return (GET,)

    def call_scheduler(self) -> tuple:
        """Send the pending events (Simulation.send_to_scheduler): a request-reply actor."""
        sim = self.sim
        events = sim.take_events()
        rr = self.rr = Actor(_Reply(sim, self.engine.now, events),  # type: ignore[arg-type]
                             "request-reply", "")
        return (SPAWN, rr)

    def spawn_job(self, run: Any) -> None:
        """Simulation.spawn_job: the job is one of ours, not a jobs.job_process generator."""
        self.sim._spawns.append(((SPAWN, None, run.job.id, run.host), run))

    def child(self, request: tuple, run: Any) -> tuple:
        """The actor a handler asked for: a job, or one of the Simulation's generators."""
        if run is not None:  # a job (spawn_job)
            return (SPAWN, Actor(_Job(self.sim, run), request[2], request[3]))  # type: ignore[arg-type]
        return (SPAWN, Actor(request[1], request[2], request[3]))

    # ---------------------------------------------------------------- mailbox
    def post(self, sender: Actor, msg: Any) -> None:
        if self.waiting:
            self.waiting = False
            self.inflight = (sender, msg, False, self.engine.next_seq())
        else:
            self.queue.append((sender, msg))

    def get(self) -> None:
        if self.queue:
            sender, msg = self.queue.popleft()
            self.inflight = (sender, msg, True, self.engine.next_seq())
        else:
            self.waiting = True

    # ------------------------------------------------------------------ rounds
    def resume(self, actor: Actor) -> Any:
        """Run an actor (not the server) to its next request; None once it is over."""
        if actor.dead:
            return None
        try:
            request = actor.send(actor.value)
        except StopIteration:
            request = None
        if request is None:
            actor.dead = True
            actor.value = None  # (it may hold what holds the actor: break the cycle)
        return request

    def apply(self, actor: Actor, request: Any) -> None:
        """Handle an actor's request at the end of its round (Engine.run's order)."""
        if request is None or actor.dead:
            return
        kind = request[0]
        if kind == PUT:
            self.post(actor, request[1])
        elif kind == SLEEP:
            self.engine.add_sleep(actor, request[1])
        else:  # pragma: no cover - (a usage_trace job's ranks are not covered)
            raise AssertionError(f"express kernel: unexpected request {request!r}")

    def apply_server(self, request: Any) -> Actor | None:
        """Handle the server's request; the actor it spawned, which runs next with it."""
        if request is None:
            self.alive = False
            return None
        if request[0] == GET:
            self.get()
            return None
        child: Actor = request[1]
        self.value = child
        return child

    def deliver(self, sender: Actor, msg: Any, sender_first: bool) -> None:
        """The message in flight is received, nothing else ending now: its two ends run, in
        the order they started waiting, then the server with each actor it spawns."""
        sender.value = None
        self.value = msg
        if sender_first:
            request = self.resume(sender)
            served = self.server()
            self.apply(sender, request)
        else:
            served = self.server()
            request = self.resume(sender)
        child = self.apply_server(served)
        if not sender_first:
            self.apply(sender, request)
        while child is not None:
            if child is self.rr:
                self.chain(child)
                return
            request = self.resume(child)
            served = self.server()
            self.apply(child, request)
            child = self.apply_server(served)

    def chain(self, rr: Actor) -> None:
        """The scheduler is called (round [rr, server] begins): its reply is applied message
        after message, as the rounds would, as long as nothing else is queued and no sleep may
        end meanwhile; then the state is left as the rounds would leave it.

        Each decision the request-reply actor posts would be queued, taken by the server's
        next receive and handed over at once (nothing else runs): it is handled here directly,
        the actor's next request first (it runs first), then the server with the actors it
        spawns (a job starts, a waiter sleeps, a killer kills and posts behind it)."""
        engine = self.engine
        queue = self.queue
        while True:
            request = self.resume(rr)
            served = self.server()
            held = None
            if request is not None and request[0] == PUT and not queue:
                held = request[1]  # first in the queue: what the server receives next
            else:
                self.apply(rr, request)
            while served is not None and served[0] == SPAWN:
                child = served[1]
                self.value = child
                request = self.resume(child)
                served = self.server()
                self.apply(child, request)
            if served is None:
                self.alive = False
                return
            if held is None:
                self.get()
                return
            if queue or engine.sleep_near():
                self.inflight = (rr, held, True, engine.next_seq())
                return
            rr.value = None
            self.value = held

    def rounds(self, rnd: list[Any]) -> None:
        """Rounds of any actors (None: the server) until none is left to run."""
        while rnd:
            requests: list[tuple[Any, Any]] = []
            for actor in rnd:
                if actor is None:
                    if self.alive:
                        requests.append((None, self.server()))
                else:
                    request = self.resume(actor)
                    if request is not None:
                        requests.append((actor, request))
            rnd = []
            for actor, request in requests:
                if actor is None:
                    child = self.apply_server(request)
                    if child is not None:
                        rnd.append(child)
                        rnd.append(None)
                else:
                    self.apply(actor, request)

    # -------------------------------------------------------------------- run
    def run(self) -> None:
        sim = self.sim
        engine = self.engine
        rnd: list[Any] = [Actor(submitter_process(sim, w), f"{w.name}_submitter", "")
                          for w in sim.workloads]
        rnd.append(None)  # the server
        self.rounds(rnd)
        while True:
            inflight = self.inflight
            if inflight is not None:
                self.inflight = None
                sender, msg, sender_first, seq = inflight
                if not engine.sleep_near():
                    self.deliver(sender, msg, sender_first)
                    continue
                # Something may end in the step of zero seconds that ends the message.
                comm = self.comm
                engine.add_sleep(comm, 0.0, seq)
                engine.step()
                sender.value = None
                self.value = msg
                rnd = []
                for actor in self.take_woken():
                    if actor is comm:
                        rnd.extend((sender, None) if sender_first else (None, sender))
                    else:
                        rnd.append(actor)
                self.rounds(rnd)
                continue
            if not engine.step():
                return
            self.rounds(self.take_woken())

    def take_woken(self) -> list[Actor]:
        woken = self.engine.to_run
        self.engine.to_run = []
        return woken


def run(sim: Any) -> None:
    """Simulate `sim` (covered: `why_not(sim)` is None) until nothing can happen any more."""
    Express(sim).run()


def _ignore(msg: tuple) -> None:
    """Submitter hello: nothing to do but receive it."""

