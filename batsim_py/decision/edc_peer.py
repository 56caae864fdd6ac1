"""Batsim 5's external decision components (EDCs) behind the decision interface.

An EDC speaks batprotocol (seed 002): it is initialised with an init string and answers with
an `EDCHelloEvent`, then each batch of simulation events is one `Message` it answers with
one `Message` of decisions. Where the EDC lives (a ZeroMQ process, a C library, a Python
module) is the transport's business (`edc_transports.py`); this module turns the engine's
typed events into batprotocol messages and the EDC's replies into typed decisions, with
Batsim 5.0.0-rc2's semantics (`../shared/research/seed-systems.md` §2.7-2.8):

- ids are `workload!name` for jobs and profiles; `JobCompletedEvent` has no allocation;
- CallMeLater: one-shots in seconds or milliseconds, a time already passed fires at once;
  periodic calls fire on absolute multiples of the period (the first one strictly after the
  request), `last_periodic_call` on the last of a finite series; periods must divide each
  other and offsets be 0 unless `lift_restrictions`; this peer arms the engine's one-shot
  calls one period at a time, so a stopped periodic call still keeps the simulation alive
  until its next (swallowed) trigger;
- host on/off (`TurnOnOffHostsEvent`) and pstate changes (`ChangeHostsPStateEvent`) become the
  engine's pstate switches, each acknowledged once all its hosts are done;
- compute sharing is allowed (Batsim 5 removed the exclusivity check);
- what 5.0.0-rc2 aborts on (TriggerProbe, ResetProbe, ...) is refused with a clear error, and
  what batsim-py does not implement yet is refused naming the event.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from batsim_py import intervalset
from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import NotSupportedError, ProtocolError, SchedulerError
from batsim_py.protocol.batprotocol.json_text import format_double

log = logging.getLogger("batsim_py.network")  # the messages, as Batsim's `network` category
info = logging.getLogger(__name__)

FORMAT_BINARY = 0x1
FORMAT_JSON = 0x2
# batsim-py's extension for Python EDCs in its own process: messages are the dicts of the JSON
# form, handed over without serialising (checked against the schema all the same)
FORMAT_OBJECTS = 0x4
BATPROTOCOL_VERSION = "0.1.0"  # the schema batsim-py speaks: the seed's (seed-systems §2.0)
BATSIM_VERSION = "batsim-py-0.1.0 (batprotocol, Batsim 5.0.0-rc2 semantics)"


class EdcTransport(Protocol):
    """Where an EDC runs. Payloads are serialised messages (JSON ones end with NUL)."""

    description: str

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        """Initialise the EDC; its format flags and its hello message."""

    def take_decisions(self, data: bytes, ending: bool) -> bytes:
        """One message to the EDC, its reply (`ending`: the message ends the simulation)."""

    def close(self) -> None:
        """Release the EDC (deinit, sockets)."""


@dataclass
class EdcSettings:
    """How batsim-py talks to the EDC (command-line options)."""

    init_data: bytes = b""
    strict_fields: bool = True  # unknown JSON fields are errors, as in Batsim 5
    lift_restrictions: bool = False  # --lift-v5-restrictions
    arguments: Sequence[str] = ()  # the command line, forwarded in SimulationBegins
    context: dict[str, Any] = field(default_factory=dict)  # execution context (JSON)
    # level of the message log (logger batsim_py.network): as Batsim 4's, INFO for a process
    # (or with -v network-only), DEBUG for an EDC in batsim-py's process
    log_level: int = logging.DEBUG


@dataclass(slots=True)
class _Periodic:
    id: str
    period_ms: int
    offset_ms: int
    remaining: int | None  # None: infinite
    stopped: bool = False


@dataclass(slots=True)
class _Probe:
    periodic: _Periodic
    hosts: tuple[int, ...]
    aggregation: str
    resources: dict[str, Any]
    triggers: int = 0


class EdcPeer(DecisionProcess):
    def __init__(self, transport: EdcTransport, settings: EdcSettings | None = None) -> None:
        self.transport = transport
        self.settings = settings or EdcSettings()
        self.fmt = FORMAT_JSON
        self.hello: dict[str, Any] | None = None
        self.features: dict[str, bool] = {}
        self.sim: Any = None
        self.nb_exchanges = 0
        self._codec: Any = None
        # (at, seq, id, owner): armed engine calls, fired in (at, seq) order; the owner is the
        # periodic call or probe (a stopped one is not reused by a new one of the same id)
        self._pending_calls: list[tuple[float, int, str, Any]] = []
        self._seq = 0
        self._periodic: dict[str, _Periodic] = {}
        self._probes: dict[str, _Probe] = {}
        self._rearm: list[d.Decision] = []
        self._switch_requests: list[tuple[tuple[int, ...], int, str]] = []
        self._ignored: list[str] = []
        self._event_ids: dict[int, str] = {}
        self._job_profiles: dict[str, tuple[str, str]] = {}  # forward_profiles_on_jobs_killed
        self._stop_at: float | None = None  # ForceSimulationStopEvent's date
        self._ended = False  # SimulationEndsEvent was sent
        self._closed = False

    # ------------------------------------------------------------------ set-up
    def bind_simulation(self, sim: Any) -> None:
        """Called once the simulation is built, before it runs: the handshake happens here
        (the hello's features change the simulation's options)."""
        self.sim = sim
        # Batsim 5 names external events LIST!INDEX (INDEX: the event's rank in its list,
        # here in time order, which is the file's order when the file is sorted by time).
        self._event_ids = {id(event.description): f"{lst.name}!{k}"
                           for lst in sim.event_lists for k, event in enumerate(lst.events)}
        self._handshake()
        o = sim.options
        f = self.features
        sim.options = replace(
            o, allow_compute_sharing=True,
            dynamic_jobs=f.get("dynamic_registration", False),
            acknowledge_dynamic_jobs=f.get("acknowledge_dynamic_jobs", False),
            profile_reuse=f.get("profile_reuse", False),
            forward_profiles_on_submission=f.get("forward_profiles_on_job_submission", False),
            v5_semantics=True,
            # the outputs say that Batsim 5.0's restrictions were lifted (batsim_version)
            version=o.version + ("+lift-v5-restrictions" if self.settings.lift_restrictions
                                 else ""))

    def _handshake(self) -> None:
        flags, hello = self.transport.init(self.settings.init_data)
        if not isinstance(flags, int) or flags < 0:
            raise ProtocolError(f"the EDC ({self.transport.description}) returned invalid "
                                f"format flags {flags!r}")
        if flags & FORMAT_OBJECTS:
            if not getattr(self.transport, "accepts_objects", False):
                raise ProtocolError(
                    f"the EDC ({self.transport.description}) asked for Python objects (format "
                    "flag 0x4), which only Python EDCs run in batsim-py's process can exchange")
            self.fmt = FORMAT_OBJECTS
            self.transport.objects = True
        else:
            self.fmt = FORMAT_JSON if flags & FORMAT_JSON else FORMAT_BINARY
        self._codec = _codec(self.fmt, self.settings.strict_fields, self._ignored)
        msg = self._decode(hello, "the EDC's hello")
        events = msg["events"]
        if len(events) != 1 or events[0]["event_type"] != "EDCHelloEvent":
            kinds = ", ".join(e["event_type"] for e in events) or "no event"
            raise ProtocolError(
                f"the EDC ({self.transport.description}) did not answer its init with exactly "
                f"one EDCHelloEvent (got: {kinds}); an EDC's first reply holds its hello only")
        self.hello = events[0]["event"]
        self.features = dict(self.hello["requested_simulation_features"])
        info.info("EDC '%s' %s (batprotocol %s) speaks %s",
                 self.hello["decision_component_name"], self.hello["decision_component_version"],
                 self.hello["batprotocol_version"],
                 {FORMAT_JSON: "JSON", FORMAT_BINARY: "binary flatbuffers"}.get(
                     self.fmt, "Python objects"))

    def _decode(self, data: bytes, what: str) -> dict[str, Any]:
        before = len(self._ignored)
        msg = self._codec.decode(data, what)
        if len(self._ignored) > before:
            info.warning("%s: unknown fields ignored: %s", what,
                        ", ".join(self._ignored[before:]))
        return msg

    # ------------------------------------------------------------------ exchange
    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        if self.hello is None:
            raise SchedulerError("the EDC was not initialised (internal: bind_simulation was "
                                 "not called)")
        out: list[dict[str, Any]] = []
        ending = False
        for e in events:
            item = self._event(e)
            if item is not None:
                out.append(item)
            if type(e) is ev.SimulationEnds:
                ending = True
                self._ended = True
        rearm, self._rearm = self._rearm, []
        if not out:  # only swallowed events (a stopped periodic call): nothing to tell
            return d.Reply(now, tuple(replace(x, timestamp=now) for x in rearm))
        message = {"now": now, "events": out}
        data = self._codec.encode(message)
        self.nb_exchanges += 1
        level = self.settings.log_level
        if log.isEnabledFor(level):
            log.log(level, "Sending '%s'", _shown(data))
        raw = self.transport.take_decisions(data, ending)
        if log.isEnabledFor(level):
            log.log(level, "Received '%s'", _shown(raw))
        reply = self._decode(raw, f"the EDC's reply to message {self.nb_exchanges}")
        decisions = [replace(x, timestamp=now) for x in rearm]
        decisions.extend(self._decisions(reply, now))
        return d.Reply(_snap(reply["now"], now), tuple(decisions))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._stop_at is not None and not self._ended:
                self._tell_end()
        finally:
            self.transport.close()

    def _tell_end(self) -> None:
        """After ForceSimulationStopEvent: the EDC still gets SimulationEndsEvent, as from
        Batsim 5, and must answer it (its decisions are ignored: the simulation is over)."""
        now = self.sim.engine.now if self.sim is not None else 0.0
        data = self._codec.encode({"now": now, "events": [
            _wrap(now, "SimulationEndsEvent", {})]})
        self.nb_exchanges += 1
        self._ended = True
        self._decode(self.transport.take_decisions(data, True),
                     f"the EDC's reply to message {self.nb_exchanges} (SimulationEndsEvent)")

    # ------------------------------------------------------------------ events -> wire
    def _event(self, e: Any) -> dict[str, Any] | None:
        kind = type(e)
        if kind is ev.JobSubmitted:
            return _wrap(e.timestamp, "JobSubmittedEvent", self._job_submitted(e))
        if kind is ev.JobCompleted:
            return _wrap(e.timestamp, "JobCompletedEvent", {
                "job_id": e.job_id, "state": e.job_state, "return_code": e.return_code})
        if kind is ev.RequestedCall:
            return self._requested_call(e)
        if kind is ev.JobKilled:
            killed: dict[str, Any] = {
                "job_ids": list(e.job_ids),
                "progresses": [{"job_id": j, "wrapper": self._progress(j, p)}
                               for j, p in e.job_progress.items()]}
            if self.features.get("forward_profiles_on_jobs_killed"):
                killed["profiles"] = self._killed_profiles(e.job_ids)
            return _wrap(e.timestamp, "JobsKilledEvent", killed)
        if kind is ev.ResourceStateChanged:
            return self._state_changed(e)
        if kind is ev.Notify:
            if e.type == "no_more_static_job_to_submit":
                return _wrap(e.timestamp, "AllStaticJobsHaveBeenSubmittedEvent", {})
            if e.type == "no_more_external_event_to_occur":
                return _wrap(e.timestamp, "AllStaticExternalEventsHaveBeenInjectedEvent", {})
            if e.type == "generic":
                desc = e.data or {}
                data = desc.get("data")
                if not isinstance(data, str):  # Batsim 5's events carry a string
                    data = json.dumps(desc if data is None else data, separators=(",", ":"))
                return _wrap(e.timestamp, "ExternalEventOccurredEvent", {
                    "id": self._event_ids.get(id(desc), ""),
                    "external_event_type": "GenericExternalEvent",
                    "external_event": {"data": data}})
            raise NotSupportedError(
                f"external event '{e.type}' at t={e.timestamp:f}: Batsim 5 has only generic "
                "external events (machine availability events are Batsim 4's)")
        if kind is ev.SimulationBegins:
            return _wrap(e.timestamp, "SimulationBeginsEvent", self._simulation_begins())
        if kind is ev.SimulationEnds:
            return _wrap(e.timestamp, "SimulationEndsEvent", {})
        raise NotSupportedError(f"event {kind.__name__} has no batprotocol form in batsim-py")

    def _killed_profiles(self, job_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The profiles of killed jobs, once each (forward_profiles_on_jobs_killed)."""
        out: dict[str, dict[str, Any]] = {}
        for job_id in job_ids:
            workload, profile = self._job_profiles.get(job_id, ("", ""))
            p = self.sim.profiles_of.get(workload, {}).get(profile)
            if p is not None and f"{workload}!{profile}" not in out:
                out[f"{workload}!{profile}"] = _profile_and_id(workload, p)
        return list(out.values())

    def _job_submitted(self, e: ev.JobSubmitted) -> dict[str, Any]:
        job = e.job
        if self.features.get("forward_profiles_on_jobs_killed"):
            self._job_profiles[job.id] = (job.workload, job.profile)
        out: dict[str, Any] = {"job_id": job.id, "job": _job(job),
                               "submission_time": job.subtime}
        if e.profile is not None:
            out["profile"] = _profile_and_id(job.workload, e.profile)
        return out

    def _simulation_begins(self) -> dict[str, Any]:
        sim = self.sim
        machines = sim.machines

        def host(m: Any) -> dict[str, Any]:
            h = m.host
            return {"id": m.id, "name": h.name, "pstate": h.pstate,
                    "pstate_count": len(h.speeds), "state": "IDLE",
                    "properties": [{"key": k, "value": str(v)} for k, v in h.properties.items()],
                    "zone_properties": [{"key": k, "value": str(v)}
                                        for k, v in h.zone_properties.items()],
                    "core_count": h.cores, "computation_speed": list(h.speeds)}

        workloads = sorted(sim.workloads, key=lambda w: w.name)
        out: dict[str, Any] = {
            "batprotocol_version": BATPROTOCOL_VERSION,
            "batsim_version": BATSIM_VERSION,
            "host_number": len(machines.compute) + len(machines.storage),
            "computation_host_number": len(machines.compute),
            "computation_hosts": [host(m) for m in machines.compute],
            "storage_host_number": len(machines.storage),
            "storage_hosts": [host(m) for m in machines.storage],
            "batsim_arguments": list(self.settings.arguments),
            "batsim_execution_context_json": json.dumps(self.settings.context,
                                                        separators=(",", ":")),
            "workloads": [{"name": w.name, "filename": w.path or ""} for w in workloads],
            "external_event_lists": [{"name": getattr(x, "name", f"we{i}"),
                                      "filename": getattr(x, "path", "") or ""}
                                     for i, x in enumerate(sim.event_lists)],
        }
        if self.features.get("forward_profiles_on_simulation_begins"):
            out["profiles"] = [_profile_and_id(w.name, p)
                               for w in workloads for p in w.profiles.values()]
        return out

    def _progress(self, job_id: str, node: ev.ProgressNode) -> dict[str, Any]:
        workload = job_id.split("!", 1)[0]
        pid = f"{workload}!{node.profile_name}"
        if node.current_task is None:
            return {"kill_progress_type": "KillProgressAtomicProfile",
                    "kill_progress": {"profile_id": pid, "progress": node.progress or 0.0}}
        index = node.current_task_index or 0
        repetition = 0
        seq = self._sequence_length(workload, node.profile_name)
        if seq:
            repetition, index = divmod(index, seq)
        return {"kill_progress_type": "KillProgressSequentialProfile",
                "kill_progress": {"profile_id": pid, "current_repetition": repetition,
                                  "current_task_index": index,
                                  "current_task_progress": self._progress(job_id,
                                                                          node.current_task)}}

    def _sequence_length(self, workload: str, profile: str) -> int:
        p = self.sim.profiles_of.get(workload, {}).get(profile) if self.sim else None
        seq = getattr(p, "seq", None) if p is not None else None
        return len(seq) if seq else 0

    def _requested_call(self, e: ev.RequestedCall) -> dict[str, Any] | None:
        if not self._pending_calls:
            raise SchedulerError("internal: a requested call came that no CallMeLater armed")
        self._pending_calls.sort()
        at, _, ident, owner = self._pending_calls.pop(0)
        if isinstance(owner, _Probe):
            return self._probe_triggered(owner, at, e.timestamp)
        if owner is None:
            return _wrap(e.timestamp, "RequestedCallEvent", {
                "call_me_later_id": ident, "last_periodic_call": False})
        entity = owner
        if entity.stopped:
            return None
        last = False
        if entity.remaining is not None:
            entity.remaining -= 1
            last = entity.remaining == 0
        if last:
            del self._periodic[ident]
        else:
            next_at = at + entity.period_ms / 1000.0
            self._arm(next_at, ident, entity)
            self._rearm.append(d.CallMeLater(e.timestamp, next_at))
        return _wrap(e.timestamp, "RequestedCallEvent", {"call_me_later_id": entity.id,
                                                         "last_periodic_call": last})

    def _arm(self, at: float, ident: str, owner: _Periodic | _Probe | None = None) -> None:
        """Remember an armed engine call: its periodic call or probe (None: a one-shot)."""
        self._seq += 1
        self._pending_calls.append((at, self._seq, ident, owner))

    def _state_changed(self, e: ev.ResourceStateChanged) -> dict[str, Any]:
        machines = tuple(e.resources)
        target = int(e.state)
        for i, (hosts, state, kind) in enumerate(self._switch_requests):
            if hosts == machines and state == target:
                del self._switch_requests[i]
                name = ("HostsPStateChangedEvent" if kind == "pstate"
                        else "HostsTurnedOnOffEvent")
                key = "pstate" if kind == "pstate" else "state"
                return _wrap(e.timestamp, name, {"host_ids": intervalset.format(machines),
                                                 key: target})
        raise SchedulerError(f"internal: hosts {intervalset.format(machines)} changed state "
                             "without a request")

    # ------------------------------------------------------------------ wire -> decisions
    def _decisions(self, reply: dict[str, Any], now: float) -> list[d.Decision]:
        out: list[d.Decision] = []
        reply_now = _snap(reply["now"], now)
        last = -math.inf
        where = f"the EDC's reply to message {self.nb_exchanges}"
        if reply_now < now:
            raise SchedulerError(f"{where}: its now ({reply_now:f}) is before the message's "
                                 f"now ({now:f})")
        for i, item in enumerate(reply["events"]):
            t = _snap(item["timestamp"], now)
            kind = item["event_type"]
            at = f"{where}, event {i} ({kind} at t={t:f})"
            if t > reply_now:
                raise SchedulerError(f"{at}: event timestamp is after message's now "
                                     f"({reply_now:f})")
            if t < last:
                raise SchedulerError(f"{at}: event timestamps must not decrease (previous "
                                     f"{last:f})")
            last = t
            t = max(t, now)
            handler = _HANDLERS.get(kind)
            if handler is None:
                raise NotSupportedError(_UNSUPPORTED.get(
                    kind, f"{at}: {kind} is not an event an EDC sends"))
            handler(self, item["event"], t, at, out)
        return out

    def _execute(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        alloc_desc = e["allocation"]
        try:
            alloc = intervalset.parse(alloc_desc["host_allocation"])
        except ValueError as exc:
            raise SchedulerError(f"{at}: host_allocation "
                                 f"'{alloc_desc['host_allocation']}': {exc}") from None
        mapping = self._mapping(e["job_id"], alloc, alloc_desc, at)
        storage = None
        if e.get("storage_placement"):
            storage = {s["storage_name"]: s["host_id"] for s in e["storage_placement"]}
        overrides = None
        if e.get("profile_allocation_override"):
            overrides = self._overrides(e["job_id"], e["profile_allocation_override"], at)
        out.append(d.ExecuteJob(t, e["job_id"], alloc, mapping, storage,
                                profile_overrides=overrides))

    def _overrides(self, job_id: str, items: list[dict[str, Any]], at: str
                   ) -> tuple[tuple[str, tuple[int, ...], tuple[int, ...] | None], ...]:
        """profile_allocation_override: each `workload!name` profile of the job, placed on
        its own hosts (which must exist; as in Batsim 5 they are not checked for being
        free, and the job's machines stay those of its main allocation)."""
        run = self.sim.runs.get(job_id) if self.sim is not None else None
        out: list[tuple[str, tuple[int, ...], tuple[int, ...] | None]] = []
        for item in items:
            profile_id = item["profile_id"]
            workload, _, name = profile_id.partition("!")
            where = f"{at}: profile_allocation_override of '{profile_id}'"
            if run is not None:
                profiles = self.sim.profiles_of.get(run.job.workload, {})
                if workload != run.job.workload or name not in profiles:
                    raise SchedulerError(
                        f"{where}: not a profile of job '{job_id}''s workload (write "
                        f"'{run.job.workload}!NAME' with a profile its job runs)")
            try:
                hosts = tuple(intervalset.parse(item["host_allocation"]))
            except ValueError as exc:
                raise SchedulerError(f"{where}: host_allocation "
                                     f"'{item['host_allocation']}': {exc}") from None
            if not hosts:
                raise SchedulerError(f"{where}: the host_allocation is empty")
            nb = len(self.sim.hosts) if self.sim is not None else None
            if nb is not None and hosts[-1] >= nb:
                raise SchedulerError(f"{where}: host {hosts[-1]} does not exist (hosts are "
                                     f"0-{nb - 1})")
            mapping = self._mapping(job_id, hosts, item, at)
            if mapping is not None and any(not 0 <= i < len(hosts) for i in mapping):
                raise SchedulerError(f"{where}: the executor mapping {list(mapping)} refers "
                                     f"to hosts outside [0, {len(hosts)})")
            out.append((name, hosts, mapping))
        return tuple(out)

    def _mapping(self, job_id: str, alloc: Sequence[int], desc: dict[str, Any],
                 at: str) -> tuple[int, ...] | None:
        kind = desc["executor_placement_type"]
        placement = desc["executor_placement"]
        if kind == "CustomExecutorToHostMapping":
            return tuple(placement["mapping"])
        run = self.sim.runs.get(job_id) if self.sim is not None else None
        nb = run.job.res if run is not None else len(alloc)
        n = len(alloc)
        if placement["strategy"] == "SpreadOverHostsFirst":
            if nb == n:
                return None
            return tuple(i % n for i in range(nb))
        # FillOneHostCoresFirst: fill a host's cores, then the next host, then loop.
        cores = [self.sim.machines.all[m].host.cores if self.sim is not None else 1
                 for m in alloc]
        slots = [k for k, c in enumerate(cores) for _ in range(c)]
        return tuple(slots[i % len(slots)] for i in range(nb))

    def _reject(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        out.append(d.RejectJob(t, e["job_id"]))

    def _kill(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        out.append(d.KillJob(t, tuple(dict.fromkeys(e["job_ids"]))))

    def _call_me_later(self, e: dict[str, Any], t: float, at: str,
                       out: list[d.Decision]) -> None:
        ident = e["call_me_later_id"]
        when = e["when"]
        if e["when_type"] == "OneShot":
            scale = 1000.0 if when["time_unit"] == "Millisecond" else 1.0
            target = when["time"] / scale
            self._arm(target, ident)
            out.append(d.CallMeLater(t, target))
            return
        entity = self._new_periodic(ident, when, at, "call_me_later_id", self._periodic)
        self._periodic[ident] = entity
        first = self._first_trigger(entity, t)
        self._arm(first, ident, entity)
        out.append(d.CallMeLater(t, first))

    def _new_periodic(self, ident: str, when: dict[str, Any], at: str, what: str,
                      live: dict[str, Any]) -> _Periodic:
        """A periodic entity (call or probe) after Batsim 5.0's checks (§2.8.3)."""
        unit = 1 if when["time_unit"] == "Millisecond" else 1000
        period = when["period"] * unit
        offset = when["offset"] * unit
        lift = self.settings.lift_restrictions
        if period <= 0:
            raise SchedulerError(f"{at}: the period must be positive")
        if offset != 0 and not lift:
            raise SchedulerError(f"{at}: a periodic trigger's offset must be 0 in Batsim 5.0 "
                                 "(--lift-v5-restrictions accepts other offsets)")
        if ident in live:
            raise SchedulerError(f"{at}: {what} '{ident}' is already used by a live periodic "
                                 "entity")
        if not lift:
            others = [*self._periodic.values(), *(p.periodic for p in self._probes.values())]
            for other in others:
                a, b = sorted((other.period_ms, period))
                if b % a:
                    raise SchedulerError(
                        f"{at}: period {period} ms and the period {other.period_ms} ms of "
                        f"'{other.id}' do not divide each other, which Batsim 5.0 requires "
                        "(--lift-v5-restrictions lifts it)")
        remaining = None
        if when["mode_type"] == "FinitePeriodNumber":
            remaining = when["mode"]["nb_periods"]
            if remaining < 1:
                raise SchedulerError(f"{at}: nb_periods must be at least 1")
        return _Periodic(ident, period, offset, remaining)

    @staticmethod
    def _first_trigger(entity: _Periodic, t: float) -> float:
        """The first absolute multiple of the period (plus offset) strictly after t."""
        t_ms = t * 1000.0
        period, offset = entity.period_ms, entity.offset_ms
        k = math.floor((t_ms - offset) / period + 1e-9) + 1 if t_ms >= offset else 0
        return (offset + k * period) / 1000.0

    # ------------------------------------------------------------------ probes
    def _create_probe(self, e: dict[str, Any], t: float, at: str,
                      out: list[d.Decision]) -> None:
        """Power probes on hosts, periodic, accumulated without reset: what Batsim 5.0 has
        (§2.8.4); the value is each host's consumed energy in joules since the start."""
        ident = e["probe_id"]
        if e["metrics"] != "Power":
            raise NotSupportedError(f"{at}: {e['metrics']} probes are not implemented by "
                                    "Batsim 5.0 (only Power) nor by batsim-py")
        if e["resources_type"] != "HostResources":
            raise NotSupportedError(f"{at}: probes on links are not implemented by Batsim 5.0 "
                                    "nor by batsim-py")
        trigger = e["measurement_triggering_policy"]
        if trigger["temporal_trigger_type"] != "Periodic":
            raise NotSupportedError(f"{at}: non-periodic probes are not implemented by Batsim "
                                    "5.0 nor by batsim-py")
        strategy = e["data_accumulation_strategy"]
        if (e["data_accumulation_strategy_type"] != "ProbeDataAccumulation"
                or strategy["reset_mode_type"] != "NoReset"):
            raise NotSupportedError(f"{at}: a probe must accumulate its data without reset "
                                    "(ProbeDataAccumulation with NoReset), as Batsim 5.0 "
                                    "requires")
        aggregation = e["resources_aggregation_function_type"]
        if aggregation not in ("NoResourcesAggregation", "Sum", "ArithmeticMean"):
            raise NotSupportedError(f"{at}: resource aggregation {aggregation} is not "
                                    "implemented by Batsim 5.0 nor by batsim-py")
        if self.sim is None or not self.sim.options.energy:
            raise SchedulerError(f"{at}: Power probes read the energy model: run with "
                                 "-E/--energy")
        try:
            hosts = intervalset.parse(e["resources"]["host_ids"])
        except ValueError as exc:
            raise SchedulerError(f"{at}: host_ids: {exc}") from None
        nb = len(self.sim.hosts)
        bad = [h for h in hosts if not 0 <= h < nb]
        if bad:
            raise SchedulerError(f"{at}: host {bad[0]} does not exist (hosts 0-{nb - 1})")
        periodic = self._new_periodic(ident, trigger["temporal_trigger"], at, "probe_id",
                                      self._probes)
        if periodic.remaining is not None:
            periodic.remaining += 1  # the first trigger only initialises
        probe = _Probe(periodic, tuple(hosts), aggregation, dict(e["resources"]))
        self._probes[ident] = probe
        first = self._first_trigger(periodic, t)
        self._arm(first, ident, probe)
        out.append(d.CallMeLater(t, first))

    def _stop_probe(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        probe = self._probes.pop(e["probe_id"], None)
        if probe is None:
            info.warning("%s: no live probe '%s' to stop (ignored)", at, e["probe_id"])
            return
        probe.periodic.stopped = True

    def _probe_triggered(self, probe: _Probe, at: float, timestamp: float
                         ) -> dict[str, Any] | None:
        if probe.periodic.stopped:
            return None
        ident = probe.periodic.id
        entity = probe.periodic
        probe.triggers += 1
        if entity.remaining is not None:
            entity.remaining -= 1
        if entity.remaining == 0:
            del self._probes[ident]
        else:
            next_at = at + entity.period_ms / 1000.0
            self._arm(next_at, ident, probe)
            self._rearm.append(d.CallMeLater(timestamp, next_at))
        sim = self.sim
        values = [float(sim.energy_trace.hosts.consumed(sim.machine_host[h]))
                  for h in probe.hosts]
        if probe.triggers == 1:
            return None  # Batsim 5.0: the first trigger initialises, data comes after
        if probe.aggregation == "NoResourcesAggregation":
            data_type, data = "VectorialProbeData", {"data": values}
        elif probe.aggregation == "Sum":
            data_type, data = "AggregatedProbeData", {"data": math.fsum(values)}
        else:
            data_type, data = "AggregatedProbeData", {"data": math.fsum(values) / len(values)
                                                      if values else 0.0}
        return _wrap(timestamp, "ProbeDataEmittedEvent", {
            "probe_id": ident, "resources_type": "HostResources",
            "resources": probe.resources, "metrics": "Power", "data_type": data_type,
            "data": data, "manually_triggered": False, "nb_emitted": 0, "nb_triggered": 0})

    def _stop_call(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        entity = self._periodic.pop(e["call_me_later_id"], None)
        if entity is None:
            info.warning("%s: no live periodic call '%s' to stop (ignored, as Batsim 5 does)",
                        at, e["call_me_later_id"])
            return
        entity.stopped = True

    def _finish_registration(self, e: dict[str, Any], t: float, at: str,
                             out: list[d.Decision]) -> None:
        out.append(d.NotifyDecision(t, "registration_finished"))

    def _check_registration(self, at: str) -> None:
        if not self.features.get("dynamic_registration"):
            raise SchedulerError(f"{at}: the EDC did not ask for dynamic_registration in its "
                                 "hello's requested_simulation_features")

    def _register_profile(self, e: dict[str, Any], t: float, at: str,
                          out: list[d.Decision]) -> None:
        from batsim_py.protocol.batprotocol.profiles import profile_from_wire

        self._check_registration(at)
        p = e["profile"]
        workload, sep, name = p["id"].partition("!")
        if not sep or not workload or not name:
            raise SchedulerError(f"{at}: the profile id must be 'workload!name', not "
                                 f"'{p['id']}'")
        body = profile_from_wire(workload, p["profile_type"], p["profile"], at)
        out.append(d.RegisterProfile(t, workload, name, body))

    def _register_job(self, e: dict[str, Any], t: float, at: str,
                      out: list[d.Decision]) -> None:
        self._check_registration(at)
        job_id = e["job_id"]
        workload, sep, name = job_id.partition("!")
        if not sep or not workload or not name:
            raise SchedulerError(f"{at}: the job id must be 'workload!name', not '{job_id}'")
        job = e["job"]
        pwl, psep, pname = job["profile_id"].partition("!")
        if psep and pwl != workload:
            raise NotSupportedError(f"{at}: profile '{job['profile_id']}' of another workload "
                                    "than the job's is not implemented by batsim-py")
        desc: dict[str, Any] = {"id": job_id, "subtime": t, "res": job["resource_request"],
                                "profile": pname if psep else job["profile_id"]}
        if job.get("walltime") is not None:
            desc["walltime"] = job["walltime"]
        if job.get("extra_data"):
            desc["extra_data"] = job["extra_data"]
        out.append(d.RegisterJob(t, job_id, desc))

    def _force_stop(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        """ForceSimulationStopEvent: the simulation stops at once (what ran so far is kept
        and written; jobs still running or waiting have no row), then the EDC is told
        SimulationEndsEvent (in `close`)."""
        if self._stop_at is None:
            self._stop_at = t
            self.sim.env.stop()

    def _hello_again(self, e: dict[str, Any], t: float, at: str, out: list[d.Decision]) -> None:
        raise SchedulerError(f"{at}: the EDC said hello a second time (Batsim 5 aborts)")


def _snap(t: float, now: float) -> float:
    """`now` for a time that is `now` as the JSON form printed it (12 decimals): an EDC that
    answers at the time it was told must not make the engine sleep a rounding error (binary
    and JSON EDCs then take effect at the same dates)."""
    if t != now and t == float(format_double(now)):
        return now
    return t


def _wrap(t: float, kind: str, event: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": t, "event_type": kind, "event": event}


def _job(job: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"resource_request": job.res}
    if job.walltime > 0:
        out["walltime"] = job.walltime
    extra = job.description.get("extra_data") if job.description else None
    if extra is None:
        out["extra_data"] = ""
    elif isinstance(extra, str):
        out["extra_data"] = extra
    else:
        out["extra_data"] = json.dumps(extra, separators=(",", ":"))
    out["profile_id"] = f"{job.workload}!{job.profile}"
    return out


def _profile_and_id(workload: str, profile: Any) -> dict[str, Any]:
    from batsim_py.protocol.batprotocol.profiles import profile_to_wire

    member, body = profile_to_wire(workload, profile)
    return {"id": f"{workload}!{profile.name}", "profile_type": member, "profile": body}


def _shown(data: Any) -> str:
    if isinstance(data, dict):
        return json.dumps(data, separators=(",", ":"))
    if data[:1] == b"{":
        return data.rstrip(b"\0").decode("utf-8", errors="replace")
    return f"<{len(data)} bytes of binary flatbuffers>"


def _switch_handler(kind: str) -> Any:
    """TurnOnOffHostsEvent / ChangeHostsPStateEvent: the engine's pstate switch."""
    key = "pstate" if kind == "pstate" else "state"

    def handler(self: EdcPeer, e: dict[str, Any], t: float, at: str,
                out: list[d.Decision]) -> None:
        try:
            hosts = intervalset.parse(e["host_ids"])
        except ValueError as exc:
            raise SchedulerError(f"{at}: host_ids '{e['host_ids']}': {exc}") from None
        if not hosts:
            return
        if kind != "pstate" and self.sim is not None and not self.sim.options.energy:
            raise SchedulerError(f"{at}: host on/off switches use batsim-py's energy model and "
                                 "the platform's sleep_pstates: run with -E/--energy")
        self._switch_requests.append((tuple(hosts), e[key], kind))
        decision = d.ChangeHostsPState if kind == "pstate" else d.SetResourceState
        out.append(decision(t, tuple(hosts), e[key]))

    return handler


_HANDLERS: dict[str, Any] = {
    "ExecuteJobEvent": EdcPeer._execute,
    "RejectJobEvent": EdcPeer._reject,
    "KillJobsEvent": EdcPeer._kill,
    "CallMeLaterEvent": EdcPeer._call_me_later,
    "StopCallMeLaterEvent": EdcPeer._stop_call,
    "ChangeHostsPStateEvent": _switch_handler("pstate"),
    "TurnOnOffHostsEvent": _switch_handler("onoff"),
    "FinishRegistrationEvent": EdcPeer._finish_registration,
    "EDCHelloEvent": EdcPeer._hello_again,
    "CreateProbeEvent": EdcPeer._create_probe,
    "RegisterJobEvent": EdcPeer._register_job,
    "ForceSimulationStopEvent": EdcPeer._force_stop,
    "RegisterProfileEvent": EdcPeer._register_profile,
    "StopProbeEvent": EdcPeer._stop_probe,
}
_UNSUPPORTED = {
    "TriggerProbeEvent": "TriggerProbeEvent is not implemented by Batsim 5.0 (it aborts on "
                         "it), nor by batsim-py",
    "ResetProbeEvent": "ResetProbeEvent is not implemented by Batsim 5.0 (it aborts on it), "
                       "nor by batsim-py",
}


class _JsonCodec:
    def __init__(self, strict: bool, ignored: list[str]) -> None:
        from batsim_py.protocol.batprotocol import json_text

        self._json = json_text
        self.strict = strict
        self.ignored = ignored

    def encode(self, msg: dict[str, Any]) -> bytes:
        return self._json.encode_message(msg)

    def decode(self, data: bytes, what: str) -> dict[str, Any]:
        return self._json.decode_message(data, self.strict, self.ignored, what)


class _ObjectCodec:
    """Python objects (FORMAT_OBJECTS): no serialisation, the schema's checks all the same."""

    def __init__(self, strict: bool, ignored: list[str]) -> None:
        from batsim_py.protocol.batprotocol.json_text import Checker
        from batsim_py.protocol.batprotocol.schema import load_schema

        self.schema = load_schema()
        self.checker = Checker(self.schema, strict, ignored)

    def encode(self, msg: dict[str, Any]) -> dict[str, Any]:
        return msg

    def decode(self, data: Any, what: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise ProtocolError(f"{what}: an EDC speaking Python objects answers a dict, not "
                                f"{type(data).__name__}")
        return self.checker.table(self.schema.root, data, what)


def _codec(fmt: int, strict: bool, ignored: list[str]) -> Any:
    if fmt == FORMAT_OBJECTS:
        return _ObjectCodec(strict, ignored)
    if fmt == FORMAT_JSON:
        return _JsonCodec(strict, ignored)
    from batsim_py.protocol.batprotocol.binary import BinaryCodec

    return BinaryCodec()
