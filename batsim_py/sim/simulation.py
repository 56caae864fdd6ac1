"""The server: Batsim's central actor, and the simulation that wires every actor to it.

Everything a scheduler must hear goes through the server. It receives internal messages one at
a time, updates the jobs and machines, and queues protocol events; it hands the queued events
to the decision process only when the scheduler is ready, nothing else is already waiting in
its mailbox and something is pending (batsim-semantics §5.5). The reply is applied by a
request-reply actor that posts one message per decision at the decision's timestamp, then a
"ready" message at the reply's `now`.
"""

from __future__ import annotations

import logging
import os
from collections import ChainMap, deque
from collections.abc import Callable, Generator, Sequence
from functools import partial
from time import perf_counter
from typing import Any, Final, cast

from batsim_py import intervalset
from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.decisions import (
    ExecuteJob,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    SetJobMetadata,
)
from batsim_py.decision.events import JobCompleted, JobSubmitted, SimulationEnds
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import (
    BatsimPyError,
    NotSupportedError,
    SchedulerError,
    SimulationError,
    WorkloadError,
)
from batsim_py.output import jobs_csv
from batsim_py.output.paje import PajeTrace
from batsim_py.platform.model import Machines, Platform
from batsim_py.sharing.lone import lone_transfer
from batsim_py.sim import batexec, io_job, lean
from batsim_py.sim.availability import Availability
from batsim_py.sim.energy import HostEnergy
from batsim_py.sim.energy_trace import EnergyTrace
from batsim_py.sim.engine import (
    EXEC,
    GET,
    PUT,
    PUT_TO,
    SLEEP_UNTIL,
    SPAWN,
    SPAWN_THEN,
    WINDOW,
    Actor,
    Engine,
    scripted,
)
from batsim_py.sim.engine import SLEEP as SLEEP_REQUEST
from batsim_py.sim.failures import crash_jobs
from batsim_py.sim.jobs import JobRun, final_state, job_process
from batsim_py.sim.machines import (
    COMPUTING,
    IDLE,
    SLEEPING,
    SWITCHING_OFF,
    SWITCHING_ON,
    UNAVAILABLE,
    MachineStates,
)
from batsim_py.sim.machines import NAMES as STATE_NAMES
from batsim_py.sim.network import Network
from batsim_py.sim.options import Options
from batsim_py.sim.pstates import COMPUTATION, SLEEP, PStates, Switches
from batsim_py.sim.registration import check_open, register_job, register_profile
from batsim_py.sim.submitter import event_submitter_process, submitter_process
from batsim_py.sim.workflow import workflow_stall, workflow_submitter, workflow_workload
from batsim_py.wire import wire_time
from batsim_py.workload.dax import Workflow
from batsim_py.workload.model import ComposedProfile, DelayProfile, Profile, Workload

log = logging.getLogger(__name__)

MIN_WAIT = 1e-5  # Batsim's smallest CALL_ME_LATER sleep
#: Environment switch: "0" turns the full engine's shortcuts off (quiet_reply): tests compare.
SHORTCUTS: Final = "BATSIM_PY_QUIET"
INF: Final = float("inf")
# latency, lone rate, free, sender host, receiver host, bytes
Cost = tuple[float, float, bool, str, str, float]


class Simulation:
    def __init__(
        self,
        platform: Platform,
        machines: Machines,
        workloads: Sequence[Workload],
        decision: DecisionProcess,
        options: Options | None = None,
        event_lists: Sequence[Any] = (),
        workflows: Sequence[Workflow] = (),
        workflow_jobs_limit: int = 0,
        ignore_beyond_last_workflow: bool = False,
    ) -> None:
        self.platform = platform
        self.machines = machines
        # A workflow is also a workload of Batsim's (named like it, empty at the start): it
        # counts among the job submitters and SIMULATION_BEGINS lists it, after the files'.
        self.workflows = {wf.name: wf for wf in workflows}
        self.workloads = list(workloads) + [workflow_workload(wf) for wf in workflows]
        self.workflow_jobs_limit = workflow_jobs_limit
        self.ignore_beyond_last_workflow = ignore_beyond_last_workflow
        self.nb_workflows_done = 0
        # Jobs whose submitter waits for their end (workflow tasks): id -> its mailbox.
        self.callbacks: dict[str, str] = {}
        self.workflow_actors: dict[str, Actor] = {}  # the workflows' submitters, by name
        self.ignored_tasks: list[str] = []  # workflow jobs dropped by the -k rule
        self.decision = decision
        self.options = options = options or Options()
        self.engine = Engine()
        self.master_host = machines.master.name
        self.engine.master_host = self.master_host
        self.engine.network = network = Network(platform)
        self.energy_trace: EnergyTrace | None = None
        self.machine_host = [network.host_index[m.host.name] for m in machines.all]
        self.switches = Switches()
        self.nb_switching = 0
        self.nb_grouped_switches = 0
        self.nb_machine_switches = 0
        self.pstates = PStates(machines.all, platform.path) if options.energy else None
        if options.energy:
            hosts = HostEnergy(self.engine, network, list(platform.hosts.values()))
            self.energy_trace = EnergyTrace(
                hosts, [network.host_index[m.host.name] for m in machines.all]
            )
            self.energy_trace.initial_pstates([m.host.pstate for m in machines.all])
            def update(indices: list[int], starting: bool) -> None:
                # SimGrid updates a host unconditionally as a single-host execution starts,
                # but only if time passed when an activity ends.
                for h in indices:
                    if starting:
                        hosts.update(h)
                    else:
                        hosts.action_ended(h)

            self.engine.on_activity_change = update
        self.hosts = [m.host.name for m in machines.all]
        self.machines_by_host = {m.host.name: m for m in machines.all}
        self.nb_compute = len(machines.compute)
        self.profiles_of = {w.name: dict(w.profiles) for w in self.workloads}
        self.registration_finished = False
        self._static_ids: set[str] | None = None  # see static_ids
        self._costs: dict[str, Cost] = {}
        self.master_cost: Cost = (0.0, float("inf"), True, "", "", 1.0)  # set by run()

        self.runs: dict[str, JobRun] = {}  # the jobs Batsim still knows
        # Final state of the jobs Batsim forgot (their end was sent to the scheduler): their
        # run records are dropped, a million-job run would otherwise keep them all. `ended`
        # gives them, made from the job records on first use only (see there).
        self._ended: dict[str, str] | None = None
        self.events: list[Any] = []
        self.sched_ready = False
        self.end_sent = False
        self.end_acknowledged = False
        # Called once every job is over, before SIMULATION_ENDS is sent: the outputs are then
        # final and are written at once, whatever the scheduler does with that last message.
        self.on_end: Callable[[], None] | None = None
        self.decided_after_end = False  # the reply to SIMULATION_ENDS held decisions
        self.nb_submitters = len(self.workloads)
        self.nb_submitters_done = 0
        self.event_lists = list(event_lists)
        self.had_unavailable = False  # some machine was made unavailable (an external event)
        self.nb_event_submitters_done = 0
        self.nb_submitted = 0
        self.nb_completed = 0
        self.nb_running = 0
        self.nb_waiters = 0
        self.nb_killers = 0
        self._spawns: list[Any] = []
        self._stamp_of = -1.0
        self._stamp = 0.0
        self._to_forget: list[str] = []

        self.machine_states = MachineStates(
            len(machines), self.nb_compute, options.machine_state_tracing
        )
        self.job_records: list[jobs_csv.JobRecord] = []
        # One object per distinct contiguous allocation, kept by the job records and the trace
        # (a million jobs on 1,024 hosts: 70 MB less).
        self.allocations: dict[int, range] = {}  # by first machine x (nb + 1) + length
        self.paje = (PajeTrace([m.host.name for m in machines.all])
                     if options.schedule_tracing else None)
        if platform.traces:  # speed, bandwidth, latency profiles (sim/availability.py)
            self.engine.availability = Availability(self)
        self.scheduling_time = 0.0
        # User code (batsim_py.sim.simpy_env, sources, signals): absent unless a user asks.
        self._env: Any = None
        self.signals: Any = None  # batsim_py.sim.signals.Signals once user code listens
        self.user_sources: dict[str, Any] = {}  # user-driven submitters, by workload/list name
        self.stopped = False  # ended early by user code (Simulator.stop)
        self.started = False
        self.end_hooks: list[Any] = []  # user code called once the simulation is over
        # Which kernel ran: "engine" (sim/engine.py + `server`) or "lean" (sim/lean.py, chosen
        # by `lean.choose` for the --timing ideal runs it covers).
        self.kernel = "engine"
        self.lean_jobs = False  # the lean kernel runs the jobs: execute_job spawns no generator
        self._server: Actor | None = None  # the server's actor (full engine)
        # Scheduler replies applied without rounds (quiet_reply), counted; False: never
        # (BATSIM_PY_QUIET=0 in the environment; tests compare both).
        self.quiet_replies = 0
        self.quiet_wakes = 0  # messages handed to the server without rounds (quiet_wake)
        self._submitters: list[Actor] = []  # the workloads' submitters (full engine)
        self.shortcuts = os.environ.get(SHORTCUTS, "") != "0"

    @property
    def ended(self) -> dict[str, str]:
        """The final state of each job Batsim forgot (its end was sent to the scheduler), by id.

        Only decisions about such jobs (an error, or a message to a job that is over), dynamic
        job registrations and user sources ask: it is made from the job records when first
        asked (a record whose job is no longer in `runs` is a forgotten job's: a job's record
        is written as it ends, it is forgotten at the next call to the scheduler, and its state
        no longer changes in between), then kept up to date; a run that never asks does not
        keep a million-entry dict."""
        if self._ended is None:
            runs = self.runs
            self._ended = {r.job.id: r.final_state for r in self.job_records
                           if r.job.id not in runs}
        return self._ended

    @property
    def static_ids(self) -> set[str]:
        """The ids of the workloads' jobs (and of the jobs user sources added), which a dynamic
        job may not take: made on first use, since a run without dynamic jobs or user sources
        never needs it (a million-job run would keep a 30 MB set)."""
        if self._static_ids is None:
            self._static_ids = {j.id for w in self.workloads for j in w.jobs}
        return self._static_ids

    def user_signals(self) -> Any:
        """The signal hub user code listens to (`batsim_py.sim.signals`), made on first use."""
        if self.signals is None:
            from batsim_py.sim.signals import Signals

            signals = self.signals = Signals(self.env)
            self.machine_states.listener = lambda now: signals.fire("machines_changed", now)
        return self.signals

    @property
    def env(self) -> Any:
        """The SimPy face of this simulation (`batsim_py.sim.simpy_env.KernelEnvironment`),
        made on first use: a run that never asks for it has no SimPy code at all."""
        if self._env is None:
            from batsim_py.sim.simpy_env import KernelEnvironment

            self._env = KernelEnvironment(self.engine)
        return self._env

    # ----------------------------------------------------------------- messages
    def cost(self, host: str) -> Cost:
        """How a 1-byte message from `host` to the master (the server) travels, cached."""
        c = self._costs.get(host)
        if c is None:
            c = self._costs[host] = self.cost_between(host, self.master_host, 1.0)
        return c

    def cost_between(self, src: str, dst: str, nbytes: float) -> Cost:
        """How a message of `nbytes` from `src` to `dst` travels: alone on its route it takes
        the latency, then `nbytes` at the lone rate (messages sharing links with tasks are
        re-solved by the engine from `src`, `dst` and `nbytes`)."""
        if self.options.timing == "ideal":
            return (0.0, float("inf"), True, src, dst, nbytes)
        route = self.platform.route(src, dst)
        lat, rate, free = lone_transfer(
            route.latency, [link.bandwidth for link in route.links], nbytes
        )
        return (lat, rate, free, src, dst, nbytes)

    def stamp(self) -> float:
        """The timestamp of an event created now, as the protocol shows it (6 decimals).

        Schedulers only ever see Batsim's `%.6f` times; giving in-process schedulers the same
        values makes them decide exactly as they would over ZeroMQ.
        """
        now = self.engine.now
        if now != self._stamp_of:  # events often share a date: format it once
            self._stamp_of = now
            self._stamp = wire_time(now)
        return self._stamp

    def spawn(self, gen: Any, name: str = "", host: str = "", run: JobRun | None = None) -> None:
        """Create an actor from a server handler (the server yields for it after handling);
        `run`: the job it executes, which keeps a handle on its executor (kills)."""
        self._spawns.append(((SPAWN, gen, name, host), run))

    # ------------------------------------------------------------------- server
    def server(self) -> Generator[tuple, Any, None]:
        engine = self.engine
        mailbox = engine.mailbox
        self.events.append(self.simulation_begins())
        yield self.send_to_scheduler()
        handlers = {
            "JOBS": self.on_jobs_submitted,
            "JOB_COMPLETED": self.on_job_completed,
            "SCHED_READY": self.on_sched_ready,
            "DECISION": self.on_decision,
            "HELLO": _ignore,
            "BYE": self.on_submitter_bye,
            "WAITING_DONE": self.on_waiting_done,
            "KILLING_DONE": self.on_killing_done,
            "REGISTERED": self.on_job_registered,
            "PROFILE_REGISTERED": _ignore,
            "SWITCHED": self.on_switched,
            "EVENTS": self.on_external_events,
            "EVENTS_BYE": self.on_event_submitter_bye,
            "FROM_JOB_MSG": self.on_from_job_msg,
        }
        spawns = self._spawns
        get = (GET,)
        pending = mailbox.queue  # Batsim's mailbox_empty check: is a message posted already?
        # The next receive, or the last spawn of a handling merged with it (SPAWN_THEN): the
        # server, resumed after that spawn, would only find itself not ready to call the
        # scheduler (sched_ready is False) and receive again, so the engine does it.
        receive: tuple = get
        while not self.end_acknowledged:
            msg = yield receive
            receive = get
            kind: str = msg[0]  # (the usual messages first, called natively)
            if kind == "DECISION":
                self.on_decision(msg)
            elif kind == "SCHED_READY":
                self.on_sched_ready(msg)
            elif kind == "JOB_COMPLETED":
                if self.callbacks:
                    box = self.callbacks.pop(msg[1].job.id, None)
                    if box is not None:
                        # Batsim calls the submitter back first, blocking until it receives
                        # the message, and only then stamps the completion.
                        yield (PUT_TO, ("CALLBACK", msg[1].job.id), self.master_cost, box)
                self.on_job_completed(msg)
            elif kind == "JOBS":
                self.on_jobs_submitted(msg)
            else:
                handlers[kind](msg)
            if spawns:
                last = len(spawns) - 1
                for i, (request, run) in enumerate(spawns):
                    if i == last and not self.sched_ready:
                        child = Actor(request[1], request[2], request[3])
                        if run is not None:
                            run.actor = child
                        receive = (SPAWN_THEN, child, get)
                        break
                    child = yield request
                    if run is not None:
                        run.actor = child  # the job whose executor this is
                spawns.clear()
                if receive is not get:
                    continue
            if self.sched_ready and not self.end_acknowledged and not pending:
                if self.events:
                    if self.options.end_in_last_batch and not self.end_sent:
                        self.end_with_batch()
                    receive = (SPAWN_THEN, self.call_scheduler(), get)
                elif not self.end_sent:
                    if self.nb_submitters_done == self.nb_submitters and self.everything_done():
                        if self.on_end is not None:
                            self.on_end()
                        self.events.append(ev.SimulationEnds(self.stamp()))
                        yield self.send_to_scheduler()
                        self.end_sent = True
                    elif self.user_sources:
                        self.close_idle_sources()

    def end_with_batch(self) -> None:
        """Legacy protocol: if this batch reports the end of everything, SIMULATION_ENDS
        joins it (seed 001's `...|T:C:w0!2|T:Z`)."""
        if self.nb_submitters_done == self.nb_submitters and self.everything_done():
            if self.on_end is not None:
                self.on_end()
            self.events.append(ev.SimulationEnds(self.stamp()))
            self.end_sent = True

    def everything_done(self) -> bool:
        return (
            self.nb_submitters_done == self.nb_submitters
            and self.nb_event_submitters_done == len(self.event_lists)
            and (not self.options.dynamic_jobs or self.registration_finished)
            and self.nb_completed == self.nb_submitted
            and self.nb_running == 0
            and self.nb_waiters == 0
            and self.nb_killers == 0
            and self.nb_switching == 0
        )

    def close_idle_sources(self) -> None:
        """Close the open user sources that do not keep the simulation going (failures, ...)
        once nothing else does: Batsim's end condition, those sources aside."""
        lazy = [s for s in self.user_sources.values() if s.is_open and not s.keep_alive]
        if not lazy:
            return
        jobs = sum(1 for s in lazy if s.kind == "jobs")
        if (self.nb_submitters_done + jobs == self.nb_submitters
                and self.nb_event_submitters_done + len(lazy) - jobs == len(self.event_lists)
                and (not self.options.dynamic_jobs or self.registration_finished)
                and self.nb_completed == self.nb_submitted and self.nb_running == 0
                and self.nb_waiters == 0 and self.nb_killers == 0 and self.nb_switching == 0):
            for source in lazy:
                source.close(auto=True)

    def send_to_scheduler(self) -> tuple:
        """Hand the pending events over: the request creating the request-reply actor (the
        server resumes after it)."""
        return (SPAWN_THEN, self.call_scheduler(), None)

    def call_scheduler(self) -> Actor:
        """Hand the pending events over: the request-reply actor, for the server to create."""
        events = self.take_events()
        return scripted(partial(self.request_reply, self.engine.now, events), "request-reply")

    def take_events(self) -> list[Any]:
        """The pending events, for the scheduler now (jobs reported earlier are forgotten)."""
        events, self.events = self.events, []
        if self.signals is not None:
            self.signals.fire("scheduler_called", tuple(events))
        # Batsim forgets a job once its end was sent (or it was rejected): touching it later
        # is the scheduler's mistake (batsim-semantics §3.5).
        runs = self.runs
        ended = self._ended
        for job_id in self._to_forget:
            run = runs.pop(job_id)
            if ended is not None:
                ended[job_id] = run.state
            for task in run.abandoned:  # deleting the job drops its last task reference
                self.engine.drop_task(task)
        self._to_forget.clear()
        self.sched_ready = False
        return events

    def request_reply(self, now: float, events: list[Any]) -> list[tuple] | Generator:
        """Batsim's request-reply actor: the exchange with the scheduler, then one message per
        decision at the decision's timestamp, then "ready" at the reply's `now`. Its requests
        as a list (a scripted actor), or a generator when a decision must be parsed as its
        message is sent (registrations)."""
        return self.reply_requests(self.ask(now, events))

    def shortcut(self, to_run: list[Actor]) -> None:
        """The engine's `shortcut` (`--timing batsim`): a round of one or two actors that
        nothing else can interleave with is done without rounds (`quiet_wake`,
        `quiet_reply`)."""
        if len(to_run) == 2:
            self.quiet_reply(to_run)
        else:
            self.quiet_wake(to_run)

    def quiet_wake(self, to_run: list[Actor]) -> None:
        """A job's executor or a submitter alone in its round, the server waiting for a
        message: its message handed over without a transfer's actor and rounds.

        The rounds would resume it, start its message (alone in the system when no sleep
        ends within `WINDOW` of its arrival: its latency, then its byte), wake the server
        then the sender, and run them in that order: the server handles the message and, its
        scheduler ready, calls it (or receives again); the sender goes on. For a job's
        completion or a batch of jobs this does the same without the transfer's action and
        the server's resume, and goes on with the scheduler's reply (`quiet_reply`); other
        messages are delivered and the rounds run the server as usual. An actor whose
        request is not such a message keeps it for its round (`Actor.pending`).
        """
        actor = to_run[0]
        if actor.dead or actor.pending is not None or actor.script is not None:
            return
        engine = self.engine
        mailbox = engine.mailbox
        server = self._server
        if (mailbox.waiting is not server or server is None or mailbox.queue
                or mailbox.guard is not None or engine._actions or engine._instant
                or self.signals is not None or self._env is not None or self.end_acknowledged):
            return
        run = self.runs.get(actor.name)
        executor = run is not None and run.actor is actor
        if not executor and actor not in self._submitters:
            return
        try:
            request: tuple = actor.send(actor.value)
        except StopIteration:
            actor.dead = True
            actor.value = None
            to_run.clear()
            return
        what: int = request[0]
        if what != PUT:
            actor.pending = request
            return
        cost: tuple = request[2]
        latency: float = cost[0]
        rate: float = cost[1]
        if cost[2] or not latency > 0.0 or not rate > 0.0:
            actor.pending = request
            return
        seconds = 1.0 / rate
        now = engine.now
        if engine.next_end() <= now + latency + seconds + WINDOW \
                or not (now + latency) + seconds < INF:
            actor.pending = request  # (not alone: the rounds and steps decide)
            return
        engine.transfer(latency, seconds)
        msg: tuple = request[1]
        kind: str = msg[0]
        mailbox.waiting = None
        actor.value = None
        if (kind != "JOB_COMPLETED" and kind != "JOBS") or self._spawns:
            server.value = msg  # delivered: the server's round handles it
            to_run.append(server)
            to_run.reverse()  # (the server first: it was waiting when the message came)
            return
        # The round of the server and the sender, the server's turn done here.
        self.quiet_wakes += 1
        if kind == "JOB_COMPLETED":
            self.on_job_completed(msg)
        else:
            self.on_jobs_submitted(msg)
        to_run.clear()
        # The server calls the scheduler (its mailbox is empty) or receives again.
        calling = self.sched_ready and not self.end_acknowledged
        events: list[Any] = self.take_events() if calling else []
        if not calling:
            mailbox.get(server)
        if executor:
            # A job's executor ends after its message (`jobs.job_process`): its last resume
            # would only stop it. Dropped unfinished (no code runs: no cycle left either).
            actor.dead = True
            actor.gen = None
            actor.send = None
        else:
            try:
                after: tuple = actor.send(None)
            except StopIteration:
                actor.dead = True
            else:
                engine.handle(actor, after)
        if calling:
            # The next round would be the request-reply actor's and the server's receive.
            now = engine.now
            if not to_run and self.may_reply_quietly():
                self.reply_quietly(now, events, None, server, to_run)
            else:  # (what the server's SPAWN_THEN would have put first in the next round)
                reply = scripted(partial(self.request_reply, now, events), "request-reply")
                server.pending = _GET
                to_run[0:0] = [reply, server]

    def quiet_reply(self, to_run: list[Actor]) -> None:
        """A scheduler's reply applied without rounds, when nothing else can interleave
        (`--timing batsim`, the engine's `shortcut`).

        Called before a round of two actors. When they are a new request-reply actor and the
        server about to receive (the round after a call to the scheduler), nothing is in
        flight (`Engine.quiet`) and no sleep ends within `WINDOW` of the whole exchange, the
        rounds would do, in this order: the exchange; per decision, a sleep until its date if
        it is still ahead, its message to the server (alone in the system: its latency, then
        its byte), the server's handling and, for EXECUTE_JOB, the executor's first turn (its
        start and sleep); then the same for "ready" at the reply's `now`. Nothing else can
        run in between when every decision is an EXECUTE_JOB of a delay job sleeping longer
        than the exchange (plus `WINDOW`), a REJECT_JOB or a SET_JOB_METADATA. Then this does
        those steps (`Engine.advance`, `Engine.transfer`: the same deltas recorded the same
        way) and handlings in that order and leaves the server alone in the round, with
        "ready" delivered. Otherwise the round runs as usual, the exchange already made (the
        request-reply actor then has its requests).
        """
        reply_actor = to_run[0]
        server = to_run[1]
        start = reply_actor.start
        pending = server.pending
        if (server is not self._server or start is None or pending is None
                or len(pending) != 1 or pending[0] != GET or not self.may_reply_quietly()):
            return
        reply_actor.start = None
        args: tuple = start.args
        self.reply_quietly(args[0], args[1], reply_actor, server, to_run)

    def may_reply_quietly(self) -> bool:
        """What `reply_quietly` needs before the exchange: nothing in flight, no user code,
        a message to the master that is a plain lone transfer and no sleep ending within
        `WINDOW` of one."""
        engine = self.engine
        if not engine.quiet() or self.signals is not None or self._env is not None:
            return False
        cost = self.master_cost
        latency: float = cost[0]
        rate: float = cost[1]
        if cost[2] or not latency > 0.0 or not rate > 0.0:
            return False
        return engine.next_end() > engine.now + (latency + 1.0 / rate) + 2 * WINDOW

    def reply_quietly(self, now: float, events: list[Any], reply_actor: Actor | None,
                      server: Actor, to_run: list[Actor]) -> None:
        """The exchange of a call made at `now` with `events`, and its reply applied without
        rounds when it is quiet (see `quiet_reply`); else the request-reply actor
        (`reply_actor`, or a new one) is left with its requests, before the server's receive,
        in `to_run`."""
        engine = self.engine
        cost = self.master_cost
        latency: float = cost[0]
        seconds = 1.0 / cost[1]
        comm = latency + seconds
        clock = engine.now
        first_end = engine.next_end()
        answer = self.ask(now, events)
        decisions = answer.decisions
        reply_now = answer.now
        quiet = True
        latest = clock  # the latest decision date
        shortest = INF  # the shortest sleep of the jobs started
        runs = self.runs
        for decision in decisions:
            kind = type(decision)
            if kind is ExecuteJob:
                run = runs.get(cast(ExecuteJob, decision).job_id)
                if (run is None or type(run.profile) is not _DELAY
                        or cast(ExecuteJob, decision).additional_io_job is not None):
                    quiet = False
                    break
                delay = cast(DelayProfile, run.profile).delay
                walltime = run.job.walltime
                if not (walltime < 0 or delay < walltime):
                    delay = walltime
                if delay < shortest:
                    shortest = delay
            elif kind is not RejectJob and kind is not _SET_JOB_METADATA:
                quiet = False
                break
            timestamp = decision.timestamp
            if timestamp > latest:
                latest = timestamp
        if quiet:
            end = latest if latest > reply_now else reply_now
            end = end + (len(decisions) + 1) * comm + WINDOW  # (beyond the exchange's end)
            quiet = end < INF and first_end > end + WINDOW and shortest > end - clock + WINDOW
        if not quiet:  # the rounds run the requests (`reply_requests`)
            made = self.reply_requests(answer)
            if reply_actor is None:  # (to_run is empty: see quiet_wake)
                reply_actor = scripted(None, "request-reply")
                server.pending = _GET
                to_run[0:0] = [reply_actor, server]
            if isinstance(made, list):
                reply_actor.script = made
            else:  # registrations: a generator from now on
                reply_actor.script = None
                reply_actor.gen = made
                reply_actor.send = made.send
            return
        self.quiet_replies += 1
        spawns = self._spawns
        for decision in decisions:
            if latest > engine.now and decision.timestamp > engine.now:
                engine.advance(decision.timestamp - engine.now)
            engine.transfer(latency, seconds)
            self.apply_decision(decision)
            if spawns:  # the job's executor, and its first turn
                for request, run in spawns:
                    child = Actor(request[1], request[2], request[3])
                    assert run is not None
                    run.actor = child
                    first: tuple = child.send(None)  # (a delay job: its sleep)
                    assert first[0] == SLEEP_REQUEST
                    engine.sleep(child, first[1])
                spawns.clear()
        if reply_now > engine.now:
            engine.advance(reply_now - engine.now)
        engine.transfer(latency, seconds)
        if reply_actor is not None:
            reply_actor.dead = True
        server.pending = None
        # "ready" delivered: the server's turn, done here unless it ends the simulation.
        if (self.events or self.end_sent or self.user_sources
                or (self.nb_submitters_done == self.nb_submitters and self.everything_done())):
            server.value = _SCHED_READY
            to_run.clear()
            to_run.append(server)
            return
        self.sched_ready = True
        to_run.clear()
        engine.mailbox.get(server)

    def reply_requests(self, reply: d.Reply) -> list[tuple] | Generator:
        """The requests of the request-reply actor once the reply came (`request_reply`)."""
        cost = self.master_cost
        requests: list[tuple] = []
        append = requests.append
        # A date not ahead now never will be (the clock only moves on): no sleep to ask for.
        clock = self.engine.now
        for decision in reply.decisions:
            kind = type(decision)
            if kind is RegisterProfile or kind is RegisterJob:
                return self.reply_messages(reply)
            if decision.timestamp > clock:
                append((SLEEP_UNTIL, decision.timestamp))
            append((PUT, ("DECISION", decision), cost))  # (decision_message's other cases)
        if reply.now > clock:
            append((SLEEP_UNTIL, reply.now))
        append((PUT, _SCHED_READY, cost))
        return requests

    def reply_messages(self, reply: d.Reply) -> Generator[tuple, Any, None]:
        """The messages of a reply that registers jobs or profiles: each registration is
        parsed as its turn comes, like Batsim (a registration after NOTIFY
        registration_finished is refused once that notification was handled)."""
        engine = self.engine
        cost = self.master_cost
        for decision in reply.decisions:
            msg = self.decision_message(decision)
            if decision.timestamp > engine.now:
                yield (SLEEP_REQUEST, decision.timestamp - engine.now)
            yield (PUT, msg, cost)
        if reply.now > engine.now:
            yield (SLEEP_REQUEST, reply.now - engine.now)
        yield (PUT, _SCHED_READY, cost)

    def ask(self, now: float, events: list[Any]) -> d.Reply:
        """The decision process's reply to one batch (its time counted, its failure named)."""
        t0 = _perf_counter()
        try:
            decision = self.decision
            if type(decision) is InProcess:  # (compiled with this module: a native call)
                reply = cast(InProcess, decision).exchange(now, events)
            else:
                reply = decision.exchange(now, events)
        except BatsimPyError:
            raise
        except Exception as exc:  # a bug in an in-process scheduler: name it, keep outputs
            import traceback

            frames = traceback.extract_tb(exc.__traceback__)
            at = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            raise SchedulerError(
                f"scheduler failed at t={now:f} while handling "
                f"{', '.join(type(e).__name__ for e in events)}: {type(exc).__name__}: {exc}"
                f"{at}"
            ) from exc
        finally:
            self.scheduling_time += _perf_counter() - t0
        if reply.decisions and type(events[-1]) is _SIMULATION_ENDS:
            self.decided_after_end = True
        return reply

    def decision_message(self, decision: Any) -> tuple:
        """What the request-reply actor posts to the server for one decision (registrations
        are parsed as the reply is read, like Batsim)."""
        kind = type(decision)
        if kind is ExecuteJob:  # the usual decision: nothing to do before it is sent
            return ("DECISION", decision)
        if kind is d.RegisterProfile or kind is d.RegisterJob:
            check_open(self.options.dynamic_jobs, self.registration_finished, _name(decision))
            if kind is d.RegisterProfile:
                register_profile(decision, self.profiles_of)
                return ("PROFILE_REGISTERED",)
            known = ChainMap(cast("dict[str, object]", self.runs),
                             cast("dict[str, object]", self.ended))
            job = register_job(decision, self.profiles_of, known, self.static_ids)
            self.runs[job.id] = JobRun(job, self.profiles_of[job.workload][job.profile])
            return ("REGISTERED", job)
        return ("DECISION", decision)

    def simulation_begins(self) -> ev.SimulationBegins:
        o = self.options
        config = {
            "redis-enabled": False,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": o.forward_profiles_on_submission,
            "dynamic-jobs-enabled": o.dynamic_jobs,
            "dynamic-jobs-acknowledged": o.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": o.dynamic_jobs and o.profile_reuse,
            "sched-config": o.sched_config,
            "forward-unknown-events": o.forward_unknown_events,
        }

        def resource(m: Any) -> ev.Resource:
            return ev.Resource(
                m.id, m.host.name, "idle", m.host.properties, m.host.zone_properties
            )

        ms = self.machines
        by_name = sorted(self.workloads, key=lambda w: w.name)
        return ev.SimulationBegins(
            timestamp=0.0,
            nb_resources=len(ms),
            nb_compute_resources=len(ms.compute),
            nb_storage_resources=len(ms.storage),
            allow_compute_sharing=o.allow_compute_sharing,
            allow_storage_sharing=o.allow_storage_sharing,
            config=config,
            compute_resources=tuple(resource(m) for m in ms.compute),
            storage_resources=tuple(resource(m) for m in ms.storage),
            workloads={w.name: w.path for w in by_name},
            profiles={w.name: dict(w.profiles) for w in by_name},
        )

    # ----------------------------------------------------------------- handlers
    def on_jobs_submitted(self, msg: tuple) -> None:
        if self.ignore_beyond_last_workflow and self.workflows and self.nb_workflows_done == 1:
            # Batsim's -k rule compares the finished workflow submitters with
            # `Workflows::size()`, which returns a bool: it ignores submissions while exactly
            # one workflow is over (with two workflows, again once both are).
            if len(msg) > 2:  # a workflow's task: its submitter will wait for it forever
                self.ignored_tasks.extend(job.id for job in msg[1])
            return
        if len(msg) > 2:  # a workflow's task: its submitter is called back at its end
            for job in msg[1]:
                self.callbacks[job.id] = msg[2]
        now = self.stamp()
        forward = self.options.forward_profiles_on_submission
        runs = self.runs
        events = self.events
        profiles_of = self.profiles_of
        for job in msg[1]:
            profile = profiles_of[job.workload][job.profile]
            runs[job.id] = JobRun(job, profile)
            events.append(JobSubmitted(now, job, profile if forward else None))
        self.nb_submitted += len(msg[1])
        if self.signals is not None:
            for job in msg[1]:
                self.signals.fire("job_submitted", job)

    def on_job_registered(self, msg: tuple) -> None:
        self.nb_submitted += 1
        if self.options.acknowledge_dynamic_jobs:
            job = msg[1]
            forward = self.options.forward_profiles_on_submission
            run = self.runs[job.id]
            self.events.append(ev.JobSubmitted(self.stamp(), job, run.profile if forward else None))

    def on_submitter_bye(self, msg: tuple) -> None:
        self.nb_submitters_done += 1
        if self.nb_submitters_done == self.nb_submitters:
            self.events.append(ev.Notify(self.stamp(), "no_more_static_job_to_submit"))
        if len(msg) > 1:  # a workflow's submitter
            self.nb_workflows_done += 1

    def on_event_submitter_bye(self, msg: tuple) -> None:
        self.nb_event_submitters_done += 1
        if self.nb_event_submitters_done == len(self.event_lists):
            self.events.append(ev.Notify(self.stamp(), "no_more_external_event_to_occur"))

    def on_external_events(self, msg: tuple) -> None:
        """Machines become (un)available; other events are forwarded as they are (§8)."""
        now = self.engine.now
        states = self.machine_states
        for event in msg[1]:
            if event.type == "generic":
                self.events.append(ev.Notify(self.stamp(), "generic", data=event.description))
                continue
            unavailable = event.type == "machine_unavailable"
            if unavailable:
                self.had_unavailable = True
            for m in event.resources:
                where = f"external event {event.type} at t={event.timestamp:f}"
                if m >= len(self.hosts):
                    raise WorkloadError(f"{where}: machine {m} does not exist")
                if unavailable:
                    if states.state[m] == UNAVAILABLE:
                        raise WorkloadError(f"{where}: machine {m} is already unavailable")
                    states.set(m, UNAVAILABLE, now)
                else:
                    if states.state[m] != UNAVAILABLE:
                        raise WorkloadError(f"{where}: machine {m} is not unavailable")
                    states.set(m, COMPUTING if states.nb_jobs[m] else IDLE, now)
            if unavailable and self.options.unavailable_kills:
                crash_jobs(self, event.resources)  # legacy `F`: the jobs' `C` come first
            kind = "event_machine_unavailable" if unavailable else "event_machine_available"
            self.events.append(ev.Notify(self.stamp(), kind, resources=event.resources))
            if self.signals is not None:
                self.signals.fire("machines_changed", now)

    def on_from_job_msg(self, msg: tuple) -> None:
        """A `send` profile's message (sim/job_messages.py), for the scheduler."""
        _, run, data = msg
        self.events.append(ev.FromJobMsg(self.stamp(), run.job.id, data))

    def to_job_msg(self, decision: d.ToJobMsg) -> None:
        """Kept in the job's inbox for its `recv` profiles (Batsim only needs the job to
        exist: a message to a job that is over is kept and never read)."""
        if decision.job_id in self.ended:
            return
        run = self.job_for(decision, decision.job_id)
        if run.inbox is None:
            run.inbox = deque()
        run.inbox.append(decision.msg)

    def on_sched_ready(self, msg: tuple) -> None:
        self.sched_ready = True
        if self.end_sent:
            self.end_acknowledged = True
            if self._env is not None:
                self._env.close()  # user processes stop with the simulation

    def on_waiting_done(self, msg: tuple) -> None:
        self.events.append(ev.RequestedCall(self.stamp()))
        self.nb_waiters -= 1

    def on_job_completed(self, msg: tuple) -> None:
        run: JobRun = msg[1]
        self.nb_running -= 1
        self.nb_completed += 1
        self.events.append(
            JobCompleted(self.stamp(), run.job.id, run.state, run.return_code, run.alloc)
        )
        self.write_job_row(run)

    def on_killing_done(self, msg: tuple) -> None:
        _, ids, progress = msg
        now = self.stamp()
        for job_id in ids:
            run = self.runs.get(job_id)  # None: it ended on its own and was reported already
            if run is not None and run.state == "COMPLETED_KILLED" and not run.reported:
                run.reported = True
                self.nb_running -= 1
                self.nb_completed += 1
                self.events.append(
                    ev.JobCompleted(now, job_id, run.state, run.return_code, run.alloc)
                )
                self.write_job_row(run)
        self.events.append(
            ev.JobKilled(now, tuple(ids), {k: progress[k] for k in sorted(progress)})
        )
        self.nb_killers -= 1

    def on_decision(self, msg: tuple) -> None:
        self.apply_decision(msg[1])

    def apply_decision(self, decision: Any) -> None:
        """Apply one of the scheduler's decisions now (the server's handling of its message;
        the quiet replies apply theirs here too)."""
        kind = type(decision)
        if kind is ExecuteJob:
            self.execute_job(decision)
        elif kind is d.RejectJob:
            self.reject_job(decision)
        elif kind is d.CallMeLater:
            self.call_me_later(decision)
        elif kind is d.KillJob:
            self.kill_jobs(decision)
        elif kind is d.SetJobMetadata:
            self.job_for(decision, decision.job_id).metadata = decision.metadata
        elif kind is d.NotifyDecision:
            self.registration_finished = decision.type == "registration_finished"
        elif kind is d.ChangeJobState:
            self.change_job_state(decision)
        elif kind is d.ToJobMsg:
            self.to_job_msg(decision)
        elif kind is d.ChangeHostsPState:  # (batprotocol: the energy model is optional)
            if self.energy_trace is not None:
                self.set_resource_state(decision)
            else:
                self.change_pstates_now(decision)
        elif kind is d.Query or kind is d.SetResourceState:
            if self.energy_trace is None:
                raise SchedulerError(
                    f"{_name(decision)} at t={self.engine.now:f} needs the energy model: "
                    "run with -E/--energy"
                )
            if kind is d.Query:
                self.events.append(ev.Answer(self.stamp(), float(self.energy_trace.total())))
            else:
                self.set_resource_state(decision)
        else:
            raise NotSupportedError(
                f"decision {_name(decision)} (t={decision.timestamp:f}) is not yet supported "
                "by batsim-py"
            )

    # ---------------------------------------------------------------- decisions
    def job_for(self, decision: Any, job_id: str) -> JobRun:
        run = self.runs.get(job_id)
        if run is None:
            state = self.ended.get(job_id)
            if state is not None:
                raise SchedulerError(
                    f"{_name(decision)} at t={self.engine.now:f}: job '{job_id}' is over "
                    f"({state}) and was already reported to the scheduler"
                )
            raise SchedulerError(
                f"{_name(decision)} at t={self.engine.now:f}: job '{job_id}' does not exist "
                "(not submitted yet, or unknown id)"
            )
        return run

    def execute_job(self, decision: d.ExecuteJob) -> None:
        now = self.engine.now
        job_id = decision.job_id
        run = self.runs.get(job_id)
        if run is None:
            run = self.job_for(decision, job_id)  # (raises the error)
        if run.state != "SUBMITTED":
            where = _execute_where(decision, now)
            raise SchedulerError(
                f"{where}: the job is {run.state}, only a SUBMITTED job can be executed"
            )
        alloc = decision.alloc
        mapping = decision.mapping
        hosts = self.hosts
        nb = len(hosts)
        if type(alloc) is range:  # (its bounds without a look-up per item)
            block = cast(range, alloc)
            n = len(block)
            lo = block.start
            hi = lo + n if block.step == 1 else (block[-1] + 1 if n else -1)
        else:
            n = len(alloc)
            lo, hi = (alloc[0], alloc[-1] + 1) if n else (0, -1)
        if not (n and 0 <= lo and hi <= nb and hi - lo == n
                and _all_idle(self.machine_states.state, lo, hi)):
            if not n:
                raise SchedulerError(f"{_execute_where(decision, now)}: the allocation is empty")
            # Not a block of idle machines (the usual case, where nothing runs): check each.
            self._check_machines(alloc, _execute_where(decision, now))
        job = run.job
        executors = len(mapping) if mapping is not None else n
        if executors != job.res and not _is_total(run.profile, self.profiles_of[job.workload]):
            raise SchedulerError(
                f"{_execute_where(decision, now)}: the job requests {job.res} machines but "
                f"{executors} were given "
                f"(alloc '{intervalset.format(alloc)}'); use a mapping to run several "
                "executors per machine"
            )
        if mapping is not None:
            for i in mapping:
                if i < 0 or i >= len(alloc):
                    raise SchedulerError(f"{_execute_where(decision, now)}: mapping value {i} is "
                                         f"not in [0, {len(alloc)})")
        if decision.additional_io_job is not None:
            self.additional_io_job(run, decision)
        run.state = "RUNNING"
        if hi - lo == n and type(alloc) is range:
            # One object per block (`allocations`), found by its bounds: an int's hash is
            # cheaper than a range's, and a range equals any other of the same items.
            key = lo * (nb + 1) + n
            shared = self.allocations.get(key)
            if shared is None:
                self.allocations[key] = shared = cast(range, alloc)
            alloc = shared
        run.alloc = alloc
        run.mapping = mapping
        run.storage_mapping = decision.storage_mapping
        if decision.profile_overrides is not None:  # (batprotocol; checked by the EDC peer)
            run.overrides = {name: (a, m) for name, a, m in decision.profile_overrides}
        run.host = hosts[lo]
        self.nb_running += 1
        if self.lean_jobs:
            self._spawns.append((None, run))
        else:
            self.spawn(job_process(self, run), run.job.id, run.host, run)
        if self.signals is not None:
            self.signals.fire("job_started", run.job)

    def additional_io_job(self, run: JobRun, decision: d.ExecuteJob) -> None:
        if decision.mapping is not None or decision.storage_mapping is not None:
            raise SchedulerError(
                f"{_execute_where(decision, self.engine.now)}: additional_io_job cannot come "
                "with a mapping or a storage_mapping (Batsim accepts at most one of the three)")
        io = decision.additional_io_job
        assert io is not None
        run.io_profile = io_job.resolve(io, run.job.id, run.profile,
                                        self.profiles_of[run.job.workload], len(self.hosts))
        run.io_alloc = io.alloc

    def _check_machines(self, alloc: Sequence[int], where: str) -> None:
        """Every machine of an allocation exists, may take the job and can compute now."""
        nb = len(self.hosts)
        states = self.machine_states
        o = self.options
        for m in alloc:
            if m < 0 or m >= nb:
                raise SchedulerError(
                    f"{where}: machine {m} does not exist (machines are 0-{nb - 1})"
                )
            is_compute = m < self.nb_compute
            if states.nb_jobs[m] and not (
                o.allow_compute_sharing if is_compute else o.allow_storage_sharing
            ):
                raise SchedulerError(
                    f"{where}: machine {m} ({self.hosts[m]}) is already running a job and "
                    f"{'compute' if is_compute else 'storage'} sharing is disabled "
                    "(use --enable-compute-sharing to allow it)"
                )
            if states.state[m] not in (IDLE, COMPUTING):
                raise SchedulerError(
                    f"{where}: machine {m} ({self.hosts[m]}) cannot compute now (it is "
                    f"{STATE_NAMES[states.state[m]]})"
                )

    def reject_job(self, decision: d.RejectJob) -> None:
        run = self.job_for(decision, decision.job_id)
        if run.state != "SUBMITTED":
            raise SchedulerError(
                f"REJECT_JOB of job '{decision.job_id}' at t={self.engine.now:f}: the job is "
                f"{run.state}, only a SUBMITTED job can be rejected"
            )
        run.state = "REJECTED"
        self.nb_completed += 1
        self.write_job_row(run)

    def set_resource_state(self, decision: d.SetResourceState) -> None:
        """Switch machines' pstates (§2.5); sleeping and waking take actors and time."""
        now = self.engine.now
        where = f"SET_RESOURCE_STATE at t={now:f}"
        target = decision.state
        assert self.pstates is not None and self.energy_trace is not None  # (on_decision: -E)
        kinds = self.pstates.kinds
        for m in decision.resources:
            if not 0 <= m < len(self.hosts):
                raise SchedulerError(f"{where}: machine {m} does not exist")
            if not 0 <= target < len(kinds[m]):
                raise SchedulerError(
                    f"{where}: machine {m} ({self.hosts[m]}) has no pstate {target} "
                    f"(pstates 0-{len(kinds[m]) - 1})"
                )
        trace = self.energy_trace
        machines = decision.resources
        self.switches.add(machines, target)
        trace.entry(now, "p")
        first_kind = kinds[machines[0]][target]
        code = -1 if first_kind == COMPUTATION else -2 if first_kind == SLEEP else -42
        trace.pstate_change(now, machines, code)
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(machines)
        network = self.engine.network
        for m in machines:
            current = network.pstate[self.machine_host[m]]
            if kinds[m][current] == COMPUTATION:
                if kinds[m][target] == COMPUTATION:
                    self.set_pstate(m, target)
                    self.switch_done(m, target)
                elif kinds[m][target] == SLEEP:
                    if self.machine_states.nb_jobs[m]:
                        raise SchedulerError(
                            f"{where}: machine {m} ({self.hosts[m]}) cannot sleep: it is "
                            "running a job"
                        )
                    self.machine_states.set(m, SWITCHING_OFF, now)
                    self.spawn(self.switch_off(m, target), "switch off", self.hosts[m])
                    self.nb_switching += 1
                else:
                    log.error("%s: machine %d cannot switch to the virtual pstate %d",
                              where, m, target)
            elif kinds[m][current] == SLEEP:
                if kinds[m][target] != COMPUTATION:
                    raise SchedulerError(
                        f"{where}: machine {m} ({self.hosts[m]}) sleeps in pstate {current}; "
                        f"it can only be woken to a computation pstate, not {target}"
                    )
                self.machine_states.set(m, SWITCHING_ON, now)
                self.spawn(self.switch_on(m, target), "switch on", self.hosts[m])
                self.nb_switching += 1
            else:
                raise SchedulerError(
                    f"{where}: machine {m} ({self.hosts[m]}) is already switching"
                )
        self.machine_states.write_row(now)

    def change_pstates_now(self, decision: d.SetResourceState) -> None:
        """ChangeHostsPStateEvent without the energy model (Batsim 5 needs no energy plugin
        for it): every host's pstate, so its speed, changes at once, running jobs included
        (DVFS); acknowledged at once with the same hosts."""
        now = self.engine.now
        where = f"ChangeHostsPStateEvent at t={now:f}"
        target = decision.state
        machines = self.machines.all
        for m in decision.resources:
            if not 0 <= m < len(self.hosts):
                raise SchedulerError(f"{where}: host {m} does not exist (hosts are "
                                     f"0-{len(self.hosts) - 1})")
            speeds = machines[m].host.speeds
            if not 0 <= target < len(speeds):
                raise SchedulerError(f"{where}: host {m} ({self.hosts[m]}) has no pstate "
                                     f"{target} (pstates 0-{len(speeds) - 1})")
        for m in decision.resources:
            self.set_pstate(m, target)
        self.events.append(ev.ResourceStateChanged(self.stamp(), decision.resources,
                                                   str(target)))

    def set_pstate(self, machine: int, pstate: int) -> None:
        h = self.machine_host[machine]
        network = self.engine.network
        network.pstate[h] = pstate
        self.engine.set_speed(h, self.machines.all[machine].host.speeds[pstate])
        trace = self.energy_trace
        if trace is not None:
            trace.hosts.update(h)  # SimGrid's plugin updates on a speed change

    def switch_off(self, machine: int, target: int) -> Generator[tuple, Any, None]:
        assert self.pstates is not None
        off, _ = self.pstates.sleep[machine][target]
        yield from self.switch(machine, off, target, SLEEPING)

    def switch_on(self, machine: int, target: int) -> Generator[tuple, Any, None]:
        current = self.engine.network.pstate[self.machine_host[machine]]
        assert self.pstates is not None
        _, on = self.pstates.sleep[machine][current]
        yield from self.switch(machine, on, target, IDLE)

    def switch(self, machine: int, virtual: int, target: int, state: int
               ) -> Generator[tuple, Any, None]:
        """One flop at the virtual pstate's speed, then the target pstate."""
        host = self.hosts[machine]
        self.set_pstate(machine, virtual)
        network = self.engine.network
        yield (EXEC, lambda: network.row([host], [1.0], None), -1)
        self.set_pstate(machine, target)
        self.machine_states.set(machine, state, self.engine.now)
        yield (PUT, ("SWITCHED", machine, target), self.cost(host))

    def on_switched(self, msg: tuple) -> None:
        _, machine, target = msg
        machines = self.switches.done(machine, target)
        self.nb_switching -= 1
        if machines is not None:
            self.request_done(machines, target)

    def switch_done(self, machine: int, target: int) -> None:
        machines = self.switches.done(machine, target)
        if machines is not None:
            self.request_done(machines, target, row=False)

    def request_done(self, machines: tuple[int, ...], target: int, row: bool = True) -> None:
        now = self.engine.now
        assert self.energy_trace is not None
        self.energy_trace.pstate_change(now, machines, target)
        self.energy_trace.entry(now, "p")
        if row:
            self.machine_states.write_row(now)
        self.events.append(ev.ResourceStateChanged(self.stamp(), machines, str(target)))

    def change_job_state(self, decision: d.ChangeJobState) -> None:
        """For schedulers that run jobs themselves: no protocol event, a row when it ends."""
        run = self.job_for(decision, decision.job_id)
        now = self.engine.now
        new = decision.job_state
        where = f"CHANGE_JOB_STATE of job '{decision.job_id}' at t={now:f}"
        if run.state == "SUBMITTED" and new == "RUNNING":
            run.starting_time = now
            self.nb_running += 1
        elif run.state == "SUBMITTED" and new == "REJECTED":
            run.state = new
            self.nb_completed += 1
            self.write_job_row(run)
        elif run.state == "RUNNING" and new.startswith("COMPLETED_"):
            run.state = new
            run.end_time = now
            self.nb_running -= 1
            self.nb_completed += 1
            self.write_job_row(run)
        else:
            raise SchedulerError(
                f"{where}: a {run.state} job cannot become {new} (allowed: SUBMITTED -> "
                "RUNNING or REJECTED, RUNNING -> COMPLETED_*)"
            )
        run.state = new

    def call_me_later(self, decision: d.CallMeLater) -> None:
        now = self.engine.now
        if decision.at <= now and not self.options.v5_semantics:
            raise SchedulerError(
                f"CALL_ME_LATER at t={now:f}: you asked to be awaken in the past or now "
                f"(you ask: {decision.at:f}, it is: {now:f}); ask for a strictly later time"
            )
        self.spawn(self.waiter(decision.at), "waiter")
        self.nb_waiters += 1

    def waiter(self, at: float) -> Generator[tuple, Any, None]:
        now = self.engine.now
        if now < at:
            yield (SLEEP_REQUEST, max(at - now, MIN_WAIT))
        if not self.end_sent:
            yield (PUT, ("WAITING_DONE",), self.cost(self.master_host))

    def kill_jobs(self, decision: d.KillJob) -> None:
        ids: list[str] = []
        for job_id in decision.job_ids:
            run = self.job_for(decision, job_id)
            if run.kill_requested:
                continue
            if run.state not in ("RUNNING",) and not run.state.startswith("COMPLETED"):
                raise SchedulerError(
                    f"KILL_JOB at t={self.engine.now:f}: job '{job_id}' is {run.state}, "
                    "neither running nor completed (reject a job that was not started)"
                )
            run.kill_requested = True
            ids.append(job_id)
        if ids:
            self.spawn(self.killer(ids), "killer")
            self.nb_killers += 1

    def killer(self, ids: list[str]) -> Generator[tuple, Any, None]:
        engine = self.engine
        progress = {}
        for job_id in ids:
            run = self.runs[job_id]
            if run.state == "RUNNING":
                now = engine.now
                progress[job_id] = run.progress(now, engine)
                if not engine.cancel_task(run.actor):
                    # Not in a parallel task: the executor dies here (return code stays -1).
                    self.kill_executor(run, now)
                # Else the cancelled task ends the executor's profile with -2.
        yield (PUT, ("KILLING_DONE", ids, progress), self.cost(self.master_host))

    def kill_executor(self, run: JobRun, now: float) -> None:
        """A running job's executor dies now (SimGrid's Actor::kill: its sleep or task ends
        with it, its usage_trace ranks too): the job is killed, its machines freed and its end
        recorded (a KILL_JOB's killer, a legacy crash: sim/failures.py)."""
        engine = self.engine
        engine.kill(run.actor)
        for rank in run.ranks.values():
            engine.kill(rank)
        run.ranks.clear()
        run.state = "COMPLETED_KILLED"
        self.machine_states.job_ends(run.alloc, now)
        self.paje_job_ends(run, now)
        run.end_time = now
        self.job_energy_end(run, now)

    # --------------------------------------------------------------- job events
    def on_job_finished(self, run: JobRun, return_code: int) -> None:
        """Called by the job's executor when its profile is over (before telling the server)."""
        now = self.engine.now
        run.return_code = return_code
        run.state = "COMPLETED_SUCCESSFULLY" if return_code == 0 else final_state(return_code)
        if self.paje is not None and return_code in (-1, -2):
            self.paje.job_killed(run.job.id, run.alloc, now)
        self.machine_states.job_ends(run.alloc, now)
        if self.paje is not None:
            self.paje_job_ends(run, now)
        run.end_time = now
        if self.energy_trace is not None:
            self.job_energy_end(run, now)

    def paje_job_ends(self, run: JobRun, now: float) -> None:
        paje = self.paje
        if paje is not None:
            states = self.machine_states
            # (machines become unavailable only by external events: `on_external_events`)
            unavailable = (() if not self.had_unavailable or not states.nb_unavailable() else
                           {m for m in run.alloc if states.state[m] == UNAVAILABLE})
            paje.job_ends(run.job.id, run.alloc, now, unavailable)

    def job_energy_end(self, run: JobRun, now: float) -> None:
        trace = self.energy_trace
        if trace is not None:
            run.energy = trace.on_machines(run.alloc) - run.energy
            trace.last_completion = trace.entry(now, "e")

    def write_job_row(self, run: JobRun) -> None:
        job = run.job
        self._to_forget.append(job.id)
        self.job_records.append(
            _JOB_RECORD(
                job, run.state, run.starting_time, run.end_time, run.alloc,
                run.energy if self.energy_trace is not None else None, run.metadata,
            )
        )
        if self.signals is not None:
            self.signals.fire("job_completed", self.job_records[-1])

    # ---------------------------------------------------------------------- run
    def run(self) -> None:
        """Simulate until SIMULATION_ENDS was acknowledged; raise the first error."""
        engine = self.engine
        self.started = True
        self.master_cost = self.cost(self.master_host)
        if self.options.no_sched:
            batexec.launch_all(self)
            engine.run()
            self.end_acknowledged = True  # (nobody to tell: the run is over)
            for hook in self.end_hooks:
                hook()
            return
        if lean.choose(self):
            lean.run(self)
            self.check_ended()
            return
        sources = self.user_sources
        for workload in self.workloads:
            if workload.name in sources:  # submitted by user code (batsim_py.sim.sources)
                sources[workload.name].start()
            elif workload.name in self.workflows:
                self.workflow_actors[workload.name] = engine.spawn(
                    workflow_submitter(self, self.workflows[workload.name]),
                    f"workflow_submitter_{workload.name}")
            else:
                self._submitters.append(engine.spawn(submitter_process(self, workload),
                                                     f"{workload.name}_submitter"))
        for events in self.event_lists:
            if events.name in sources:
                sources[events.name].start()
            else:
                engine.spawn(event_submitter_process(self, events), f"{events.name}_submitter")
        self._server = engine.spawn(self.server(), "server")
        if (self.shortcuts and self.options.timing == "batsim" and self.energy_trace is None
                and engine.availability is None and not self.options.end_in_last_batch
                and not lean._binds(self.decision) and not self.workflows):
            # (the shortcuts hand JOB_COMPLETED to its handler directly: no callback)
            engine.shortcut = self.shortcut
        try:
            engine.run()
            while not self.end_acknowledged and self.user_sources:
                # Nothing can happen any more: user sources still open are over.
                still_open = [s for s in self.user_sources.values() if s.is_open]
                if not still_open:
                    break
                for source in still_open:
                    source.close(auto=True)
                engine.run()
        except Stopped:
            self.stopped = True
        if engine.shortcut is not None:
            log.debug("full engine: %d scheduler replies applied without rounds, %d messages "
                      "handed over at once", self.quiet_replies, self.quiet_wakes)
        for hook in self.end_hooks:
            hook()
        if self.stopped:
            return
        self.check_ended()

    def check_ended(self) -> None:
        """Nothing can happen any more: the run is over, or stalled (an error naming why)."""
        engine = self.engine
        if not self.end_acknowledged and self.workflows:
            reason = workflow_stall(self)
            if reason is not None:
                raise SimulationError(reason)
        if not self.end_acknowledged:
            waiting = sorted(j for j, r in self.runs.items() if r.state == "SUBMITTED")
            raise SchedulerError(
                f"simulation stalled at t={engine.now:f}: nothing can happen any more but "
                f"{len(waiting)} job(s) still wait for a decision "
                f"({', '.join(waiting[:5])}{'...' if len(waiting) > 5 else ''}); the scheduler "
                "must execute or reject every job, or ask for a CALL_ME_LATER"
            )


class Stopped(Exception):  # noqa: N818 - a request, not an error
    """Raised through the kernel by user code ending the simulation early."""


def _execute_where(decision: d.ExecuteJob, now: float) -> str:
    """How an error names an EXECUTE_JOB (built only when there is an error)."""
    return f"EXECUTE_JOB of job '{decision.job_id}' at t={now:f}"


_SCHED_READY = ("SCHED_READY",)
_GET: Final[tuple[int, ...]] = (GET,)
# Names from interpreted modules read on the per-job path, as Final aliases: compiled, each is a
# C static instead of a look-up in this module's dict at every use (about 130 instructions).
_perf_counter: Final = perf_counter
_SIMULATION_ENDS: Final = SimulationEnds
_IDLE: Final = IDLE
_JOB_RECORD: Final = jobs_csv.JobRecord
_DELAY: Final = DelayProfile
_SET_JOB_METADATA: Final = SetJobMetadata  # (variable-length: one boxed tuple, see lean._GET)


def _all_idle(state: bytearray, lo: int, hi: int) -> bool:
    """Whether machines `lo` to `hi - 1` are all idle (`state.count(IDLE, lo, hi) == hi - lo`).
    Compiled, a loop over a few machines costs less than the `count` method's call with its
    argument parsing (f_50k, 17 machines a job: 51 M instructions in all -> 35 M); wide
    allocations take `count`."""
    if hi - lo > 32:
        return state.count(_IDLE, lo, hi) == hi - lo
    for m in range(lo, hi):
        if state[m] != _IDLE:
            return False
    return True


def _ignore(msg: tuple) -> None:
    """Submitter hello, profile registered: nothing to do but receive it."""


def _is_total(profile: Profile, profiles: Any) -> bool:
    if profile.type == "parallel_homogeneous_total":
        return True
    if isinstance(profile, ComposedProfile):
        return all(profiles[p].type == "parallel_homogeneous_total" for p in profile.seq)
    return False


_NAMES = {
    d.ExecuteJob: "EXECUTE_JOB", d.RejectJob: "REJECT_JOB", d.KillJob: "KILL_JOB",
    d.CallMeLater: "CALL_ME_LATER", d.SetResourceState: "SET_RESOURCE_STATE",
    d.SetJobMetadata: "SET_JOB_METADATA", d.ChangeJobState: "CHANGE_JOB_STATE",
    d.RegisterJob: "REGISTER_JOB", d.RegisterProfile: "REGISTER_PROFILE",
    d.NotifyDecision: "NOTIFY", d.Query: "QUERY", d.ToJobMsg: "TO_JOB_MSG",
}


def _name(decision: Any) -> str:
    return _NAMES.get(type(decision), type(decision).__name__)
