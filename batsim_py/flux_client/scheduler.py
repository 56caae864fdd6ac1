"""`Scheduler`: the base class of Flux-style schedulers that drive batsim-py.

Its override points mirror flux-core's Python `flux.scheduler.Scheduler` (v0.88): `alloc`
(queue the request), `free`, `cancel`, `prioritize`, `schedule` (the policy), `forecast`,
`hello`, `expiration`, `resource_update`, `feasibility_check` (the `feasibility` service,
registered only when a subclass overrides it) and `resource_status` (`sched.resource-status`),
with an `AllocRequest` answered by `success(R, annotations)`, `deny(note)`, `cancel()` or
`annotate(d)`; `queue_depth` chooses limited (an integer) or unlimited mode. Porting a
flux-core scheduler is then mostly mechanical: what a broker gave it (handle, KVS, reactor,
timers) is replaced by the lockstep envelope of `batsim_py.protocol.flux.envelope`, the
simulated clock `self.now` and `self.wakeup(t)`.

The base class does the protocol: on `sim.hello` it registers its optional services
(`service.add`), asks `resource.acquire` and `job-manager.sched-hello`, builds the
`ResourcePool`, sends `job-manager.sched-ready`, and after each batch once ready calls
`schedule()` (a generator is run to its end) then `forecast()`. `run(endpoint)` serves
batsim-py over ZeroMQ (a REP socket it binds); `handle_text` is the same without a socket
(batsim-py's `--flux-scheduler` runs in-process).
"""

from __future__ import annotations

import heapq
import inspect
import json
import logging
import math
from typing import Any

from batsim_py.errors import ProtocolError
from batsim_py.flux_client.pool import InfeasibleRequest, ResourcePool
from batsim_py.protocol.flux import envelope as env
from batsim_py.protocol.flux import jobspec as js
from batsim_py.protocol.flux import rv1
from batsim_py.protocol.flux.envelope import EINVAL, ENODATA, ENOSYS, Message
from batsim_py.protocol.flux.services import EOVERFLOW, FEASIBILITY

log = logging.getLogger(__name__)

SUCCESS, ANNOTATE, DENY, CANCEL = 0, 1, 2, 3


class ExpirationRefused(Exception):
    """Raise from `Scheduler.expiration` to refuse a new expiration (errnum, text)."""

    def __init__(self, errnum: int, text: str = "") -> None:
        super().__init__(text)
        self.errnum = errnum


class PendingJob:
    """A queued alloc request, ordered by priority (highest first) then job id."""

    __slots__ = ("jobid", "priority", "userid", "t_submit", "request", "resource_request",
                 "jobspec")

    def __init__(self, jobid: int, priority: int, userid: int, t_submit: float,
                 request: AllocRequest, resource_request: js.Request,
                 jobspec: dict[str, Any]) -> None:
        self.jobid = jobid
        self.priority = priority
        self.userid = userid
        self.t_submit = t_submit
        self.request = request
        self.resource_request = resource_request
        self.jobspec = jobspec

    def __lt__(self, other: PendingJob) -> bool:
        return (-self.priority, self.jobid) < (-other.priority, other.jobid)

    @property
    def duration(self) -> float:
        return self.resource_request.duration


class AllocRequest:
    """One pending `sched.alloc`: answer it once with success/deny/cancel; annotate at will."""

    __slots__ = ("_scheduler", "jobid", "_annotated", "_finalized")

    def __init__(self, scheduler: Scheduler, jobid: int) -> None:
        self._scheduler = scheduler
        self.jobid = jobid
        self._annotated: set[str] = set()
        self._finalized = False

    def _final(self) -> None:
        if self._finalized:
            raise RuntimeError(f"job {self.jobid}: its alloc request was already answered")
        self._finalized = True

    def success(self, R: dict[str, Any], annotations: dict[str, Any] | None = None,
                clear: bool = True) -> None:
        """Grant `R`. `clear`: pending-time `sched` annotations not restated are deleted
        (sent as null), as flux-core's `AllocRequest.success` does."""
        self._final()
        if clear and self._annotated:
            sched: dict[str, Any] = {k: None for k in sorted(self._annotated)}
            sched.update((annotations or {}).get("sched", {}))
            annotations = {**(annotations or {}), "sched": sched}
        payload: dict[str, Any] = {"id": self.jobid, "type": SUCCESS, "R": R}
        if annotations is not None:
            payload["annotations"] = annotations
        self._scheduler._respond("sched.alloc", payload)

    def deny(self, note: str | None = None) -> None:
        self._final()
        payload: dict[str, Any] = {"id": self.jobid, "type": DENY}
        if note is not None:
            payload["note"] = note
        self._scheduler._respond("sched.alloc", payload)

    def cancel(self) -> None:
        self._final()
        self._scheduler._respond("sched.alloc", {"id": self.jobid, "type": CANCEL})

    def annotate(self, annotations: dict[str, Any]) -> None:
        if self._finalized:
            return  # a late forecast: the job is no longer pending
        self._annotated.update((annotations or {}).get("sched", {}).keys())
        self._scheduler._respond("sched.alloc",
                                 {"id": self.jobid, "type": ANNOTATE, "annotations": annotations})


class Scheduler:
    """Subclass and override `schedule()` (see the module docstring)."""

    queue_depth: int | str = "unlimited"
    hello_partial_ok = False

    def __init__(self, **options: Any) -> None:
        if "queue_depth" in options:
            self.queue_depth = options.pop("queue_depth")
        self.options = options
        self._queue: list[PendingJob] = []
        self.resources: ResourcePool | None = None
        self.now = 0.0  # the envelope's time (epoch included)
        self.epoch = 0.0
        self.ready = False
        self.finished = False
        self._out: list[Message] = []
        self._wakeup: float | None = None
        self._requests: dict[int, AllocRequest] = {}

    # ------------------------------------------------------ override points
    def hello(self, jobid: int, priority: int, userid: int, t_submit: float,
              R: dict[str, Any] | None) -> None:
        """A job holding resources at (re)start: mark them allocated."""
        if R is not None and self.resources is not None:
            end = float(R.get("execution", {}).get("expiration", 0.0) or 0.0)
            self.resources.register_alloc(jobid, rv1.parse(R, f"hello of job {jobid}"), end)

    def alloc(self, request: AllocRequest, jobid: int, priority: int, userid: int,
              t_submit: float, jobspec: dict[str, Any]) -> None:
        """Queue the request for the next `schedule()` pass (a bad jobspec is denied)."""
        try:
            rr = js.parse(jobspec, f"job {jobid}: jobspec")
        except ProtocolError as exc:
            request.deny(f"cannot parse jobspec: {exc}")
            return
        heapq.heappush(self._queue, PendingJob(jobid, priority, userid, t_submit, request,
                                               rr, jobspec))

    def free(self, jobid: int, R: dict[str, Any], final: bool = False) -> None:
        assert self.resources is not None
        self.resources.free(jobid, rv1.parse(R, f"sched.free of job {jobid}") if R else None)

    def cancel(self, jobid: int) -> None:
        for i, job in enumerate(self._queue):
            if job.jobid == jobid:
                del self._queue[i]
                heapq.heapify(self._queue)
                job.request.cancel()
                return

    def prioritize(self, jobs: list[list[int]]) -> None:
        new = {int(j): int(p) for j, p in jobs}
        for job in self._queue:
            if job.jobid in new:
                job.priority = new[job.jobid]
        heapq.heapify(self._queue)

    def schedule(self) -> Any:
        raise NotImplementedError("a Flux scheduler overrides schedule()")

    def forecast(self) -> None:
        """Annotate pending jobs (t_estimate, ...) after a pass; nothing by default."""

    def expiration(self, jobid: int, expiration: float) -> None:
        """A new expiration for a running job; raise ExpirationRefused to refuse."""
        if self.resources is not None:
            self.resources.update_expiration(jobid, expiration)

    def resource_update(self) -> None:
        """Called after ranks went up or down."""

    def feasibility_check(self, jobspec: dict[str, Any]) -> None:
        """A `feasibility.check` (RFC 27 "Feasibility"): return if `jobspec` could ever be
        satisfied, even with every resource up and free; raise `InfeasibleRequest` (answered
        with EOVERFLOW and its text, as flux-core) or any exception (EINVAL) if never. The
        `feasibility` service is registered only when a subclass overrides this method (the
        job manager then checks each job at submission, with `--flux-feasibility`); this
        body, the whole-inventory check of the pool, is there for overrides to call."""
        if self.resources is None:
            raise RuntimeError("no resources acquired yet")
        request = js.parse(jobspec, "feasibility.check: jobspec")
        self.resources.check_feasibility(request)

    def resource_status(self) -> dict[str, Any]:
        """The answer to `sched.resource-status`: `{all, allocated, down}` as R objects (what
        `flux resource list` shows); by default the pool's view."""
        if self.resources is None:
            raise RuntimeError("no resources acquired yet")
        return self.resources.status()

    def services(self) -> list[str]:
        """The optional services this scheduler registers: `feasibility` when
        `feasibility_check` is overridden."""
        overridden = type(self).feasibility_check is not Scheduler.feasibility_check
        return [FEASIBILITY] if overridden else []

    # ------------------------------------------------------------- helpers
    def wakeup(self, t: float) -> None:
        """Ask for a batch (maybe empty) at time `t` (envelope time), later than now."""
        if t > self.now and (self._wakeup is None or t < self._wakeup):
            self._wakeup = t

    def queue(self) -> list[PendingJob]:
        """The pending jobs in order (highest priority, then lowest id, first)."""
        return sorted(self._queue)

    def _respond(self, topic: str, payload: dict[str, Any]) -> None:
        self._out.append(env.response(topic, payload))

    # ------------------------------------------------------------ protocol
    def handle_text(self, text: str | bytes) -> str:
        return env.encode(self.handle(env.decode(text, "batsim-py")))

    def handle(self, batch: env.Envelope) -> env.Envelope:
        self.now = batch.now
        self._out = []
        self._wakeup = None
        for m in batch.messages:
            self._dispatch(m)
        if self.ready and not self.finished:
            result = self.schedule()
            if inspect.isgenerator(result):
                for _ in result:
                    pass
            self.forecast()
        return env.Envelope(self.now, self._out, self._wakeup)

    def _dispatch(self, m: Message) -> None:
        p = m.payload or {}
        topic = m.topic
        if m.kind == env.REQUEST:
            if topic == "sim.hello":
                self.epoch = float(p.get("epoch", 0.0))
                for name in self.services():  # first, as flux-core's run() does
                    self._out.append(env.request("service.add", {"service": name}))
                self._out.append(env.request("resource.acquire", {}))
                self._out.append(env.request("job-manager.sched-hello",
                                             {"partial-ok": self.hello_partial_ok}))
            elif topic == "sched.alloc":
                request = AllocRequest(self, p["id"])
                self.alloc(request, p["id"], p["priority"], p["userid"],
                           p.get("t_submit", 0.0), p["jobspec"])
            elif topic == "sched.free":
                self.free(p["id"], p.get("R"), bool(p.get("final", False)))
            elif topic == "sched.cancel":
                self.cancel(p["id"])
            elif topic == "sched.prioritize":
                self.prioritize(p.get("jobs", []))
            elif topic == "sched.expiration":
                try:
                    self.expiration(p["id"], p["expiration"])
                    self._out.append(env.response(topic, {}))
                except ExpirationRefused as exc:
                    self._out.append(env.error(topic, exc.errnum, str(exc) or None))
            elif topic == "feasibility.check" and FEASIBILITY in self.services():
                self._feasibility(p.get("jobspec"))
            elif topic == "sched.resource-status":
                try:
                    self._out.append(env.response(topic, self.resource_status()))
                except Exception as exc:  # noqa: BLE001 - answered, as flux-core does
                    self._out.append(env.error(topic, EINVAL, str(exc)))
            elif topic == "sim.end":
                self.finished = True
                self._out.append(env.response(topic, {}))
            else:
                self._out.append(env.error(topic, ENOSYS, f"no service '{topic}'"))
            return
        if topic in ("service.add", "service.remove"):
            if m.errnum:
                raise RuntimeError(f"{topic} failed (errnum {m.errnum}): {m.errstr}")
        elif topic == "resource.acquire":
            if m.errnum:
                raise RuntimeError(f"resource.acquire failed (errnum {m.errnum})")
            if "resources" in p:
                self.resources = ResourcePool(p["resources"], p.get("up"))
            else:
                assert self.resources is not None
                if "up" in p:
                    self.resources.mark_up(p["up"])
                if "down" in p:
                    self.resources.mark_down(p["down"])
                self.resource_update()
        elif topic == "job-manager.sched-hello":
            if m.errnum == ENODATA:
                mode = ({"mode": "unlimited"} if self.queue_depth == "unlimited"
                        else {"mode": "limited", "limit": int(self.queue_depth)})
                self._out.append(env.request("job-manager.sched-ready", mode))
            elif m.errnum:
                raise RuntimeError(f"sched-hello failed (errnum {m.errnum}): {m.errstr}")
            else:
                self.hello(p["id"], p["priority"], p["userid"], p["t_submit"], p.get("R"))
        elif topic == "job-manager.sched-ready":
            if m.errnum:
                raise RuntimeError(f"sched-ready failed (errnum {m.errnum}): {m.errstr}")
            self.ready = True
            log.debug("ready: %s job(s) queued", p.get("count"))

    def _feasibility(self, jobspec: Any) -> None:
        """Answer one feasibility.check: empty if feasible, else an error with the reason
        (jobspec is untrusted input: any failure is an answer, never a crash)."""
        topic = "feasibility.check"
        try:
            self.feasibility_check(jobspec)
        except InfeasibleRequest as exc:
            self._out.append(env.error(topic, EOVERFLOW, str(exc)))
        except Exception as exc:  # noqa: BLE001 - flux-core answers EINVAL likewise
            self._out.append(env.error(topic, EINVAL, str(exc) or type(exc).__name__))
        else:
            self._out.append(env.response(topic, None))

    # ------------------------------------------------------------- serving
    def run(self, endpoint: str, idle_timeout: float = 600.0) -> None:
        """Serve batsim-py at `endpoint` (binds a ZeroMQ REP socket) until `sim.end`;
        give up after `idle_timeout` seconds without a message (inf: never)."""
        import zmq

        context = zmq.Context()
        socket = context.socket(zmq.REP)
        socket.setsockopt(zmq.LINGER, 1000)
        try:
            socket.bind(endpoint)
            while not self.finished:
                ms = None if math.isinf(idle_timeout) else int(idle_timeout * 1000)
                if not socket.poll(ms):
                    raise TimeoutError(f"no message from batsim-py at {endpoint} for "
                                       f"{idle_timeout:g} s")
                socket.send_string(self.handle_text(socket.recv()))
        finally:
            socket.close()
            context.term()


def load_scheduler(name: str, options: dict[str, Any] | None = None) -> Scheduler:
    """A shipped policy (`fifo`, `easy`) or a user class as MODULE:CLASS or path.py:CLASS."""
    options = dict(options or {})
    if name == "fifo":
        from batsim_py.flux_client.fifo import FIFOScheduler

        return FIFOScheduler(**options)
    if name == "easy":
        from batsim_py.flux_client.easy import EasyScheduler

        return EasyScheduler(**options)
    from batsim_py.plugins import load_object

    cls = load_object(name, "Flux scheduler")
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        from batsim_py.errors import UsageError

        raise UsageError(f"Flux scheduler '{name}' is not a batsim_py.flux_client.Scheduler "
                         "subclass (shipped: fifo, easy)")
    return cls(**options)


def options_from_json(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}
