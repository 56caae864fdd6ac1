"""batsim-py as Flux's job manager, resource module and exec system (RFC 27, seed 004).

A Flux-style scheduler drives the simulation: it speaks RFC 27 (sched-hello, sched-ready,
sched.alloc, sched.free, sched.cancel, sched.prioritize, sched.expiration) and RFC 28
(resource.acquire) inside the lockstep envelope of `protocol/flux/envelope.py`. This peer sits
behind the ordinary decision interface, so the engine, its server batching and its timing
rules are the JSON mode's: each engine call (`exchange`) turns Batsim events into Flux messages
(a submitted job is a `sched.alloc` when the concurrency limit allows, a completed job a
`sched.free` with its R and `final: true`, machines going down `resource.acquire` responses),
sends the batch, and turns the scheduler's answers into Batsim decisions at the reply's `now`
(SUCCESS with a validated R -> EXECUTE_JOB on those ranks, DENY -> REJECT_JOB, `wakeup` ->
CALL_ME_LATER). With `feasibility`, a submitted job is first checked by the scheduler's
`feasibility` service if it registered one (`service.add`), and a refused job is rejected at
submission; a `flux_resource_status` event asks `sched.resource-status` and records the
answer. Requests of the scheduler (handshake) are answered in further round trips at
the same instant, until the scheduler has nothing more to ask: that quiescence is what Flux's
own simulator lacked (flux-core#1566).

Job ids are integers in submission order (1, 2, ...), as Flux's FLUIDs grow with submit time.
Rank i is Batsim compute machine i. Decisions taken here (docs/flux.md lists them all): R is
required in SUCCESS (flux-core), sched-hello responses carry the job's `R` (there is no KVS),
`sched.free` answers of the seed's older RFC revision are accepted and ignored, the expiration
is enforced by Batsim's walltime (and by a kill when moved earlier).
"""

from __future__ import annotations

import bisect
import copy
import csv
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import OutputError, ProtocolError, SchedulerError, WorkloadError
from batsim_py.protocol.flux import annotations as ann
from batsim_py.protocol.flux import envelope as env
from batsim_py.protocol.flux import idset, jobspec, rv1, services
from batsim_py.protocol.flux.envelope import ENODATA, ENOSYS, Message
from batsim_py.wire import wire_time

log = logging.getLogger(__name__)
netlog = logging.getLogger("batsim_py.network")

SUCCESS, ANNOTATE, DENY, CANCEL = 0, 1, 2, 3
DEFAULT_URGENCY = 16
MAX_PRIORITY = 4294967295
MAX_LIMIT = 2147483647
MAX_ROUNDS = 100_000  # round trips at one instant before the scheduler is called stuck


class Transport(Protocol):
    def exchange_text(self, message: str, ending: bool | None = None) -> str: ...

    def close(self) -> None: ...


def priority_of(urgency: int) -> int:
    """flux-core's default priority plugin: priority = urgency, 31 (expedite) is the top."""
    return MAX_PRIORITY if urgency == 31 else urgency


@dataclass(slots=True)
class FluxJob:
    id: int
    batsim_id: str
    res: int
    walltime: float
    urgency: int
    priority: int
    userid: int
    t_submit: float  # simulated seconds (the wire adds the epoch)
    jobspec: dict[str, Any]
    request: jobspec.Request
    state: str = "SCHED"  # NEW (submitted, not yet ingested), SCHED, RUN, CLEANUP, INACTIVE
    alloc_pending: bool = False  # a sched.alloc is outstanding
    cancel_sent: bool = False
    cancelled: bool = False  # the user cancelled it (an exception of type cancel)
    annotations: dict[str, Any] = field(default_factory=dict)
    assignment: rv1.Assignment | None = None
    R: dict[str, Any] | None = None
    starttime: float = 0.0
    expiration: float = 0.0  # simulated seconds, 0: none
    exception: tuple[str, str] | None = None  # (type, note) of the fatal exception
    result: str = ""

    def key(self) -> tuple[int, int]:
        """Queue order: priority descending, then id ascending."""
        return (-self.priority, self.id)


class FluxPeer(DecisionProcess):
    def __init__(self, transport: Transport, *, granularity: str = "node",
                 epoch: float = 0.0, tolerant: bool = False, export_prefix: str | None = None,
                 eventlog: bool = False, log_messages: bool = True,
                 feasibility: bool = False) -> None:
        if granularity not in ("node", "core"):
            raise ValueError(f"granularity must be 'node' or 'core', not {granularity!r}")
        self.transport = transport
        self.granularity = granularity
        self.epoch = epoch
        self.tolerant = tolerant
        self.export_prefix = export_prefix
        self.write_eventlog = eventlog
        # flux-core's job-ingest feasibility validator: each submitted job is checked with
        # feasibility.check when the scheduler registered that service (else accepted).
        self.feasibility = feasibility
        # Every envelope on the `batsim_py.network` logger, as Batsim logs its messages.
        self._log_level = logging.INFO if log_messages else logging.DEBUG
        self.hosts: list[str] = []
        self.cores: list[int] = []
        self.jobs: dict[int, FluxJob] = {}
        self.by_batsim: dict[str, FluxJob] = {}
        self.queue: list[tuple[tuple[int, int], FluxJob]] = []  # SCHED jobs without an alloc
        self.pending: set[int] = set()  # ids with an outstanding sched.alloc
        self.down: set[int] = set()
        self.owner: list[dict[int, int]] = []  # per rank: core -> job id
        self.acquired = False  # resource.acquire answered: up/down go as its responses
        self.online = False  # sched-ready received, not suspended since
        self.mode = "unlimited"
        self.limit = 0
        self.said_hello = False
        self.suspended = False  # by a fault (--flux-tolerant): answers ignored until hello
        self.expirations_asked: list[tuple[int, float]] = []  # sched.expiration in flight
        self.kill_times: set[float] = set()  # our own wake-ups (earlier expirations)
        self.wakeups: set[float] = set()  # the scheduler's
        self.eventlog: list[dict[str, Any]] = []
        self.nb_exchanges = 0
        self.ended = False
        self.outputs_written = False
        self._now = 0.0
        self._decisions: list[Any] = []
        self._out: list[Message] = []
        self._prioritized: list[list[int]] = []  # sched.prioritize entries of this instant
        self.services: set[str] = set()  # registered by the scheduler (service.add)
        self.hello_answered = False  # the scheduler's reply to sim.hello came (its services)
        self.unchecked: list[FluxJob] = []  # NEW jobs waiting for that reply (--feasibility)
        self.checks_asked: list[int] = []  # feasibility.check in flight, in the order sent
        self.status_asked: list[float] = []  # sched.resource-status in flight (asked when)
        self.statuses: list[dict[str, Any]] = []  # their answers (flux_resource_status events)
        self._status_out: list[Message] = []  # sent last in the batch (after the frees)

    # ------------------------------------------------------------------ setup
    def bind_simulation(self, sim: Any) -> None:
        """Learn the compute hosts (names, core counts) of the simulation about to run."""
        self.set_hosts([(m.host.name, m.host.cores) for m in sim.machines.compute])

    def set_hosts(self, hosts: Sequence[tuple[str, int]]) -> None:
        self.hosts = [h for h, _ in hosts]
        self.cores = [max(1, int(c)) for _, c in hosts]
        self.owner = [{} for _ in hosts]

    # --------------------------------------------------------------- exchange
    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        t = wire_time(now)
        self._now = t
        self._decisions = []
        self._out = []
        must_send = False
        ending = False
        for event in events:
            kind = type(event)
            if kind is ev.JobSubmitted:
                self._on_submitted(event.job)
            elif kind is ev.JobCompleted:
                self._on_completed(event)
            elif kind is ev.Notify:
                self._on_notify(event)
            elif kind is ev.RequestedCall:
                must_send |= self._on_wakeup(t)
            elif kind is ev.SimulationBegins:
                if not self.hosts:
                    self.set_hosts([(r.name, 1) for r in event.compute_resources])
                self._out.append(env.request("sim.hello", {"epoch": self.epoch, "version": 1}))
                must_send = True
            elif kind is ev.SimulationEnds:
                ending = True
        self._ingest()
        self._fill_allocs()
        if self._status_out:
            if ending:  # (sim.end's answer is the scheduler's last word: nothing else is read)
                for asked in self.status_asked:
                    self._record_status(asked, {"errnum": ENOSYS, "errstr": "not asked: the "
                                                "simulation ends at that time"})
                self.status_asked = []
            else:
                self._out += self._status_out
            self._status_out = []
        if ending:
            self.write_outputs()
            self._out.append(env.request("sim.end", {}))
        if not self._out and not must_send and not ending:
            return d.Reply(t, tuple(self._decisions))
        rounds = 0
        while True:
            sent = self._wire(self._now)
            text = env.encode(env.Envelope(sent, self._out))
            self._out = []
            netlog.log(self._log_level, "Sending '%s'", text)
            answer = self.transport.exchange_text(text, ending)
            netlog.log(self._log_level, "Received '%s'", answer)
            self.nb_exchanges += 1
            reply = env.decode(answer)
            if reply.now > sent:  # (an echoed now keeps the exact time, whatever the epoch)
                self._now = max(self._now, reply.now - self.epoch)
            if ending:
                if reply.messages:
                    log.debug("the Flux scheduler answered sim.end with %d message(s): "
                              "ignored, the simulation is over", len(reply.messages))
                self.ended = True
                return d.Reply(self._now, ())
            for message in reply.messages:
                self._on_message(message)
            self.hello_answered = True  # (sim.hello went in the first exchange)
            if reply.wakeup is not None:
                self._on_wakeup_asked(reply.wakeup - self.epoch)
            self._ingest()
            self._fill_allocs()
            if not self._out:
                return d.Reply(self._now, tuple(self._decisions))
            rounds += 1
            if rounds >= MAX_ROUNDS:
                raise SchedulerError(
                    f"the Flux scheduler kept asking at t={self._now:f}: {MAX_ROUNDS} round "
                    "trips without reaching quiescence (each reply held requests to answer); "
                    "a scheduler must stop sending requests once it has its answers")

    def _wire(self, t: float) -> float:
        return t + self.epoch if self.epoch else t

    # ------------------------------------------------------------- job events
    def _on_submitted(self, job: Any) -> None:
        desc = job.description
        where = f"job '{job.id}'"
        urgency = desc.get("urgency", DEFAULT_URGENCY)
        if isinstance(urgency, bool) or not isinstance(urgency, int) or not 0 <= urgency <= 31:
            raise WorkloadError(f"{where}: 'urgency' must be an integer 0-31 (Flux urgency, "
                                f"default 16; 0 holds the job), got {urgency!r}")
        userid = desc.get("user", 0)
        if isinstance(userid, bool) or not isinstance(userid, int) or userid < 0:
            userid = 0
        nothing = False
        if "jobspec" in desc:
            spec = desc["jobspec"]
            try:
                request = jobspec.parse(spec, f"{where}: its jobspec")
            except ProtocolError as exc:
                raise WorkloadError(str(exc)) from None
        else:
            spec = jobspec.from_batsim(job.profile, max(job.res, 1), job.walltime,
                                       self.granularity, min(self.cores, default=1))
            request = jobspec.parse(spec, where)
            nothing = job.res < 1  # Batsim loads it but no allocation can run it
        fid = len(self.jobs) + 1
        fj = FluxJob(fid, job.id, job.res, job.walltime, urgency, priority_of(urgency), userid,
                     job.subtime, spec, request)
        if nothing:  # rejected at once, as the Batsim-protocol fcfs and easy do
            self.jobs[fid] = fj
            self.by_batsim[job.id] = fj
            self._event(fj, "submit", {"urgency": urgency, "userid": userid})
            fj.exception = ("alloc", "the job asks for no resource (res 0)")
            self._event(fj, "exception", {"type": "alloc", "severity": 0,
                                          "note": fj.exception[1]})
            self._end_unstarted(fj, "FAILED")
            return
        self.jobs[fid] = fj
        self.by_batsim[job.id] = fj
        if self.feasibility:  # job-ingest asks feasibility.check before the job manager
            fj.state = "NEW"
            self.unchecked.append(fj)
        else:
            self._accept(fj)

    def _ingest(self) -> None:
        """Submitted jobs waiting for ingest (--flux-feasibility): once the scheduler has
        answered sim.hello (where it registers its services), each is checked with
        feasibility.check if the scheduler registered `feasibility`, else accepted (as
        flux-core's validator takes ENOSYS for feasible)."""
        if not self.unchecked or not self.hello_answered:
            return
        for fj in self.unchecked:
            if services.FEASIBILITY in self.services:
                self.checks_asked.append(fj.id)
                self._out.append(env.request("feasibility.check", {"jobspec": fj.jobspec}))
            else:
                self._accept(fj)
        self.unchecked = []

    def _accept(self, fj: FluxJob) -> None:
        """The job manager takes the job (RFC 21 submit): it waits in SCHED for an alloc."""
        fj.state = "SCHED"
        self._event(fj, "submit", {"urgency": fj.urgency, "userid": fj.userid})
        self._event(fj, "priority", {"priority": fj.priority})
        self._event(fj, "depend", {})
        if fj.cancelled:  # cancelled while its feasibility check was in flight
            self._event(fj, "exception", {"type": "cancel", "severity": 0,
                                          "note": "cancelled by the user"})
            self._end_unstarted(fj, "CANCELED")
            return
        self._queue(fj)

    def _feasibility_response(self, m: Message) -> None:
        if not self.checks_asked:
            return self._fatal("answered feasibility.check, which the job manager did not ask "
                               "(one response per request, in the order asked)")
        fj = self.jobs[self.checks_asked[0]]
        try:
            note = services.feasibility_verdict(m)
        except ProtocolError as exc:
            return self._fatal(f"{exc} (job {fj.id}, '{fj.batsim_id}')")
        del self.checks_asked[0]
        if note is None:
            self._accept(fj)
            return
        # Refused at submission: in Flux the submit fails and no job exists (no eventlog);
        # Batsim accounts it as REJECTED, the text kept as DENY's note is.
        fj.exception = ("feasibility", note)
        fj.result = "FAILED"
        fj.state = "INACTIVE"
        self._decisions.append(d.RejectJob(self._now, fj.batsim_id))

    def _queue(self, fj: FluxJob) -> None:
        bisect.insort(self.queue, (fj.key(), fj), key=lambda item: item[0])

    def _unqueue(self, fj: FluxJob) -> None:
        i = bisect.bisect_left(self.queue, fj.key(), key=lambda item: item[0])
        if i < len(self.queue) and self.queue[i][1] is fj:
            del self.queue[i]

    def _on_completed(self, event: ev.JobCompleted) -> None:
        fj = self.by_batsim.get(event.job_id)
        if fj is None or fj.state != "RUN":
            return
        state = event.job_state
        if state == "COMPLETED_WALLTIME_REACHED":
            fj.exception = fj.exception or ("timeout", "resource allocation expired")
        elif state == "COMPLETED_KILLED" and fj.exception is None:
            fj.exception = ("cancel", "killed")
        if fj.exception is not None:
            self._event(fj, "exception", {"type": fj.exception[0], "severity": 0,
                                          "note": fj.exception[1]})
        status = 0 if event.return_code == 0 and fj.exception is None else 256
        self._event(fj, "finish", {"status": status})
        fj.result = (("TIMEOUT" if fj.exception[0] == "timeout" else "CANCELED"
                      if fj.exception[0] == "cancel" else "FAILED") if fj.exception
                     else "COMPLETED" if event.return_code == 0 else "FAILED")
        self._release(fj)

    def _release(self, fj: FluxJob) -> None:
        """CLEANUP: the job's resources go back with one sched.free (final), then INACTIVE."""
        fj.state = "CLEANUP"
        self._event(fj, "release", {"ranks": "all", "final": True})
        assert fj.assignment is not None and fj.R is not None
        for rank, cores in fj.assignment.items():
            owners = self.owner[rank]
            for c in cores:
                if owners.get(c) == fj.id:
                    del owners[c]
        if self.online:  # (a suspended scheduler learns the running jobs at its next hello)
            self._out.append(env.request("sched.free", {"id": fj.id, "R": fj.R, "final": True}))
        self._event(fj, "free", {})
        self._inactive(fj)

    def _inactive(self, fj: FluxJob) -> None:
        fj.state = "INACTIVE"
        self._event(fj, "clean", {})

    def _on_notify(self, event: ev.Notify) -> None:
        if event.type in ("event_machine_unavailable", "event_machine_available"):
            ranks = [m for m in event.resources or () if m < len(self.hosts)]
            if not ranks:
                return
            if event.type == "event_machine_unavailable":
                self.down.update(ranks)
                key = "down"
                self._kill_on(set(ranks))
            else:
                self.down.difference_update(ranks)
                key = "up"
            if self.acquired:
                self._out.append(env.response("resource.acquire", {key: idset.encode(ranks)}))
        elif event.type == "generic" and event.data is not None:
            self._on_external(dict(event.data))

    def _kill_on(self, ranks: set[int]) -> None:
        """Jobs holding a rank that goes down get a fatal exception and are killed."""
        victims = [fj for fj in self.jobs.values()
                   if fj.state == "RUN" and fj.assignment and ranks & set(fj.assignment)
                   and fj.exception is None]
        for fj in victims:
            fj.exception = ("node-fail", f"rank(s) {idset.encode(ranks & set(fj.assignment or ()))}"
                            " went down")
        if victims:
            self._decisions.append(d.KillJob(self._now, tuple(fj.batsim_id for fj in victims)))

    def _on_external(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "flux_resource_status":
            self._ask_status()
            return
        if kind not in ("flux_cancel", "flux_urgency", "flux_expiration"):
            log.debug("external event of type %r ignored by the Flux job manager", kind)
            return
        at = data.get("timestamp", self._now)
        where = f"external event {kind} at t={at:f}"
        fj = self.by_batsim.get(str(data.get("job_id")))
        if fj is None:
            raise WorkloadError(f"{where}: 'job_id' {data.get('job_id')!r} is not a submitted "
                                "job (give a full id like \"w0!3\", submitted before the event)")
        if kind == "flux_cancel":
            self._cancel(fj)
        elif kind == "flux_urgency":
            urgency = data.get("urgency")
            if isinstance(urgency, bool) or not isinstance(urgency, int) or not 0 <= urgency <= 31:
                raise WorkloadError(f"{where}: 'urgency' must be an integer 0-31")
            self._set_urgency(fj, urgency)
        else:
            expiration = data.get("expiration")
            if isinstance(expiration, bool) or not isinstance(expiration, (int, float)):
                raise WorkloadError(f"{where}: 'expiration' must be a number (simulated "
                                    "seconds, absolute)")
            if fj.state != "RUN":
                log.warning("%s: job %s is %s, not running: no allocation to expire, ignored",
                            where, fj.batsim_id, fj.state)
                return
            self.expirations_asked.append((fj.id, float(expiration)))
            value = expiration + self.epoch
            self._out.append(env.request("sched.expiration", {
                "id": fj.id, "expiration": int(value) if float(value).is_integer() else value}))

    def _cancel(self, fj: FluxJob) -> None:
        """A user cancel (RFC 21 exception of type cancel)."""
        if fj.state == "NEW":  # still being checked: cancelled once (if) accepted
            fj.cancelled = True
            fj.exception = ("cancel", "cancelled by the user")
            return
        if fj.state == "RUN":
            if fj.exception is None:
                fj.exception = ("cancel", "cancelled by the user")
                self._decisions.append(d.KillJob(self._now, (fj.batsim_id,)))
            return
        if fj.state != "SCHED" or fj.cancelled:
            return
        fj.cancelled = True
        fj.exception = ("cancel", "cancelled by the user")
        self._event(fj, "exception", {"type": "cancel", "severity": 0, "note": fj.exception[1]})
        if fj.alloc_pending:
            if not fj.cancel_sent:
                fj.cancel_sent = True
                self._out.append(env.request("sched.cancel", {"id": fj.id}))
            fj.state = "CLEANUP"  # it waits there for the alloc's CANCEL (or a late SUCCESS)
        else:
            self._unqueue(fj)
            self._end_unstarted(fj, "CANCELED")

    def _end_unstarted(self, fj: FluxJob, result: str) -> None:
        """A job that never ran: Batsim REJECTED (the job manager's exception is the why)."""
        fj.result = result
        fj.annotations.clear()  # volatile until SUCCESS
        self._decisions.append(d.RejectJob(self._now, fj.batsim_id))
        self._inactive(fj)

    def _set_urgency(self, fj: FluxJob, urgency: int) -> None:
        if fj.state == "NEW":  # still being checked: its priority is set once accepted
            fj.urgency = urgency
            fj.priority = priority_of(urgency)
            return
        if fj.state != "SCHED" or fj.cancelled:
            return
        queued = not fj.alloc_pending
        if queued:
            self._unqueue(fj)
        fj.urgency = urgency
        fj.priority = priority_of(urgency)
        self._event(fj, "urgency", {"urgency": urgency})
        self._event(fj, "priority", {"priority": fj.priority})
        if queued:
            self._queue(fj)
        elif fj.priority == 0:
            if not fj.cancel_sent:  # held: its alloc goes back (it is never sent while held)
                fj.cancel_sent = True
                self._out.append(env.request("sched.cancel", {"id": fj.id}))
        else:
            self._prioritized.append([fj.id, fj.priority])

    def _on_wakeup(self, t: float) -> bool:
        """A CALL_ME_LATER came back: enforce earlier expirations; say whether the scheduler
        asked for this wake-up (it then gets a batch, maybe empty)."""
        due = [k for k in self.kill_times if k <= t]
        for k in due:
            self.kill_times.discard(k)
        if due:
            victims = [fj for fj in self.jobs.values() if fj.state == "RUN"
                       and fj.expiration and fj.expiration <= t and fj.exception is None]
            for fj in victims:
                fj.exception = ("timeout", "resource allocation expired")
            if victims:
                self._decisions.append(d.KillJob(t, tuple(fj.batsim_id for fj in victims)))
        asked = [w for w in self.wakeups if w <= t]
        for w in asked:
            self.wakeups.discard(w)
        return bool(asked)

    def _on_wakeup_asked(self, at: float) -> None:
        if at <= self._now:
            raise SchedulerError(
                f"the Flux scheduler asked for a wakeup at {at + self.epoch:f}, not later than "
                f"now ({self._now + self.epoch:f}); ask for a strictly later time")
        if at not in self.wakeups:
            self.wakeups.add(at)
            self._decisions.append(d.CallMeLater(self._now, at))

    # ------------------------------------------------------------ alloc flow
    def _fill_allocs(self) -> None:
        """Send sched.alloc for queued jobs in priority-then-id order, within the limit;
        in limited mode, a queued job that outranks the lowest pending one has that one
        cancelled (flux-core alloc_queue_recalc_pending)."""
        if self._prioritized:
            self._out.append(env.request("sched.prioritize", {"jobs": self._prioritized}))
            self._prioritized = []
        if not self.online:
            return
        queue = self.queue
        while queue:
            fj = queue[0][1]
            if fj.priority == 0:
                break  # held jobs (and everything behind them) are never sent
            if self.mode == "limited" and len(self.pending) >= self.limit:
                lowest = max((self.jobs[i] for i in self.pending), key=FluxJob.key)
                if fj.key() < lowest.key() and not lowest.cancel_sent:
                    lowest.cancel_sent = True
                    self._out.append(env.request("sched.cancel", {"id": lowest.id}))
                break
            del queue[0]
            fj.alloc_pending = True
            fj.cancel_sent = False
            self.pending.add(fj.id)
            self._out.append(env.request("sched.alloc", {
                "id": fj.id, "priority": fj.priority, "userid": fj.userid,
                "t_submit": self._wire(fj.t_submit), "jobspec": fj.jobspec}))

    # -------------------------------------------------------- scheduler side
    def _on_message(self, m: Message) -> None:
        topic = m.topic
        if m.kind == env.REQUEST:
            payload = m.payload if m.payload is not None else {}
            if topic == "resource.acquire":
                self.acquired = True
                inventory = rv1.build({r: range(self.cores[r]) for r in range(len(self.hosts))},
                                      self.hosts)
                up = [r for r in range(len(self.hosts)) if r not in self.down]
                self._out.append(env.response(topic, {"resources": inventory,
                                                      "up": idset.encode(up)}))
            elif topic == "job-manager.sched-hello":
                self._hello(payload)
            elif topic == "job-manager.sched-ready":
                self._ready(payload)
            elif topic in ("service.add", "service.remove"):
                self._service(topic, m.payload)
            else:
                self._out.append(env.error(topic, ENOSYS, f"no service '{topic}' in the "
                                           "batsim-py job manager"))
            return
        if self.suspended and topic in ("sched.alloc", "sched.free", "feasibility.check",
                                        "sched.resource-status"):
            log.debug("ignored a %s response of the suspended Flux scheduler", topic)
            return
        if topic == "sched.alloc":
            if m.errnum:
                self._fatal(f"answered sched.alloc with an error response (errnum {m.errnum}"
                            f"{': ' + m.errstr if m.errstr else ''}); RFC 27 alloc responses "
                            "carry errnum 0 and the job id, even for DENY")
                return
            self._alloc_response(m.payload)
        elif topic == "sched.free":
            if m.errnum:
                self._fatal(f"answered sched.free with an error response (errnum {m.errnum}"
                            f"{': ' + m.errstr if m.errstr else ''})")
            # else: the seed's RFC revision answered frees with {id}; today's has no response
        elif topic == "sched.expiration":
            self._expiration_response(m)
        elif topic == "feasibility.check":
            self._feasibility_response(m)
        elif topic == "sched.resource-status":
            self._status_response(m)
        elif topic in ("sim.hello", "sim.end"):
            if m.errnum:
                raise SchedulerError(f"the Flux scheduler refused {topic} (errnum {m.errnum}"
                                     f"{': ' + m.errstr if m.errstr else ''})")
        else:
            raise ProtocolError(f"the Flux scheduler sent a response to '{topic}', which the "
                                "job manager never asked (it asks sched.alloc, sched.free, "
                                "sched.expiration, feasibility.check, sched.resource-status, "
                                "sim.hello, sim.end)")

    def _hello(self, payload: dict[str, Any]) -> None:
        if self.online and not self.tolerant:
            raise SchedulerError("the Flux scheduler sent job-manager.sched-hello again while "
                                 "online (a restart needs --flux-tolerant)")
        self._suspend()
        self.suspended = False
        self.said_hello = True
        topic = "job-manager.sched-hello"
        for fj in sorted(self.jobs.values(), key=lambda j: j.id):
            if fj.state == "RUN":
                self._out.append(env.response(topic, {
                    "id": fj.id, "priority": fj.priority, "userid": fj.userid,
                    "t_submit": self._wire(fj.t_submit), "R": fj.R}))
        self._out.append(env.error(topic, ENODATA))

    def _ready(self, payload: dict[str, Any]) -> None:
        topic = "job-manager.sched-ready"
        if not self.said_hello:
            raise ProtocolError("the Flux scheduler sent job-manager.sched-ready before "
                                "job-manager.sched-hello (RFC 27: hello first)")
        mode = payload.get("mode")
        if mode == "limited":
            limit = payload.get("limit")
            if isinstance(limit, bool) or not isinstance(limit, int) or not (
                    1 <= limit <= MAX_LIMIT):
                raise ProtocolError(f"{topic}: limited mode needs 'limit', an integer 1 .. "
                                    f"{MAX_LIMIT}, got {json.dumps(limit)}")
            self.limit = limit
        elif mode != "unlimited":
            raise ProtocolError(f"{topic}: 'mode' must be \"unlimited\" or \"limited\", got "
                                f"{json.dumps(mode)}")
        self.mode = mode
        self.online = True
        count = sum(1 for fj in self.jobs.values() if fj.state == "SCHED")
        self._out.append(env.response(topic, {"count": count}))

    def _suspend(self) -> None:
        """The scheduler is gone: pending allocs are void, their jobs queued again."""
        self.online = False
        for i in sorted(self.pending):
            fj = self.jobs[i]
            fj.alloc_pending = False
            fj.annotations.clear()
            if fj.state == "CLEANUP" and fj.cancelled:  # its CANCEL will never come
                self._end_unstarted(fj, "CANCELED")
            elif fj.state == "SCHED":
                self._queue(fj)
        self.pending.clear()

    def _fatal(self, what: str) -> None:
        """A scheduler fatality (RFC 27 Finalization): stop, or with --flux-tolerant suspend
        scheduling until a new sched-hello and sched-ready."""
        if not self.tolerant:
            raise SchedulerError(f"the Flux scheduler {what} (use --flux-tolerant to suspend "
                                 "scheduling and wait for a new hello instead)")
        log.warning("the Flux scheduler %s: scheduling suspended until a new sched-hello and "
                    "sched-ready (--flux-tolerant)", what)
        self._suspend()
        self.suspended = True
        # A dead scheduler's services go with it: the jobs being checked are accepted, as
        # the validator takes ENOSYS (no service) for feasible; a restart registers again.
        self.services.clear()
        checked, self.checks_asked = self.checks_asked, []
        for fid in checked:
            self._accept(self.jobs[fid])
        for asked in self.status_asked:
            self._record_status(asked, {"errnum": ENOSYS, "errstr": "the scheduler faulted "
                                        "before answering (--flux-tolerant)"})
        self.status_asked = []

    def _service(self, topic: str, payload: Any) -> None:
        """service.add / service.remove: batsim-py is the broker the scheduler registers its
        services with (flux-core's flux_service_register); only `feasibility` changes what
        the job manager does."""
        try:
            name = services.service_name(payload, topic)
            if topic == "service.add":
                if name in self.services:
                    raise services.ServiceRequestError(
                        services.EEXIST, f"service.add: '{name}' is already registered")
                self.services.add(name)
            else:
                if name not in self.services:
                    raise services.ServiceRequestError(
                        services.ENOENT, f"service.remove: '{name}' is not registered")
                self.services.discard(name)
        except services.ServiceRequestError as exc:
            self._out.append(env.error(topic, exc.errnum, str(exc)))
            return
        self._out.append(env.response(topic, None))

    # -------------------------------------------------------- resource status
    def _ask_status(self) -> None:
        """A flux_resource_status event: ask the scheduler its view of the resources
        (`sched.resource-status`, what `flux resource list` falls back to), compared with the job
        manager's when it answers."""
        if not self.online:
            self._record_status(self._now, {
                "errnum": ENOSYS, "errstr": "no scheduler online (before its sched-ready, or "
                "suspended after a fault): not asked"})
            return
        self.status_asked.append(self._now)
        self._status_out.append(env.request("sched.resource-status", {}))

    def _status_response(self, m: Message) -> None:
        if not self.status_asked:
            return self._fatal("answered sched.resource-status, which the job manager did not "
                               "ask")
        if m.errnum:
            self._record_status(self.status_asked.pop(0), {
                "errnum": m.errnum, "errstr": m.errstr or os.strerror(m.errnum)})
            return
        try:
            views = services.resource_status(m.payload)
        except ProtocolError as exc:
            return self._fatal(str(exc))
        ours = self._status_view()
        differences = [{"set": k, "scheduler": rv1.summary(views[k]),
                        "job_manager": rv1.summary(ours[k])}
                       for k in services.STATUS_KEYS if views[k] != ours[k]]
        self._record_status(self.status_asked.pop(0), {
            **{k: m.payload[k] for k in services.STATUS_KEYS},
            "summary": {k: rv1.summary(views[k]) for k in services.STATUS_KEYS},
            "differences": differences})

    def _status_view(self) -> dict[str, rv1.Assignment]:
        """The job manager's own all / allocated / down, to compare with the scheduler's."""
        every = {r: tuple(range(self.cores[r])) for r in range(len(self.hosts))}
        allocated: dict[int, set[int]] = {}
        for fj in self.jobs.values():
            if fj.state == "RUN" and fj.assignment:
                for rank, cores in fj.assignment.items():
                    allocated.setdefault(rank, set()).update(cores)
        return {"all": every,
                "allocated": {r: tuple(sorted(c)) for r, c in sorted(allocated.items())},
                "down": {r: every[r] for r in sorted(self.down)}}

    def _record_status(self, asked: float, answer: dict[str, Any]) -> None:
        entry = {"timestamp": self._wire(asked), **answer}
        if answer.get("errnum"):
            log.warning("sched.resource-status at t=%f: error %d (%s)", asked, answer["errnum"],
                        answer["errstr"])
        elif answer["differences"]:
            log.warning("sched.resource-status at t=%f: the scheduler's view differs from the "
                        "job manager's: %s", asked, "; ".join(
                            f"{d['set']}: scheduler '{d['scheduler']}', job manager "
                            f"'{d['job_manager']}'" for d in answer["differences"]))
        self.statuses.append(entry)

    def _alloc_response(self, p: Any) -> None:
        where = "sched.alloc response"
        if not isinstance(p, dict):
            return self._fatal(f"sent a {where} without payload")
        fid, kind = p.get("id"), p.get("type")
        fj = self.jobs.get(fid) if isinstance(fid, int) and not isinstance(fid, bool) else None
        if fj is None:
            return self._fatal(f"sent a {where} for an unknown job id {json.dumps(fid)}")
        where = f"{where} for job {fj.id} ('{fj.batsim_id}')"
        if kind not in (SUCCESS, ANNOTATE, DENY, CANCEL) or isinstance(kind, bool):
            return self._fatal(f"sent a {where} with type {json.dumps(kind)} (0 SUCCESS, "
                               "1 ANNOTATE, 2 DENY, 3 CANCEL)")
        if not fj.alloc_pending:
            return self._fatal(f"sent a {where} (type {kind}) but no sched.alloc is pending for "
                               "it" + (" (it already got its SUCCESS)" if fj.assignment else ""))
        notes = p.get("annotations")
        if notes is not None and not isinstance(notes, dict):
            return self._fatal(f"sent a {where} whose 'annotations' is not an object")
        if kind == ANNOTATE:
            if notes is None:
                return self._fatal(f"sent an ANNOTATE {where} without 'annotations'")
            ann.merge(fj.annotations, notes)
            self._event(fj, "annotations", {"annotations": copy.deepcopy(fj.annotations)
                                            or None})
            return
        if kind == CANCEL:
            extra = sorted(set(p) - {"id", "type"})
            if extra:
                return self._fatal(f"sent a CANCEL {where} with extra keys {extra} (RFC 27: "
                                   "only id and type)")
            if not fj.cancel_sent:
                return self._fatal(f"sent a CANCEL {where} but the job manager never sent "
                                   "sched.cancel for it")
            self._retire(fj)
            if fj.cancelled:
                self._end_unstarted(fj, "CANCELED")
            else:  # cancelled to make room (limited mode) or held: queued again
                fj.annotations.clear()
                self._queue(fj)
            return
        if kind == DENY:
            note = p.get("note")
            if note is not None and not isinstance(note, str):
                return self._fatal(f"sent a DENY {where} whose 'note' is not a string")
            self._retire(fj)
            if fj.cancelled:
                self._end_unstarted(fj, "CANCELED")
                return
            fj.exception = ("alloc", note or "")
            self._event(fj, "exception", {"type": "alloc", "severity": 0, "note": note or ""})
            self._end_unstarted(fj, "FAILED")
            return
        # SUCCESS
        if "R" not in p:
            return self._fatal(f"sent a SUCCESS {where} without R (flux-core requires R in the "
                               "response: there is no KVS here)")
        try:
            assignment = self._check_R(fj, p["R"], where)
        except _BadR as exc:
            return self._fatal(str(exc))
        self._retire(fj)
        if notes is not None:
            ann.merge(fj.annotations, notes)
        if fj.cancelled:  # late SUCCESS: the job is gone, the resources go straight back
            fj.R = rv1.build(assignment, self.hosts)
            fj.assignment = assignment
            self._out.append(env.request("sched.free", {"id": fj.id, "R": fj.R, "final": True}))
            self._end_unstarted(fj, "CANCELED")
            return
        self._start(fj, assignment)

    def _retire(self, fj: FluxJob) -> None:
        fj.alloc_pending = False
        self.pending.discard(fj.id)

    def _check_R(self, fj: FluxJob, R: Any, where: str) -> rv1.Assignment:
        """The R of a SUCCESS: well formed, on existing up resources nobody holds, the size
        the jobspec asks for."""
        try:
            assignment = rv1.parse(R, f"sent a SUCCESS {where} whose")
        except ProtocolError as exc:
            raise _BadR(str(exc)) from None
        bad = f"sent a SUCCESS {where} whose R"
        exclusive = self.granularity == "node" or fj.request.exclusive
        for rank, cores in assignment.items():
            if rank >= len(self.hosts):
                raise _BadR(f"{bad} names rank {rank}, which does not exist (ranks "
                                     f"0-{len(self.hosts) - 1})")
            if rank in self.down:
                raise _BadR(f"{bad} names rank {rank} ({self.hosts[rank]}), which is "
                                     "down")
            if cores[-1] >= self.cores[rank]:
                raise _BadR(f"{bad} names core {cores[-1]} of rank {rank} "
                                     f"({self.hosts[rank]}), which has cores "
                                     f"0-{self.cores[rank] - 1}")
            owners = self.owner[rank]
            taken = [c for c in cores if c in owners]
            if taken or (exclusive and owners):
                holder = self.jobs[owners[taken[0] if taken else next(iter(owners))]]
                raise _BadR(
                    f"{bad} names rank {rank} ({self.hosts[rank]}) core "
                    f"{taken[0] if taken else idset.encode(cores)}, already allocated to job "
                    f"{holder.id} ('{holder.batsim_id}')")
        req = fj.request
        if req.nnodes:
            if len(assignment) != req.nnodes:
                raise _BadR(f"{bad} holds {len(assignment)} rank(s), the jobspec asks "
                                     f"for {req.nnodes} node(s)")
            need = req.nslots * req.cores
            small = [r for r, c in assignment.items() if len(c) < need]
            if small:
                raise _BadR(f"{bad} gives rank {small[0]} {len(assignment[small[0]])} "
                                     f"core(s), the jobspec asks for {need} per node")
        else:
            total = sum(len(c) for c in assignment.values())
            if total != req.total_cores or any(len(c) % req.cores for c in assignment.values()):
                raise _BadR(f"{bad} holds {total} core(s), the jobspec asks for "
                                     f"{req.total_slots} slot(s) of {req.cores} core(s)")
        if self._executors(fj, assignment) is None:
            raise _BadR(
                f"{bad} holds {len(assignment)} rank(s) and "
                f"{sum(len(c) for c in assignment.values())} core(s): neither matches the "
                f"{fj.res} executor(s) of the Batsim job (res)")
        return assignment

    def _executors(self, fj: FluxJob, assignment: rv1.Assignment
                   ) -> tuple[int, ...] | None | bool:
        """The Batsim mapping of a job on `assignment`: False for one executor per rank, the
        per-core mapping when each core is an executor, None when neither fits `res`."""
        ranks = list(assignment)
        total = sum(len(c) for c in assignment.values())
        per_core = tuple(i for i, r in enumerate(ranks) for _ in assignment[r])
        if self.granularity == "core" and total == fj.res and total != len(ranks):
            return per_core
        if len(ranks) == fj.res:
            return False
        if total == fj.res:
            return per_core
        return None

    def _start(self, fj: FluxJob, assignment: rv1.Assignment) -> None:
        exclusive = self.granularity == "node" or fj.request.exclusive
        for rank, cores in assignment.items():
            for c in (range(self.cores[rank]) if exclusive else cores):
                self.owner[rank][c] = fj.id
        fj.assignment = assignment
        fj.starttime = self._now
        duration = fj.request.duration
        fj.expiration = self._now + duration if duration > 0 else 0.0
        fj.R = rv1.build(assignment, self.hosts, self._wire(fj.starttime),
                         self._wire(fj.expiration) if fj.expiration else 0.0)
        fj.state = "RUN"
        self._event(fj, "alloc", {"annotations": copy.deepcopy(fj.annotations)}
                    if fj.annotations else {})
        self._event(fj, "start", {})
        mapping = self._executors(fj, assignment)
        self._decisions.append(d.ExecuteJob(
            self._now, fj.batsim_id, tuple(assignment),
            mapping if isinstance(mapping, tuple) else None))
        if fj.expiration and fj.walltime > 0 and fj.expiration < fj.starttime + fj.walltime:
            self._kill_at(fj.expiration)

    def _kill_at(self, t: float) -> None:
        if t not in self.kill_times:
            self.kill_times.add(t)
            self._decisions.append(d.CallMeLater(self._now, t))

    def _expiration_response(self, m: Message) -> None:
        if not self.expirations_asked:
            raise ProtocolError("the Flux scheduler answered sched.expiration, which the job "
                                "manager did not ask")
        fid, expiration = self.expirations_asked.pop(0)
        fj = self.jobs[fid]
        if m.errnum not in (0, ENOSYS):
            log.warning("the Flux scheduler rejected the new expiration %f of job %s (errnum "
                        "%d%s): unchanged", expiration, fj.batsim_id, m.errnum,
                        f": {m.errstr}" if m.errstr else "")
            self._event(fj, "expiration-rejected", {"expiration": self._wire(expiration),
                                                    "errnum": m.errnum})
            return
        if fj.state != "RUN":
            return
        limit = fj.starttime + fj.walltime if fj.walltime > 0 else None
        if limit is not None and expiration > limit:
            from batsim_py.errors import NotSupportedError

            raise NotSupportedError(
                f"job '{fj.batsim_id}': expiration moved to {expiration:f}, past its Batsim "
                f"walltime end {limit:f}; batsim-py enforces the walltime and cannot extend "
                "it: give the job a longer walltime and move the expiration earlier instead")
        if limit is None:
            from batsim_py.errors import NotSupportedError

            raise NotSupportedError(
                f"job '{fj.batsim_id}': setting an expiration on a job without walltime is not "
                "supported (batsim-py enforces expirations through Batsim walltimes)")
        fj.expiration = expiration
        if fj.R is not None:
            fj.R["execution"]["expiration"] = self._wire(expiration)
        self._event(fj, "resource-update", {"expiration": self._wire(expiration)})
        if expiration <= self._now:
            fj.exception = ("timeout", "resource allocation expired")
            self._decisions.append(d.KillJob(self._now, (fj.batsim_id,)))
        elif expiration < limit:
            self._kill_at(expiration)

    # ---------------------------------------------------------------- outputs
    def _event(self, fj: FluxJob, name: str, context: dict[str, Any]) -> None:
        if self.write_eventlog:
            self.eventlog.append({"id": fj.id, "job_id": fj.batsim_id,
                                  "timestamp": self._wire(self._now), "name": name,
                                  "context": context})

    def write_outputs(self) -> None:
        """PREFIX_flux_jobs.csv (each job's Flux id, result, exception, R and final
        annotations) and, with --flux-eventlog, PREFIX_flux_eventlog.jsonl."""
        if self.export_prefix is None or self.outputs_written:
            return
        self.outputs_written = True
        path = f"{self.export_prefix}_flux_jobs.csv"
        try:
            folder = os.path.dirname(path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(["job_id", "flux_id", "urgency", "priority", "t_submit",
                                 "state", "result", "exception_type", "exception_note",
                                 "resource_summary", "annotations"])
                for fj in sorted(self.jobs.values(), key=lambda j: j.id):
                    writer.writerow([
                        fj.batsim_id, fj.id, fj.urgency, fj.priority,
                        _num(self._wire(fj.t_submit)), fj.state, fj.result,
                        fj.exception[0] if fj.exception else "",
                        fj.exception[1] if fj.exception else "",
                        rv1.summary(fj.assignment) if fj.assignment else "",
                        json.dumps(fj.annotations, sort_keys=True, separators=(",", ":"))
                        if fj.annotations else ""])
            if self.write_eventlog:
                with open(f"{self.export_prefix}_flux_eventlog.jsonl", "w",
                          encoding="utf-8") as f:
                    for entry in self.eventlog:
                        f.write(json.dumps(entry, separators=(",", ":")) + "\n")
            if self.statuses:
                with open(f"{self.export_prefix}_flux_resource_status.jsonl", "w",
                          encoding="utf-8") as f:
                    for entry in self.statuses:
                        f.write(json.dumps(entry, separators=(",", ":")) + "\n")
        except OSError as exc:
            raise OutputError(f"{path}: cannot write the Flux outputs ({exc.strerror})") from None

    def close(self) -> None:
        try:
            if not self.outputs_written and self.jobs:
                self.write_outputs()
        finally:
            self.transport.close()


class _BadR(Exception):
    """An R that cannot be accepted (the text follows "the Flux scheduler ")."""


def _num(t: float) -> str:
    return f"{t:.6f}"


class LocalTransport:
    """An in-process Flux scheduler (`flux_client.Scheduler`) behind the same JSON text as
    over ZeroMQ: every envelope is still encoded, so the wire format is exercised."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def exchange_text(self, message: str, ending: bool | None = None) -> str:
        return self.scheduler.handle_text(message)

    def close(self) -> None:
        pass


def flux_scheduler(scheduler: Any, *, granularity: str = "node", epoch: float = 0.0,
                   tolerant: bool = False, export_prefix: str | None = None,
                   eventlog: bool = False, options: dict[str, Any] | None = None,
                   feasibility: bool = False) -> FluxPeer:
    """A Flux job manager for the Python API (`batsim_py.Simulator(..., scheduler=...)`):
    `scheduler` is a shipped client name (`"fifo"`, `"easy"`), `"MODULE:CLASS"`, a
    `flux_client.Scheduler` instance, or an endpoint (`"tcp://..."`) where a Flux scheduler
    listens. `export_prefix`: where `PREFIX_flux_jobs.csv` goes (None: not written). With
    `granularity="core"`, give the Simulator `allow_compute_sharing=True`. `feasibility`:
    check each job at submission with the scheduler's `feasibility.check` (`--flux-feasibility`).
    """
    if isinstance(scheduler, str) and scheduler.startswith(("tcp://", "ipc://")):
        from batsim_py.decision.zmq_peer import ZmqPeer

        transport: Any = ZmqPeer(scheduler)
    elif isinstance(scheduler, str):
        from batsim_py.flux_client.scheduler import load_scheduler

        transport = LocalTransport(load_scheduler(scheduler, options))
    else:
        transport = LocalTransport(scheduler)
    return FluxPeer(transport, granularity=granularity, epoch=epoch, tolerant=tolerant,
                    export_prefix=export_prefix, eventlog=eventlog, log_messages=False,
                    feasibility=feasibility)


def from_cli_args(args: Any, reply_timeout: float | None,
                  connect_timeout: float | None) -> FluxPeer:
    """The Flux peer `batsim-py --protocol flux ...` asks for: an in-process client
    (`--flux-scheduler`) or a scheduler over ZeroMQ at `-s` (maybe `--scheduler-command`)."""
    from batsim_py.errors import UsageError

    if args.scheduler is not None:
        raise UsageError("--protocol flux takes its scheduler from --flux-scheduler NAME "
                         "(in-process) or -s ENDPOINT, not --scheduler (a Batsim-protocol "
                         "scheduler)")
    if getattr(args, "legacy_protocol", None) is not None:
        raise UsageError("--protocol flux and --legacy-protocol are two different scheduler "
                         "protocols: choose one")
    if getattr(args, "enable_redis", False) or getattr(args, "redis_server", None):
        raise UsageError("--enable-redis and --redis-server belong to the Batsim protocols; "
                         "--protocol flux sends jobspecs in sched.alloc")
    if args.flux_granularity not in ("node", "core"):
        raise UsageError(f"--flux-granularity must be 'node' or 'core', not "
                         f"'{args.flux_granularity}'")
    if args.record_transcript or args.replay_strict:
        raise UsageError("--record-transcript and --replay-strict are for the Batsim protocol; "
                         "with --protocol flux, -v network-only prints every envelope")
    external = args.flux_scheduler is None
    transport: Any
    if external:
        from batsim_py.decision.zmq_peer import ZmqPeer

        transport = ZmqPeer(args.socket_endpoint, reply_timeout, connect_timeout,
                            command=args.scheduler_command)
    else:
        if args.scheduler_command is not None:
            raise UsageError("--scheduler-command starts an external scheduler (at -s): it "
                             "cannot go with --flux-scheduler")
        from batsim_py.flux_client.scheduler import load_scheduler

        try:
            options = json.loads(args.flux_options) if args.flux_options else {}
        except ValueError:
            options = None
        if not isinstance(options, dict):
            raise UsageError(f"--flux-options {args.flux_options!r}: expected a JSON object, "
                             'e.g. \'{"queue_depth": 2}\'')
        try:
            transport = LocalTransport(load_scheduler(args.flux_scheduler, options))
        except TypeError as exc:
            raise UsageError(f"--flux-scheduler {args.flux_scheduler}: {exc}") from None
    return FluxPeer(transport, granularity=args.flux_granularity, epoch=args.flux_epoch,
                    tolerant=args.flux_tolerant, export_prefix=args.export,
                    eventlog=args.flux_eventlog, feasibility=args.flux_feasibility,
                    log_messages=not args.quiet and (external or args.verbosity in (
                        "network-only", "debug")))
