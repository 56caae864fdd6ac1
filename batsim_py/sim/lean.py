"""The lean `--timing ideal`: the same run as the full engine's ideal mode, without generators.

With ideal timing every internal message takes no time, so what a run prints depends only on
*order*: which messages Batsim's server receives before it calls the scheduler (its batching
rule, batsim-semantics §5.5: a call only when the scheduler is ready and nothing waits in the
server's mailbox), the order of the server's records, and the dates SimGrid's clock gives the
sleeps. This kernel keeps exactly what decides those and drops the rest:

- The clock, the mailbox and the zero-time messages are the engine's own (`Engine.sleep`,
  `Engine._step`, `Engine.mailbox`, `Engine._deliver_instant`): the same sleep heap and
  step-by-step subtraction, so every date carries the same rounding, and the same rounds
  (actors woken at a date run one after another, their requests are handled after the round in
  that order), so every message reaches the server in the same order.
- The actors are small state machines instead of generators (`LeanActor.turn` gives the next
  request): the server (`Server`, the `Simulation.server` generator written as states, calling
  the `Simulation`'s own handlers, which keep every record and every error message), the job
  executors (`Job`: start, sleep against the walltime, end, report), the submitters
  (`Submitter`), the request-reply actor (`Reply`, the `Simulation.request_reply` list).
  Rarer actors (waiters of CALL_ME_LATER, killers, executors of composed profiles) run the full
  engine's generators as they are (`Gen`).
- The common dates take shortcuts where nothing else can interleave (see each one for the
  exact conditions, those under which the engine itself delivers its messages at once): a
  step that wakes one job or submitter while the server waits hands its message over without
  a transfer and runs the server's handling at once (`Lean.quiet_wake`); a scheduler reply
  made only of quiet decisions is applied without rounds, decision after decision as the rounds
  would (`Lean.quiet_reply`); a step that wakes a single sleeper is taken without the
  engine's general step (`Lean.step`). A debug line at the end counts them.

`why_not(sim)` chooses, before the run, from the inputs and the peer: anything this kernel does
not cover (profiles other than delays and composed sequences of delays, energy, platform
profiles, dynamic jobs, user SimPy code or signals or sources, peers bound to the simulation,
the legacy and batprotocol rules, batsim timing) runs the full engine (`sim/engine.py` with
`Simulation.server`), with one debug log line saying why; `BATSIM_PY_LEAN=0` in the
environment forces the full engine (tests compare both). `Simulation.kernel` says which one
ran ("lean" or "engine").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from batsim_py.decision import events as ev
from batsim_py.decision.decisions import ExecuteJob, RejectJob, SetJobMetadata
from batsim_py.sim.engine import (
    GET,
    INF,
    PUT,
    SLEEP,
    SLEEP_UNTIL,
    SPAWN,
    SPAWN_THEN,
    WINDOW,
    Actor,
    Engine,
    sleep_pop,
)
from batsim_py.sim.jobs import job_process
from batsim_py.sim.submitter import sleep_gap, submission_order
from batsim_py.workload.model import ComposedProfile, DelayProfile

if TYPE_CHECKING:
    from batsim_py.sim.jobs import JobRun
    from batsim_py.sim.simulation import Simulation

log = logging.getLogger(__name__)

#: Environment switch: "0" forces the full engine for `--timing ideal` too (tests compare).
SWITCH: Final = "BATSIM_PY_LEAN"

# (Compared by content, never by identity. Typed as variable-length tuples so that mypyc keeps
# one boxed object: a fixed-length Final tuple is boxed anew, a tuple allocated, at each use.)
_GET: Final[tuple[int, ...]] = (GET,)
_READY: Final[tuple[str, ...]] = ("SCHED_READY",)
# Names from interpreted modules read per job, as Final aliases: compiled, a C static each
# instead of a look-up in this module's dict at every use.
_DELAY: Final = DelayProfile
_SET_JOB_METADATA: Final = SetJobMetadata
# What a request-reply actor holds once its events were handed over (never appended to).
_NO_EVENTS: Final[list[Any]] = []


def why_not(sim: Simulation) -> str | None:
    """Why this simulation needs the full engine; None when the lean kernel covers it."""
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
    if o.dynamic_jobs:
        return "dynamic jobs"
    if sim.workflows:
        return "workflows (-W, --WS): their submitters wait for completion callbacks"
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
        names = {job.profile for job in w.jobs}
        if all(type(profiles.get(name)) is DelayProfile for name in names):
            continue  # (the usual case: no walk, and no sort of the names to say which)
        for name in sorted(names):
            reason = _not_delays(name, profiles)
            if reason is not None:
                return f"profile '{name}' of workload {w.name}: {reason}"
    return None


def _not_delays(name: str, profiles: dict[str, Any]) -> str | None:
    """Why profile `name` is not made of delays only (a delay, or composed profiles whose
    tasks are, at any depth); None when it is. Walked with a stack and a set (a cycle is
    reported by the executor, the same way in both kernels)."""
    seen: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        profile = profiles.get(current)
        if type(profile) is DelayProfile:
            continue
        if type(profile) is ComposedProfile:
            stack.extend(profile.seq)
            continue
        kind = getattr(profile, "type", "undefined")
        return f"'{current}' is not a delay ({kind})"
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


def choose(sim: Simulation) -> bool:
    """Pick the kernel of this run (before it starts): True for the lean one. Logged (debug),
    and kept in `sim.kernel`."""
    reason = why_not(sim)
    if reason is None:
        sim.kernel = "lean"
        log.debug("kernel: lean (--timing ideal at job granularity, sim/lean.py)")
        return True
    sim.kernel = "engine"
    if sim.options.timing == "ideal":
        log.debug("kernel: full engine (sim/engine.py): %s", reason)
    return False


class LeanActor(Actor):
    """An actor whose next request `turn` gives (None: it is over)."""

    def turn(self, k: Lean) -> tuple | None:  # pragma: no cover - overridden
        raise NotImplementedError


class Gen(LeanActor):
    """A `Simulation` generator run as it is (waiters, killers: rare actors)."""

    def turn(self, k: Lean) -> tuple | None:
        try:
            request: tuple = self.send(self.value)
        except StopIteration:
            return None
        return request


class Job(LeanActor):
    """One delay job's executor, as `jobs.job_process` runs it: note the start (machines,
    Pajé), sleep the delay or the walltime, end (records), report to the server."""

    def __init__(self, run: JobRun, host: str) -> None:
        super().__init__(None, run.job.id, host)
        self.run = run
        self.phase = 0
        self.ret = 0

    def turn(self, k: Lean) -> tuple | None:
        phase = self.phase
        run = self.run
        sim = k.sim
        if phase == 0:
            self.phase = 1
            return k.start_job(self, run)
        if phase == 1:
            self.phase = 2
            run.frames.pop()
            sim.on_job_finished(run, self.ret)
            run.actor = None  # (no cycle left for the collector: only a kill needs it)
            if run.state != "COMPLETED_KILLED":  # a kill reports through the killer
                return (PUT, ("JOB_COMPLETED", run), k.cost)
        return None


class Submitter(LeanActor):
    """`submitter._submit` as states: hello, batches of the items due (drift rule), bye."""

    def __init__(self, items: Sequence[Any], dates: list[float], batch_kind: str,
                 bye_kind: str, name: str) -> None:
        super().__init__(None, name, "")
        self.items = items
        self.dates = dates
        self.batch_kind = batch_kind
        self.bye_kind = bye_kind
        self.i = 0
        self.phase = 0  # 0 hello, 1 after hello, 2 scanning, 3 after a sleep, 4 bye sent
        self.current = 0.0
        self.batch: list[Any] = []

    def turn(self, k: Lean) -> tuple | None:
        phase = self.phase
        if phase == 0:
            self.phase = 1
            return (PUT, ("HELLO",), k.cost)
        if phase == 4:
            return None
        if phase == 1:
            self.current = k.engine.now
        elif phase == 3:
            self.current = k.engine.now
            self.batch.append(self.items[self.i])
            self.i += 1
        self.phase = 2
        items = self.items
        dates = self.dates
        n = len(items)
        i = self.i
        current = self.current
        batch = self.batch
        while i < n:
            due = dates[i]
            if due > current:
                self.i = i
                if batch:
                    self.batch = []
                    return (PUT, (self.batch_kind, batch), k.cost)
                self.phase = 3
                return (SLEEP, sleep_gap(due, current))
            batch.append(items[i])
            i += 1
        self.i = i
        if batch:
            self.batch = []
            return (PUT, (self.batch_kind, batch), k.cost)
        self.phase = 4
        return (PUT, (self.bye_kind,), k.cost)


class Reply(LeanActor):
    """Batsim's request-reply actor: the exchange at its first turn, then the requests of
    `Simulation.request_reply` one by one (`SLEEP_UNTIL` a date still ahead, else skipped)."""

    def __init__(self, now: float, events: list[Any]) -> None:
        super().__init__(None, "request-reply", "")
        self.now = now
        self.events = events
        self.requests: list[tuple] | None = None

    def turn(self, k: Lean) -> tuple | None:
        if self.gen is not None:  # registrations: Simulation.reply_messages
            try:
                request: tuple = self.send(self.value)
            except StopIteration:
                return None
            return request
        requests = self.requests
        if requests is None:
            made = k.sim.request_reply(self.now, self.events)
            self.events = _NO_EVENTS  # (handed over)
            if not isinstance(made, list):  # a generator from now on
                self.gen = made
                self.send = made.send
                try:
                    first: tuple = made.send(None)
                except StopIteration:
                    return None
                return first
            self.requests = requests = made
        pos = self.pos
        engine = k.engine
        while pos < len(requests):
            request = requests[pos]
            pos += 1
            if request[0] == SLEEP_UNTIL:
                date: float = request[1]
                if date > engine.now:
                    self.pos = pos
                    return (SLEEP, date - engine.now)
                continue
            self.pos = pos
            return request
        self.pos = pos
        return None


# The server's states: what it does at its next turn.
_BEGIN: Final = 0  # send SIMULATION_BEGINS
_BEGUN: Final = 1  # resumed after creating the first request-reply actor
_GOT: Final = 2  # a message was delivered (its value)
_SPAWNING: Final = 3  # resumed after creating an actor, more to create
_SPAWNED: Final = 4  # resumed after creating its last actor (the scheduler was ready)
_ENDED: Final = 5  # resumed after sending SIMULATION_ENDS


class Server(LeanActor):
    """`Simulation.server` as states, calling the same handlers in the same order."""

    def __init__(self) -> None:
        super().__init__(None, "server", "")
        self.state = _BEGIN
        self.spawn_i = 0

    def turn(self, k: Lean) -> tuple | None:
        sim = k.sim
        state = self.state
        if state == _GOT:
            msg: tuple = self.value
            self.value = None
            kind: str = msg[0]  # (typed: compared natively, not through rich comparisons)
            if kind == "DECISION":
                sim.on_decision(msg)
            elif kind == "SCHED_READY":
                sim.on_sched_ready(msg)
            elif kind == "JOB_COMPLETED":
                sim.on_job_completed(msg)
            elif kind == "JOBS":
                sim.on_jobs_submitted(msg)
            else:
                k.handle(msg)
            if sim._spawns:
                self.spawn_i = 0
                return self.next_spawn(k)
            return self.check(k)
        if state == _SPAWNING:
            return self.next_spawn(k)
        if state == _SPAWNED:
            sim._spawns.clear()
            return self.check(k)
        if state == _BEGIN:
            sim.events.append(sim.simulation_begins())
            self.state = _BEGUN
            return (SPAWN_THEN, k.call(), None)
        if state == _ENDED:
            sim.end_sent = True
        if sim.end_acknowledged:
            return None
        self.state = _GOT
        return _GET

    def next_spawn(self, k: Lean) -> tuple:
        """The server's loop over the actors a handling created (`Simulation.server`)."""
        sim = k.sim
        spawns = sim._spawns
        i = self.spawn_i
        request, run = spawns[i]
        child = k.child(request, run)
        if i == len(spawns) - 1:
            if not sim.sched_ready:
                spawns.clear()
                self.state = _GOT
                return (SPAWN_THEN, child, _GET)
            self.state = _SPAWNED
        else:
            self.spawn_i = i + 1
            self.state = _SPAWNING
        return (SPAWN, child)

    def check(self, k: Lean) -> tuple | None:
        """Call the scheduler if it is ready, nothing waits and something is pending; end the
        simulation once everything is over; else receive again."""
        sim = k.sim
        if sim.sched_ready and not sim.end_acknowledged and not k.engine.mailbox.queue:
            if sim.events:
                self.state = _GOT
                return (SPAWN_THEN, k.call(), _GET)
            if not sim.end_sent and sim.nb_submitters_done == sim.nb_submitters \
                    and sim.everything_done():
                if sim.on_end is not None:
                    sim.on_end()
                sim.events.append(ev.SimulationEnds(sim.stamp()))
                self.state = _ENDED
                return (SPAWN_THEN, k.call(), None)
        if sim.end_acknowledged:
            return None
        self.state = _GOT
        return _GET


class Lean:
    """One run of the lean kernel over a `Simulation` (see the module's docstring)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.engine: Engine = sim.engine
        sim.lean_jobs = True
        self.quiet_replies = 0  # replies applied without rounds (quiet_reply)
        self.quiet_wakes = 0  # messages handed over at once after a step (quiet_wake)
        self.quick_steps = 0  # steps that woke one sleeper, taken by `step`
        self.cost = sim.master_cost  # every message is free and instant in ideal timing
        # The request-reply actor of the last reply applied quietly: dropped by then, it is
        # reused by the next call (one actor less to make and free per scheduler call).
        self.spare: Reply | None = None
        self.handlers: dict[str, Callable[[tuple], None]] = {
            "HELLO": _ignore,
            "BYE": sim.on_submitter_bye,
            "WAITING_DONE": sim.on_waiting_done,
            "KILLING_DONE": sim.on_killing_done,
            "REGISTERED": sim.on_job_registered,
            "PROFILE_REGISTERED": _ignore,
            "EVENTS": sim.on_external_events,
            "EVENTS_BYE": sim.on_event_submitter_bye,
            "FROM_JOB_MSG": sim.on_from_job_msg,
        }

    def handle(self, msg: tuple) -> None:
        self.handlers[msg[0]](msg)

    def call(self) -> Reply:
        """Hand the pending events over: the request-reply actor (`call_scheduler`)."""
        sim = self.sim
        events = sim.take_events()
        spare = self.spare
        if spare is not None:
            self.spare = None
            spare.now = self.engine.now
            spare.events = events
            spare.dead = False
            return spare
        return Reply(self.engine.now, events)

    def child(self, request: Any, run: JobRun | None) -> LeanActor:
        """The actor a server handling asked for: a job's executor, or a generator's."""
        if request is None:
            assert run is not None
            if type(run.profile) is _DELAY:
                child: LeanActor = Job(run, run.host)
            else:  # composed of delays (why_not): the full engine's executor, as it is
                child = Gen(job_process(self.sim, run), run.job.id, run.host)
        else:
            child = Gen(request[1], request[2], request[3])
        if run is not None:
            run.actor = child  # (kills reach the job's executor through it)
        return child

    def start_job(self, job: Job, run: JobRun) -> tuple:
        """A job's first turn (`jobs.job_process` up to its sleep): its request."""
        sim = self.sim
        run.starting_time = now = self.engine.now
        sim.machine_states.job_starts(run.alloc, now)
        paje = sim.paje
        if paje is not None:
            paje.job_starts(run.job.id, run.alloc, now)
        profile: Any = run.profile
        assert type(profile) is _DELAY  # (why_not: delay profiles only)
        run.frames.append([profile, now])
        delay = profile.delay
        walltime = run.job.walltime
        if walltime < 0 or delay < walltime:
            job.ret = profile.ret
            return (SLEEP, delay)
        job.ret = -1
        return (SLEEP, walltime)

    def try_quiet_reply(self, to_run: list[Actor], server: Server) -> bool:
        """`quiet_reply` if the round about to run is a new request-reply actor and the
        server's receive, nothing waits in the mailbox, no message is in flight and no sleep
        ends within `WINDOW`; True if it applied the reply (the server has "ready")."""
        engine = self.engine
        if not (len(to_run) == 2 and type(to_run[0]) is Reply and to_run[1] is server
                and _is_get(server.pending) and not engine.mailbox.queue
                and not engine._instant):
            return False
        reply = cast(Reply, to_run[0])
        heap = engine._sleeps
        if reply.requests is not None or reply.gen is not None or (
                heap and heap[0].end <= engine.now + WINDOW):
            return False
        if self.quiet_reply(reply, server):
            self.quiet_replies += 1
            self.spare = reply  # (dead, and dropped from the round by the caller)
            return True
        return False

    def quiet_reply(self, reply: Reply, server: Server) -> bool:
        """The scheduler's reply applied without rounds, when nothing else can interleave.

        Called where a round would run the new request-reply actor and the server's receive
        (`to_run` is exactly those two), nothing waits in the mailbox, no message is in flight
        and no sleep ends within `WINDOW`. The rounds would then do, in this order: the
        exchange; per decision, the server's handling and, for EXECUTE_JOB, the executor's
        first turn (its start and sleep); then the server's handling of the "ready" message.
        Nothing else can run in between if every decision is *quiet*: an EXECUTE_JOB of a
        delay job that sleeps longer than `WINDOW` (a shorter one could end in the zero-time
        step that delivers the next message), a REJECT_JOB or a SET_JOB_METADATA, all at the
        reply's date (no SLEEP_UNTIL). Then this applies them in that order and leaves the
        server to handle "ready" in the next round; otherwise (False) the rounds run as usual,
        the exchange already made (its requests kept by `reply`).
        """
        sim = self.sim
        engine = self.engine
        answer = sim.ask(reply.now, reply.events)
        reply.events = _NO_EVENTS  # (its events are the scheduler's now)
        clock = engine.now
        decisions = answer.decisions
        quiet = answer.now <= clock
        if quiet:
            runs = sim.runs
            for decision in decisions:
                if decision.timestamp > clock:
                    quiet = False
                    break
                kind = type(decision)
                if kind is ExecuteJob:
                    run = runs.get(cast(ExecuteJob, decision).job_id)
                    if run is None:
                        quiet = False
                        break
                    profile = run.profile
                    if type(profile) is not _DELAY:
                        quiet = False
                        break
                    walltime = run.job.walltime
                    delay = profile.delay
                    if not (walltime < 0 or delay < walltime):
                        delay = walltime
                    if not delay > WINDOW:
                        quiet = False
                        break
                elif kind is not RejectJob and kind is not _SET_JOB_METADATA:
                    quiet = False
                    break
        if not quiet:  # the rounds run the requests (`Simulation.reply_requests`)
            made = sim.reply_requests(answer)
            if isinstance(made, list):
                reply.requests = made
            else:  # registrations: a generator
                reply.gen = made
                reply.send = made.send
            return False
        spawns = sim._spawns
        for decision in decisions:
            sim.apply_decision(decision)
            if spawns:
                _, run = spawns[0]
                spawns.clear()
                assert run is not None
                job = Job(run, run.host)
                run.actor = job
                job.phase = 1
                engine.sleep(job, self.start_job(job, run)[1])
        reply.dead = True
        server.pending = None
        server.value = _READY
        server.state = _GOT
        return True

    def quiet_wake(self, server: Server) -> bool:
        """A step woke one job executor or submitter, the server waits for a message and
        nothing else is pending: its message is handed to the server at once.

        The rounds would run it (its completion or its batch), post its message, which the
        waiting server takes (a transfer of no time), then deliver it when nothing else runs:
        a zero-time step if a sleep ends within `WINDOW` (excluded here: a sleep shorter than
        SimGrid's precision would end in that step too), else at once, waking the server then
        the sender. This does the same without the transfer and its round.
        """
        engine = self.engine
        to_run = engine.to_run
        mailbox = engine.mailbox
        if len(to_run) != 1 or mailbox.waiting is not server or mailbox.queue \
                or engine._instant:
            return False
        actor = to_run[0]
        if type(actor) is not Job and type(actor) is not Submitter:
            return False
        heap = engine._sleeps
        if heap and heap[0].end <= engine.now + WINDOW:
            return False
        sender = cast(LeanActor, actor)
        request = sender.turn(self)
        to_run.clear()
        if request is None:
            sender.dead = True
            sender.value = None
        elif request[0] == PUT:
            self.quiet_wakes += 1
            mailbox.waiting = None
            server.value = request[1]
            sender.value = None
            # The round that follows, without the loop: the server handles the message, then
            # the sender's next turn; their requests in that order. The server then usually
            # calls the scheduler: that round is the quiet reply's, if it applies.
            to_server = server.turn(self)
            to_sender = sender.turn(self)
            if to_server is None:
                server.dead = True
                server.value = None
            else:
                self.handle_request(server, to_server)
            if to_sender is None:
                sender.dead = True
                sender.value = None
            else:
                self.handle_request(sender, to_sender)
            if len(to_run) == 2 and self.try_quiet_reply(to_run, server):
                to_run.clear()
                # The round of "ready": the server's, alone (the request-reply actor is over).
                to_server = server.turn(self)
                if to_server is None:
                    server.dead = True
                    server.value = None
                else:
                    self.handle_request(server, to_server)
        else:
            self.handle_request(sender, request)
        return True

    def handle_request(self, actor: Actor, request: tuple) -> None:
        """One actor's request, after its round (as `Engine.run` handles them)."""
        engine = self.engine
        kind: int = request[0]
        if kind == PUT:
            engine.mailbox.post(actor, request[1], request[2])
        elif kind == GET:
            engine.mailbox.get(actor)
        elif kind == SLEEP:
            engine.sleep(actor, request[1])
        elif kind == SPAWN_THEN:
            engine.to_run.append(request[1])
            actor.value = request[1]
            actor.pending = request[2]
            engine.to_run.append(actor)
        elif kind == SPAWN:
            engine.to_run.append(request[1])
            actor.value = request[1]
            engine.to_run.append(actor)
        else:  # pragma: no cover - programming error
            raise ValueError(f"lean kernel: unexpected request {request!r}")

    def run(self) -> None:
        """Rounds and steps until nothing can happen any more (as `Engine.run`)."""
        sim = self.sim
        engine = self.engine
        for workload in sim.workloads:
            items = submission_order(workload)
            engine.to_run.append(Submitter(items, [j.subtime for j in items], "JOBS", "BYE",
                                           f"{workload.name}_submitter"))
        for events in sim.event_lists:
            engine.to_run.append(Submitter(events.events, [e.timestamp for e in events.events],
                                           "EVENTS", "EVENTS_BYE", f"{events.name}_submitter"))
        server = Server()
        engine.to_run.append(server)
        ran: list[LeanActor] = []
        requests: list[tuple] = []
        spare: list[Actor] = []
        while True:
            to_run = engine.to_run
            while to_run:
                if len(to_run) == 2 and self.try_quiet_reply(to_run, server):
                    to_run.clear()
                    to_run.append(server)
                engine.to_run = spare
                ran.clear()
                requests.clear()
                for a in to_run:
                    actor: LeanActor = a  # type: ignore[assignment]
                    if actor.dead:
                        continue
                    pending = actor.pending
                    if pending is not None:  # known without a turn (SPAWN_THEN)
                        actor.pending = None
                        ran.append(actor)
                        requests.append(pending)
                        continue
                    request = actor.turn(self)
                    if request is None:
                        actor.dead = True
                        actor.value = None
                    else:
                        ran.append(actor)
                        requests.append(request)
                # Requests are handled after the whole round, in the order the actors ran.
                for i in range(len(ran)):
                    actor = ran[i]
                    if actor.dead:
                        continue
                    self.handle_request(actor, requests[i])
                to_run.clear()
                spare = to_run
                to_run = engine.to_run
            if engine._instant and engine._deliver_instant():
                continue
            if not self.step():
                return
            self.quiet_wake(server)

    def step(self) -> bool:
        """`Engine._step` when it wakes exactly one sleeper: the usual step of a run at job
        granularity, taken without its general machinery (lists of candidates and of what
        ended, the loops over actions, the pushes back); anything else is `Engine._step`'s.

        The step would bring up to date the sleeps ending within `WINDOW` of the earliest
        (here only the earliest: its two children in the heap, the next earliest, end later,
        and no action or message is in flight), advance the clock by its remaining time,
        record that delta, and end it (nothing remains of it): the same dates, the same record.
        """
        engine = self.engine
        heap = engine._sleeps
        if (not heap or engine._actions or engine._dirty or engine.availability is not None
                or engine.on_activity_change is not None):
            return engine._step()
        s = heap[0]
        n = len(heap)
        limit = s.end + WINDOW
        if (s.actor is None or s.guards is not None or (n > 1 and heap[1].end <= limit)
                or (n > 2 and heap[2].end <= limit)):
            return engine._step()
        k = engine._k
        engine._catch_up(s, k)  # (as _step would: it is then up to date, _step's is a no-op)
        delta = s.rem
        now = engine.now
        if not (delta >= 0.0 and delta < INF and now + delta < INF):
            return engine._step()  # (its checks and errors)
        sleep_pop(heap)
        engine.advance(delta)  # (the clock and the step record, as _step keeps them)
        engine._idle = 0
        actor = s.actor
        actor.action = None
        actor.value = None
        engine.to_run.append(actor)
        self.quick_steps += 1
        return True


def run(sim: Simulation) -> None:
    """Simulate `sim` with the lean kernel (`choose(sim)` said it can)."""
    kernel = Lean(sim)
    try:
        kernel.run()
    finally:
        log.debug("lean kernel: %d scheduler replies applied without rounds, %d messages "
                  "handed over at once, %d steps of one sleeper", kernel.quiet_replies,
                  kernel.quiet_wakes, kernel.quick_steps)


def _is_get(request: tuple | None) -> bool:
    """Whether a pending request is the server's receive (GET)."""
    return request is not None and len(request) == 1 and request[0] == GET


def _ignore(msg: tuple) -> None:
    """Submitter hello, profile registered: nothing to do but receive it."""
