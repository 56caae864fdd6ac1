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

Events are kept as numbers during the run (one record per job event in three flat arrays) and
formatted at the end, machine by machine, so a million-job run does not hold a million
strings and pays little while it runs.
"""

from __future__ import annotations

import io
import math
import os
import random
from array import array
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import BinaryIO

import numpy as np

from batsim_py.output import stream
from batsim_py.output.fixed import fixed6, native_text
from batsim_py.output.stream import DropBehind

# Pajé event ids, as Batsim numbers them (export.hpp, PajeTracerOutputConstants).
(DEFINE_CONTAINER_TYPE, CREATE_CONTAINER, DESTROY_CONTAINER, DEFINE_STATE_TYPE,
 DEFINE_ENTITY_VALUE, SET_STATE, DEFINE_EVENT_TYPE, NEW_EVENT, DEFINE_VARIABLE_TYPE,
 SET_VARIABLE) = range(1, 11)

_START, _END, _KILLED = 0, 1, 2  # record kinds
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
    """What the schedule trace records during a run: jobs starting, ending and being killed.

    One record per job event (its date, kind and job); the lines for each machine of the
    job are made when the file is written, where the per-machine state (which job a machine
    shows) is replayed.
    """

    __slots__ = ("machine_names", "times", "kinds", "jobs", "job_ids", "allocs", "_ordinal",
                 "_unavailable", "written", "job_starts", "job_ends")

    # A job's start (job_id, alloc, now) and end (job_id, alloc, now[, unavailable]): the
    # methods `_job_starts` and `_job_ends`, or, with the native writer built, its C callables
    # making the same appends (output/_ctext.c's JobLog; an end with unavailable machines goes
    # to the method).
    job_starts: Callable[[str, Sequence[int], float], None]
    job_ends: Callable[..., None]

    def __init__(self, machine_names: Sequence[str]) -> None:
        self.machine_names = list(machine_names)  # by machine id (compute, then storage)
        self.times = array("d")
        self.kinds = array("b")  # _START, _END or _KILLED
        self.jobs = array("q")  # job ordinal
        self.job_ids: list[str] = []  # by ordinal, in the order jobs started
        self.allocs: list[Sequence[int]] = []  # by ordinal
        self._ordinal: dict[str, int] = {}
        self._unavailable: dict[int, frozenset[int]] = {}  # end record -> machines to skip
        # Where the file was written last (output/files.py reuses its body on a rewrite).
        self.written: tuple[str, int, int, int, int, int] | None = None
        self.job_starts = self._job_starts
        self.job_ends = self._job_ends
        native = native_text()
        if native is not None:
            appends = (self.times.append, self.kinds.append, self.jobs.append)
            self.job_starts = native.JobLog(False, self._ordinal, self.job_ids, self.allocs,
                                            *appends, self._job_starts)
            self.job_ends = native.JobLog(True, self._ordinal, self.job_ids, self.allocs,
                                          *appends, self._job_ends)

    def _job_starts(self, job_id: str, alloc: Sequence[int], now: float) -> None:
        """Batsim's update_machines_on_job_run: each machine shows its first job."""
        k = self._ordinal[job_id] = len(self.job_ids)
        self.job_ids.append(job_id)
        self.allocs.append(alloc)
        self.times.append(now)  # (the record's three arrays, appended inline: once per job)
        self.kinds.append(_START)
        self.jobs.append(k)

    def _job_ends(self, job_id: str, alloc: Sequence[int], now: float,
                 unavailable: Collection[int] = ()) -> None:
        """Batsim's update_machines_on_job_end: a machine left without a job waits (but an
        unavailable one writes nothing); one still shared shows its first remaining job."""
        if unavailable:
            self._unavailable[len(self.times)] = frozenset(unavailable)
        self.times.append(now)
        self.kinds.append(_END)
        # The job's ordinal is not needed any more: the running jobs' only (a million-job run
        # would otherwise keep a million entries).
        self.jobs.append(self._ordinal.pop(job_id))

    def job_killed(self, job_id: str, alloc: Sequence[int], now: float) -> None:
        """Walltime reached or parallel task cancelled: the kill events (add_job_kill)."""
        self.times.append(now)
        self.kinds.append(_KILLED)
        self.jobs.append(self._ordinal[job_id])

    # ---------------------------------------------------------------- formatting
    def chunks(self, end_time: float, size: int = 4096) -> Iterator[str]:
        """The file's text, piece by piece: `body_chunks`, then `trailer`."""
        yield from self.body_chunks(size)
        yield self.trailer(end_time)

    def trailer(self, end_time: float) -> str:
        """The containers' destruction at `end_time`: the only text that depends on it (a
        rewrite at a later clock with no new record changes nothing else)."""
        out = ["\n# End of events, containers destruction\n"]
        for m in range(len(self.machine_names)):
            out.append(f"{DESTROY_CONTAINER} {end_time:f} m{m} machine_ct\n")
        out.append(f"{DESTROY_CONTAINER} {end_time:f} root root_ct\n")
        return "".join(out)

    def body_chunks(self, size: int = 4096) -> Iterator[str]:
        """The file's text but the trailer, piece by piece (the pure-Python writer: the
        reference of the native one, `body_bytes`)."""
        yield from self._head_chunks()
        yield from _event_chunks(self, size)

    def body_bytes(self, limit: int = 1 << 20) -> Iterator[bytes]:
        """The file's bytes but the trailer (UTF-8), piece by piece: the events written by the
        native writer (output/_ctext.c, chunks of about `limit` bytes) when it is built and
        BATSIM_PY_PURE is not set, else by `body_chunks`. Same bytes either way."""
        native = native_text()
        if native is None:
            for text in self.body_chunks():
                yield text.encode()
            return
        yield "".join(self._head_chunks()).encode()
        events = native.TraceEvents(len(self.machine_names), self.job_ids, self.allocs,
                                    job_colors(), self._unavailable, self.times, self.kinds,
                                    self.jobs)
        r, count = 0, len(self.times)
        while r < count:
            text, r = events.chunk(r, limit)
            yield text

    def write_body(self, out: BinaryIO, step: int = 8 << 20) -> int:
        """Write the file's bytes but the trailer to the binary file `out` (from its
        position); return its position after them (where the body ends).

        The native writer (output/_ctext.c) formats the events into one buffer and writes it
        straight to the file's descriptor (`step` bytes at a time from here: no bytes object
        per chunk, no copy through Python); without it (or for a file without a descriptor)
        the pure-Python writer's text is written. Same bytes either way. A file growing past
        output/stream.py's STREAM_AFTER (a 13 GB trace) goes to disk as it is written,
        instead of filling the page cache: the native writer's blocks by direct writes
        (O_DIRECT: no copy into the page cache, a tenth of the CPU), the pure writer's
        dropped from the cache behind it."""
        native = native_text()
        try:
            fd = out.fileno() if native is not None else -1
        except (AttributeError, OSError, io.UnsupportedOperation):
            fd = -1
        if fd < 0:
            behind = None
            try:
                behind = DropBehind(out.fileno())
            except (AttributeError, OSError, io.UnsupportedOperation):
                pass
            for chunk in self.body_bytes():
                out.write(chunk)
                if behind is not None:
                    behind.advance(out.tell())
            return out.tell()
        out.write("".join(self._head_chunks()).encode())
        out.flush()
        assert native is not None
        events = native.TraceEvents(len(self.machine_names), self.job_ids, self.allocs,
                                    job_colors(), self._unavailable, self.times, self.kinds,
                                    self.jobs)
        behind = DropBehind(fd)
        position = os.lseek(fd, 0, os.SEEK_CUR)
        # A trace that will pass STREAM_AFTER goes direct from its first page: its first
        # 256 MB through the cache cost more system time than the rest of a 13 GB trace's
        # direct writes (0.15-0.35 s against 0.2 s per 2.65 GB here).
        huge = self.estimated_size() >= stream.STREAM_AFTER
        r, count = 0, len(self.times)
        while r < count:
            r, written = events.write(fd, r, step, huge or position >= stream.STREAM_AFTER)
            position += written
            behind.advance(position)
        out.seek(position)  # (the buffered file's position, after writes to its descriptor)
        return position

    def estimated_size(self) -> int:
        """About the events' bytes, from the widths of up to 1,024 jobs: a line of about 30
        bytes (`6 0.000000 machine_state m0 w`, most are longer) per machine of each record.
        A guess for choosing how to write, never a length."""
        allocs = self.allocs
        if not allocs or not self.times:
            return 0
        sample = allocs[::max(1, len(allocs) // 1024)]
        return len(self.times) * sum(map(len, sample)) // len(sample) * 30

    def _head_chunks(self) -> Iterator[str]:
        """The header, the types and the containers: the text before the events."""
        yield _HEADER
        yield _TYPES
        n = len(self.machine_names)
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
        for m in range(n):
            out.append(f"{SET_STATE} {0.0:f} machine_state m{m} w\n")
        yield "".join(out)


def _event_chunks(trace: PajeTrace, size: int) -> Iterator[str]:
    """The body's events, `size` records at a time.

    Each record's lines share their date and value: its date is formatted once (all the
    chunk's dates by one C-level `%`, from integers when they are whole: `fixed6`), and a
    job starting on a contiguous block of waiting machines, or ending on one with no other
    job to show next, writes its block with one C-level `join` over the machine numbers
    (kept as text). Compute sharing and unavailable machines take the machine-by-machine
    path."""
    n = len(trace.machine_names)
    colors = job_colors()
    nb_colors = len(colors)
    ids, allocs = trace.job_ids, trace.allocs
    defined = bytearray(len(ids))  # a job's state value is defined at first use
    nb_defined = 0
    shown = [-1] * n  # the job each machine shows (-1: waiting)
    others: dict[int, list[int]] = {}  # jobs sharing a machine with the one it shows
    nb_others = 0  # entries in `others`' lists: 0 in a run without compute sharing
    numbers = [str(m) for m in range(n)]  # machine ids as text, joined below
    times, kinds, jobs = trace.times, trace.kinds, trace.jobs
    unavailable = trace._unavailable
    dates = np.frombuffer(times, dtype=np.float64) if len(times) else np.zeros(0)
    for lo in range(0, len(times), size):
        hi = min(lo + size, len(times))
        date, values = fixed6(dates[lo:hi])
        prefixes = ((f"{SET_STATE} {date} machine_state m\0" * (hi - lo)) % tuple(values)
                    ).split("\0")
        out: list[str] = []
        for r, kind, k, prefix in zip(range(lo, hi), kinds[lo:hi], jobs[lo:hi], prefixes,
                                       strict=False):  # (prefixes: one more, empty)
            alloc = allocs[k]
            # The common case, one C-level join per job: a contiguous allocation whose
            # machines all wait (a start) or all show this job with no other job to show
            # next (an end, no machine unavailable): a line per machine in allocation order.
            if type(alloc) is range and alloc.step == 1:
                a = alloc.start
                b = alloc.stop
                w = b - a
                if w > 0:
                    if kind == _START:
                        if shown[a:b].count(-1) == w:
                            job = ids[k]
                            line = f" j{job}\n"
                            if not defined[k]:
                                defined[k] = 1
                                out.append(f'{DEFINE_ENTITY_VALUE} j{job} machine_state '
                                           f'"{job}" {colors[nb_defined % nb_colors]}\n')
                                nb_defined += 1
                            out += (prefix, (line + prefix).join(numbers[a:b]), line)
                            shown[a:b] = [k] * w
                            continue
                    elif (kind == _END and not nb_others and r not in unavailable
                          and shown[a:b].count(k) == w):
                        out += (prefix, (" w\n" + prefix).join(numbers[a:b]), " w\n")
                        shown[a:b] = [-1] * w
                        continue
            if kind == _START:
                line = f" j{ids[k]}\n"
                for m in alloc:
                    if shown[m] < 0:
                        shown[m] = k
                        if not defined[k]:
                            defined[k] = 1
                            out.append(f'{DEFINE_ENTITY_VALUE} j{ids[k]} machine_state '
                                       f'"{ids[k]}" {colors[nb_defined % nb_colors]}\n')
                            nb_defined += 1
                        out.append(f"{prefix}{numbers[m]}{line}")
                    else:  # compute sharing: the machine keeps showing its first job
                        others.setdefault(m, []).append(k)
                        nb_others += 1
            elif kind == _END:
                skip = unavailable.get(r, ())
                for m in alloc:
                    if shown[m] != k:  # a job sharing the machine, not shown: no line
                        others[m].remove(k)
                        nb_others -= 1
                        continue
                    rest = others.get(m)
                    if not rest:
                        shown[m] = -1
                        if m not in skip:
                            out.append(f"{prefix}{numbers[m]} w\n")
                        continue
                    top = min(rest)
                    rest.remove(top)
                    nb_others -= 1
                    shown[m] = top
                    if not defined[top]:
                        defined[top] = 1
                        out.append(f'{DEFINE_ENTITY_VALUE} j{ids[top]} machine_state '
                                   f'"{ids[top]}" {colors[nb_defined % nb_colors]}\n')
                        nb_defined += 1
                    out.append(f"{prefix}{numbers[m]} j{ids[top]}\n")
            else:
                t = times[r]
                job = f' "{ids[k]}"\n'
                head = f"{NEW_EVENT} {t:f} km m"
                out.append(f"{NEW_EVENT} {t:f} kk k{job}")
                if alloc:
                    out.append(head + (job + head).join([numbers[x] for x in alloc]) + job)
        yield "".join(out)
