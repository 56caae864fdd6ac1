"""User sources: Batsim submitters driven by SimPy processes.

Batsim learns of jobs and external events from submitter actors on the master host: each says
hello, posts batches to the server (blocking until each is received) and says goodbye, after
which the server may notify the scheduler that nothing more will come. A source is such a
submitter whose batches are posted by user code instead of read from a file, so a process that
posts a file's events (or jobs) at the file's dates produces the very same messages, at the
same dates, in the same kernel rounds as the file would (`tests/sim/test_user_processes.py`
checks it byte for byte).

- `EventSource`: like one `--events` file (machine_unavailable, machine_available, generic).
- `JobSource`: like one workload file (its own workload name and profiles).

A source created before the run says hello at the start, in the order files do (what makes
a replay of a file exact); one created during the run says hello at once. It ends with
`close()`; if user code does not close it, a `keep_alive` source (the default for jobs) is
closed when nothing else can happen, and a source without `keep_alive` (the default for
events: failure models run forever) is closed as soon as everything else is over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import simpy

from batsim_py import intervalset
from batsim_py.errors import UserCodeError
from batsim_py.sim.engine import PUT
from batsim_py.workload.events import EventList, ExternalEvent
from batsim_py.workload.jobs import parse_job
from batsim_py.workload.model import Job, Profile, Workload
from batsim_py.workload.profiles import parse_profile


class _Source:
    kind = ""

    def __init__(self, sim: Any, name: str, keep_alive: bool) -> None:
        self.sim = sim
        self.env = sim.env
        self.name = name
        self.keep_alive = keep_alive
        self.is_open = True
        self.auto_closed = False
        self.started = False
        self.ready: simpy.Event = self.env.event()  # succeeds when the server got the hello
        if sim.started:
            self._check_can_join()
        sim.user_sources[name] = self

    def _check_can_join(self) -> None:
        """A source created during the run says hello at once; refused once the scheduler
        was told that no more of its kind will come."""
        sim = self.sim
        if sim.end_sent:
            raise UserCodeError(f"source '{self.name}': the simulation is ending")
        if self.kind == "jobs":
            told = sim.nb_submitters_done == sim.nb_submitters
        else:
            told = 0 < len(sim.event_lists) == sim.nb_event_submitters_done
        if told:
            raise UserCodeError(
                f"source '{self.name}': the scheduler was already told that no more "
                f"{'jobs' if self.kind == 'jobs' else 'external events'} will come; create "
                "the source before the run, or before the other sources close"
            )

    def _join(self) -> None:
        """Created during the run: say hello now."""
        if self.sim.started:
            self.start()

    def start(self) -> None:
        """Say hello (called by the simulation with the file submitters, in their order)."""
        self.started = True
        self.env.request((PUT, ("HELLO",), self._cost()), self.ready.succeed)

    def close(self, auto: bool = False) -> simpy.Event:
        """No more batches: say goodbye. Returns an event that succeeds once it is received.
        (`auto`: the simulation closes it; what user code posts afterwards is dropped.)"""
        if not self.is_open:
            raise UserCodeError(f"source '{self.name}' is already closed")
        self.is_open = False
        self.auto_closed = auto
        bye = "BYE" if self.kind == "jobs" else "EVENTS_BYE"
        return self._post((bye,))

    def _cost(self) -> tuple:
        sim = self.sim
        return sim.cost(sim.master_host)

    def _post(self, msg: tuple) -> simpy.Event:
        delivered = self.env.event()
        self.env.request((PUT, msg, self._cost()), delivered.succeed)
        return delivered

    def _dropped(self, what: str) -> simpy.Event | None:
        """None if the source takes a post now; else the event to return instead (closed by
        the simulation: the post is dropped, its event never succeeds)."""
        if self.auto_closed:
            return self.env.event()
        self._check_open(what)
        return None

    def _check_open(self, what: str) -> None:
        if not self.is_open:
            raise UserCodeError(f"source '{self.name}' is closed: cannot {what}")
        if not self.started:
            raise UserCodeError(
                f"source '{self.name}': cannot {what} before the simulation started "
                "(post from a SimPy process)"
            )


class EventSource(_Source):
    """External events posted by user code, exactly as an `--events` file's submitter posts
    them. Each call posts one batch (one message); the returned event succeeds once the server
    received it (a file's submitter waits for that before sleeping to its next date)."""

    kind = "events"

    def __init__(self, sim: Any, name: str, keep_alive: bool = False) -> None:
        super().__init__(sim, name, keep_alive)
        sim.event_lists.append(EventList(name, "", ()))
        self._join()

    def unavailable(self, resources: Iterable[int] | str) -> simpy.Event:
        """Machines become unavailable (Batsim's `machine_unavailable`)."""
        return self.send([{"type": "machine_unavailable", "resources": resources}])

    def available(self, resources: Iterable[int] | str) -> simpy.Event:
        """Machines become available again (Batsim's `machine_available`)."""
        return self.send([{"type": "machine_available", "resources": resources}])

    def generic(self, data: Mapping[str, Any]) -> simpy.Event:
        """Any other event, forwarded to the scheduler as a generic NOTIFY with `data`."""
        return self.send([dict(data)])

    def send(self, events: Iterable[Mapping[str, Any]]) -> simpy.Event:
        """Several events in one batch, each an object like a line of an events file
        (`{"type": "machine_unavailable", "resources": "0-3"}`; `timestamp` is ignored: it
        is now)."""
        dropped = self._dropped("post events")
        if dropped is not None:
            return dropped
        now = self.env.now
        batch = [self._event(e, now) for e in events]
        if not batch:
            raise UserCodeError(f"source '{self.name}': an empty batch of events")
        return self._post(("EVENTS", batch))

    def _event(self, obj: Mapping[str, Any], now: float) -> ExternalEvent:
        kind = obj.get("type")
        if kind in ("machine_available", "machine_unavailable"):
            resources = obj.get("resources")
            if isinstance(resources, str):
                ids = intervalset.parse(resources)
            else:
                ids = tuple(sorted({int(m) for m in resources or ()}))
            nb = len(self.sim.hosts)
            bad = [m for m in ids if not 0 <= m < nb]
            if not ids or bad:
                raise ValueError(
                    f"{kind}: machines {list(bad) or 'none'} do not exist "
                    f"(machines are 0-{nb - 1})"
                )
            description = {"type": kind, "resources": intervalset.format(ids),
                           "timestamp": now}
            return ExternalEvent(now, kind, ids, description)
        if not isinstance(kind, str):
            raise ValueError("an external event needs a string 'type'")
        return ExternalEvent(now, "generic", (), dict(obj))


class SubmittedJob:
    """A job user code submitted: `received` succeeds when the server got it (a file's
    submitter waits for that before sleeping to its next date), `done` when it ends (value:
    its `JobRecord`, with `final_state`, `starting_time`, `end_time`, `alloc`)."""

    __slots__ = ("job", "received", "done")

    def __init__(self, job: Job, received: simpy.Event, done: simpy.Event) -> None:
        self.job = job
        self.received = received
        self.done = done

    @property
    def id(self) -> str:
        return self.job.id


class JobSource(_Source):
    """Jobs posted by user code, exactly as a workload file's submitter posts them: the source
    is a workload of its own (`name`, shown in jobs.csv and to the scheduler) with its own
    profiles, declared before the run."""

    kind = "jobs"

    def __init__(self, sim: Any, name: str, profiles: Mapping[str, Any], keep_alive: bool = True,
                 path: str = "") -> None:
        super().__init__(sim, name, keep_alive)
        parsed: dict[str, Profile] = {}
        for pname, profile in profiles.items():
            if isinstance(profile, Profile):
                parsed[pname] = profile
            else:
                parsed[pname] = parse_profile(pname, profile, source=f"job source '{name}'",
                                              base_dir=".")
        self.profiles = parsed
        workload = Workload(name=name, path=path, nb_res=0, jobs=(), profiles=parsed)
        sim.workloads.append(workload)
        sim.profiles_of[name] = dict(parsed)
        sim.nb_submitters += 1
        self._count = 0
        self._waiting: dict[str, simpy.Event] = {}
        sim.user_signals().listen("job_completed", self._ended)
        self._join()

    def job(self, *, res: int, profile: str, walltime: float = -1.0, id: str | None = None,
            subtime: float | None = None, **extra: Any) -> Job:
        """A job of this source (not submitted yet): `subtime` defaults to now."""
        if profile not in self.profiles:
            raise ValueError(
                f"job source '{self.name}': no profile '{profile}' "
                f"(defined: {', '.join(sorted(self.profiles)) or 'none'})"
            )
        if id is None:
            id = str(self._count)
        self._count += 1
        obj: dict[str, Any] = {"id": id, "subtime": self.env.now if subtime is None else subtime,
                               "res": res, "profile": profile}
        if walltime != -1.0:
            obj["walltime"] = walltime
        obj.update(extra)
        return parse_job(obj, workload=self.name, source=f"job source '{self.name}'")

    def submit(self, job: Job | None = None, **fields: Any) -> SubmittedJob:
        """Submit one job now (a `Job` of this source, or the fields of `job()`)."""
        return self.submit_many([job if job is not None else self.job(**fields)])[0]

    def submit_many(self, jobs: Iterable[Job]) -> list[SubmittedJob]:
        """Submit several jobs in one batch (one message, as a file's jobs due together)."""
        sim = self.sim
        batch = list(jobs)
        if self._dropped("submit jobs") is not None:
            return [SubmittedJob(job, self.env.event(), self.env.event()) for job in batch]
        if not batch:
            raise UserCodeError(f"source '{self.name}': an empty batch of jobs")
        received = self.env.event()
        handles = []
        for job in batch:
            if job.workload != self.name:
                raise ValueError(f"job {job.id} belongs to workload '{job.workload}', not to "
                                 f"source '{self.name}'")
            if job.profile not in self.profiles:
                raise ValueError(f"job {job.id}: no profile '{job.profile}' in source "
                                 f"'{self.name}'")
            if job.id in sim.static_ids or job.id in sim.runs or job.id in sim.ended:
                raise ValueError(f"job {job.id} already exists")
            sim.static_ids.add(job.id)
            done = self.env.event()
            self._waiting[job.id] = done
            handles.append(SubmittedJob(job, received, done))
        trace = sim.energy_trace
        if trace is not None and trace.first_submission is None:
            trace.first_submission = trace.total()  # Batsim's origin of consumed_joules
        self.env.request((PUT, ("JOBS", batch), self._cost()), received.succeed)
        return handles

    def _ended(self, record: Any) -> None:
        done = self._waiting.pop(record.job.id, None)
        if done is not None:
            done.succeed(record)
