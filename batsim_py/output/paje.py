"""`PREFIX_schedule.trace`: Batsim's Pajé trace of the schedule (which job each machine runs).

Batsim 4.2.1 writes it unless `--disable-schedule-tracing` is given (src/export.cpp,
`PajeTracer`): a fixed header defining the event types, one container per machine (`m<id>`,
named after its host), every machine first in state `w` (waiting), then one `PajeSetState` line
each time a machine starts computing a job (`j<job id>`, a state value defined, with a colour,
just before its first use) or goes back to waiting, and two kill events (`kk` on the killer,
`km` on each machine of the job) when a job reaches its walltime or has its parallel task
cancelled by a kill. The containers are destroyed at the simulation's last date.

Differences with Batsim, both on purpose: Batsim draws the order of its 64 job colours from
`std::random_device` (its trace differs from run to run); batsim-py shuffles them with a fixed
seed, so that two runs give the same bytes. With compute sharing, Batsim shows on a machine the
job whose `shared_ptr` address is smallest; batsim-py shows the job started first.

Events are kept as numbers during the run (three flat arrays) and formatted at the end, so a
million-job run does not hold a million strings.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Iterator, Sequence

# Pajé event ids, as Batsim numbers them (export.hpp, PajeTracerOutputConstants).
(DEFINE_CONTAINER_TYPE, CREATE_CONTAINER, DESTROY_CONTAINER, DEFINE_STATE_TYPE,
 DEFINE_ENTITY_VALUE, SET_STATE, DEFINE_EVENT_TYPE, NEW_EVENT, DEFINE_VARIABLE_TYPE,
 SET_VARIABLE) = range(1, 11)

_IDLE = -1  # code of a "back to waiting" record (job records hold the job's ordinal)
_KILL = -2  # code of a kill record (its machine field holds the job's ordinal)
COLOR_SEED = 0


def _hsv_to_rgb(h: float, s: float, v: float) -> tuple[float, float, float]:
    """Batsim's PajeTracer::hsv_to_rgb."""
    if s == 0:
        return v, v, v
    h /= 60
    i = math.floor(h)
    f = h - i
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    return [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v)][i] if i < 5 else (v, p, q)


def job_colors(count: int = 64) -> list[str]:
    """Batsim's palette (hues spread evenly), in a fixed shuffled order."""
    colors = []
    for i in range(count):
        r, g, b = _hsv_to_rgb(i * (360.0 / count), 1.0, 1.0)
        colors.append(f'"{r:f} {g:f} {b:f}"')
    random.Random(COLOR_SEED).shuffle(colors)
    return colors


_HEADER = "".join(f"%EventDef {name} {eid}\n" + "".join(f"% {field}\n" for field in fields)
                  + ("%EndEventDef \n" if name == "PajeSetState" else "%EndEventDef\n") + "\n"
                  for name, eid, fields in (
    ("PajeDefineContainerType", DEFINE_CONTAINER_TYPE, ("Type string", "Alias string",
                                                        "Name string")),
    ("PajeCreateContainer", CREATE_CONTAINER, ("Time date ", "Type string  ", "Alias string ",
                                               "Name string   ", "Container string  ")),
    ("PajeDestroyContainer", DESTROY_CONTAINER, ("Time date", "Name string ", "Type string")),
    ("PajeDefineStateType", DEFINE_STATE_TYPE, ("Alias string ", "Type string ",
                                                "Name string ")),
    ("PajeDefineEntityValue", DEFINE_ENTITY_VALUE, ("Alias string  ", "Type string  ",
                                                    "Name string  ", "Color color ")),
    ("PajeSetState", SET_STATE, ("Time date  ", "Type string  ", "Container string  ",
                                 "Value string  ")),
    ("PajeDefineEventType", DEFINE_EVENT_TYPE, ("Type string", "Alias string", "Name string")),
    ("PajeNewEvent", NEW_EVENT, ("Time date", "Type string", "Container string",
                                 "Value string")),
    ("PajeDefineVariableType", DEFINE_VARIABLE_TYPE, ("Type string", "Alias string",
                                                      "Name string", "Color string")),
    ("PajeSetVariable", SET_VARIABLE, ("Time date", "Type string", "Container string",
                                       "Value double")),
))

_TYPES = (
    "# Container types creation\n"
    f'{DEFINE_CONTAINER_TYPE} 0 root_ct "Machines"\n'
    f'{DEFINE_CONTAINER_TYPE} root_ct machine_ct "Machine"\n'
    f'{DEFINE_CONTAINER_TYPE} 0 scheduler_ct "Scheduler"\n'
    f'{DEFINE_CONTAINER_TYPE} scheduler_ct killer_ct "Killer"\n'
    "\n"
    "# Event types creation\n"
    f'{DEFINE_EVENT_TYPE} killer_ct kk "Job kill"\n'
    f'{DEFINE_EVENT_TYPE} machine_ct km "Job kill"\n'
    "\n"
    "# Variable types creation\n"
    f'{DEFINE_VARIABLE_TYPE} scheduler_ct vu_vt "Utilization" "0.0 0.5 0.0"\n'
    "\n"
)


class PajeTrace:
    """What the schedule trace records during a run: jobs starting and ending on machines."""

    __slots__ = ("machine_names", "times", "machines", "codes", "job_ids", "_ordinal",
                 "_killed", "_running", "sharing")

    def __init__(self, machine_names: Sequence[str]) -> None:
        self.machine_names = list(machine_names)  # by machine id (compute, then storage)
        self.times = array("d")
        self.machines = array("q")
        self.codes = array("q")
        self.job_ids: list[str] = []  # by ordinal, in the order jobs first ran
        self._ordinal: dict[str, int] = {}
        self._killed: dict[int, tuple[int, ...]] = {}  # ordinal -> machines of the kill
        # Jobs on each machine, only once some machine runs two (compute sharing).
        self._running: dict[int, list[int]] = {}
        self.sharing = False

    def _job(self, job_id: str) -> int:
        k = self._ordinal.get(job_id)
        if k is None:
            k = self._ordinal[job_id] = len(self.job_ids)
            self.job_ids.append(job_id)
        return k

    def _record(self, now: float, machine: int, code: int) -> None:
        self.times.append(now)
        self.machines.append(machine)
        self.codes.append(code)

    def job_starts(self, job_id: str, alloc: Sequence[int], now: float) -> None:
        """Batsim's update_machines_on_job_run: each machine shows its first job."""
        k = self._job(job_id)
        running = self._running
        for m in alloc:
            jobs = running.get(m)
            if jobs is None:
                running[m] = [k]
                self._record(now, m, k)
            else:  # compute sharing: the machine keeps showing the job started first
                jobs.append(k)

    def job_ends(self, job_id: str, alloc: Sequence[int], now: float,
                 unavailable: Sequence[int] = ()) -> None:
        """Batsim's update_machines_on_job_end: a machine left without a job waits (but an
        unavailable one writes nothing); one still shared shows its first remaining job."""
        k = self._ordinal[job_id]
        running = self._running
        for m in alloc:
            jobs = running[m]
            top = min(jobs)
            jobs.remove(k)
            if not jobs:
                del running[m]
                if m not in unavailable:
                    self._record(now, m, _IDLE)
            elif min(jobs) != top:
                self._record(now, m, min(jobs))

    def job_killed(self, job_id: str, alloc: Sequence[int], now: float) -> None:
        """Walltime reached or parallel task cancelled: the kill events (add_job_kill)."""
        k = self._ordinal[job_id]
        self._killed[k] = tuple(alloc)
        self._record(now, k, _KILL)

    # ---------------------------------------------------------------- formatting
    def chunks(self, end_time: float, size: int = 4096) -> Iterator[str]:
        """The file's text, piece by piece."""
        yield _HEADER
        yield _TYPES
        out = ["# Containers creation\n", f'{CREATE_CONTAINER} {0.0:f} root_ct root "Machines" 0\n']
        for m, name in enumerate(self.machine_names):
            out.append(f'{CREATE_CONTAINER} {0.0:f} machine_ct m{m} "{name}" root\n')
        out.append(f'{CREATE_CONTAINER} {0.0:f} scheduler_ct sc "Scheduler" 0\n'
                   f'{CREATE_CONTAINER} {0.0:f} killer_ct k "Killer" sc\n\n'
                   "# States creation\n"
                   f'{DEFINE_STATE_TYPE} machine_state machine_ct "Machine state"\n\n'
                   "# Creation of the different values the machine state can be\n"
                   f'{DEFINE_ENTITY_VALUE} w machine_state "Waiting" "0.0 0.0 0.0"\n'
                   f'{DEFINE_ENTITY_VALUE} l machine_state "Launching" "0.3 0.3 0.3"\n\n'
                   "# Begin of events\n")
        for m in range(len(self.machine_names)):
            out.append(f"{SET_STATE} {0.0:f} machine_state m{m} w\n")
        yield "".join(out)
        colors = job_colors()
        defined = bytearray(len(self.job_ids))  # a job's state value is defined at first use
        nb_defined = 0
        ids = self.job_ids
        times, machines, codes = self.times, self.machines, self.codes
        for lo in range(0, len(times), size):
            out = []
            for t, m, code in zip(times[lo:lo + size], machines[lo:lo + size],
                                  codes[lo:lo + size], strict=True):
                if code >= 0:
                    if not defined[code]:
                        defined[code] = 1
                        job = ids[code]
                        out.append(f'{DEFINE_ENTITY_VALUE} j{job} machine_state "{job}" '
                                   f"{colors[nb_defined % len(colors)]}\n")
                        nb_defined += 1
                    out.append(f"{SET_STATE} {t:f} machine_state m{m} j{ids[code]}\n")
                elif code == _IDLE:
                    out.append(f"{SET_STATE} {t:f} machine_state m{m} w\n")
                else:
                    job = ids[m]
                    out.append(f'{NEW_EVENT} {t:f} kk k "{job}"\n')
                    out.extend(f'{NEW_EVENT} {t:f} km m{x} "{job}"\n' for x in self._killed[m])
            yield "".join(out)
        out = ["\n# End of events, containers destruction\n"]
        for m in range(len(self.machine_names)):
            out.append(f"{DESTROY_CONTAINER} {end_time:f} m{m} machine_ct\n")
        out.append(f"{DESTROY_CONTAINER} {end_time:f} root root_ct\n")
        yield "".join(out)
