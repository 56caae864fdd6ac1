"""pybatsim 3.2.1 schedulers in-process: `--scheduler pybatsim:NAME`.

pybatsim's `Batsim` object reads a message from its network handler, runs the scheduler's
callbacks and sends the reply back through the same handler (`Batsim._read_bat_msg`). Here the
handler is a stand-in that holds the decoded message and keeps the decoded reply: no socket,
no JSON text, no second process. The scheduler and pybatsim's own code run unchanged, so the
run's decisions (and outputs) are those of the same scheduler over ZeroMQ; what changes is only
the cost of the transport.

Fidelity: over the wire pybatsim reads Batsim's `%.6f` numbers and Batsim reads pybatsim's
`json.dumps` back through RapidJSON; both conversions are applied to the values handed over
(`batsim_json.as_parsed`, `wire.read_back`). Anything unusual in a reply (tuples,
non-string keys, non-finite or foreign numbers) takes the real text route, so it behaves as
over ZeroMQ.

Speed (issue 20: in-process must be >= 3x faster than over ZeroMQ): pybatsim's own code
(its `Batsim` object and the scheduler) is most of a run's scheduling time and runs as it
is. On our side, the common events (JOB_SUBMITTED, JOB_COMPLETED) are handed over by
`_message` and the common replies (none, or EXECUTE_JOBs as pybatsim's `execute_job`
builds them) read by `_fast_reply` without the generic walks; each falls back to the
generic conversion for anything else, and tests check both give the same values, type for
type. The changes visible inside pybatsim (`_Message`, `InProcessNetwork.send`) only spare
the text of log lines its logger drops unseen (docs/schedulers.md).

pybatsim is an optional dependency (it pins old versions of its dependencies, hence
`--no-deps`); asking for it without it installed is one clear error.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from typing import Any

from batsim_py import intervalset
from batsim_py.decision.decisions import ExecuteJob, Reply
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import ProtocolError, SchedulerError, UsageError
from batsim_py.protocol.batsim_events import event_object
from batsim_py.protocol.replies import decode_reply, decode_reply_object
from batsim_py.wire import read_back, round6, wire_time
from batsim_py.workload.model import (
    FLOAT_SUBTIME,
    FLOAT_WALLTIME,
    ID,
    INT_SUBTIME,
    INT_WALLTIME,
    OTHER,
    PROFILE,
    RES,
    JobShape,
)

PREFIX = "pybatsim:"
INSTALL = "pip install --no-deps pybatsim==3.2.1 procset sortedcontainers docopt"
_PYBATSIM_LOGGER = logging.getLogger("batsim.batsim")  # pybatsim's `Batsim` object's logger


class InProcessNetwork:
    """Stand-in for pybatsim's `NetworkHandler`: `recv` hands over the pending decoded
    message, `send` keeps the reply. pybatsim calls exactly `bind`, `recv(blocking=)`,
    `send` and `close` on its handler (batsim/batsim.py)."""

    def __init__(self, socket_endpoint: Any = None, timeout: Any = None, type: Any = None) -> None:
        self.inbox: dict[str, Any] | None = None
        self.outbox: dict[str, Any] | None = None

    def bind(self) -> None:
        pass

    def connect(self) -> None:
        pass

    def close(self) -> None:
        pass

    def recv(self, blocking: bool = False) -> dict[str, Any]:
        msg = self.inbox
        if msg is None:  # pybatsim only reads when batsim-py hands it a message
            raise SchedulerError("internal error: pybatsim asked for a message out of turn")
        self.inbox = None
        return msg

    def send(self, msg: dict[str, Any]) -> None:
        """Take the reply. pybatsim's next line is `logger.info("Message Sent to Batsim:
        {}".format(msg))`, the reply's whole text built even when INFO is off; then the
        reply (a local dict pybatsim never reads again) is emptied once its two members are
        taken, so that text costs nothing. With INFO on it is left whole: the line is
        pybatsim's own."""
        if type(msg) is dict and not _PYBATSIM_LOGGER.isEnabledFor(logging.INFO):
            self.outbox = dict(msg)
            msg.clear()
        else:
            self.outbox = msg


class PybatsimPeer(DecisionProcess):
    """Drives one pybatsim scheduler (`pybatsim NAME -o OPTIONS`, as its launcher builds it)."""

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.ref = f"{PREFIX}{name}"
        batsim_module = _import_pybatsim(self.ref)
        self._batsim_module = batsim_module
        self.scheduler = _instantiate(self.ref, name, options)
        self.network = InProcessNetwork()
        self.bs: Any = None

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        network = self.network
        network.inbox = message = _message(now, events)
        network.outbox = None
        bs = self.bs
        try:
            if bs is None:
                self.bs = self._start()
            else:
                bs.do_next_event()
        except (SchedulerError, ProtocolError, UsageError):
            raise
        except Exception as exc:
            from batsim_py.plugins import _where

            raise SchedulerError(f"scheduler {self.ref} failed: {_where(exc)}") from exc
        reply = network.outbox
        if reply is None:
            raise SchedulerError(f"scheduler {self.ref} did not reply to a message")
        fast = _fast_reply(reply, message["now"])
        return fast if fast is not None else _decode(reply, self.ref)

    def _start(self) -> Any:
        """pybatsim's `Batsim(...)` reads the first message (SIMULATION_BEGINS) and replies
        inside its constructor; it builds its handler from the module's `NetworkHandler`
        name, which is pointed at the stand-in for that call only."""
        module = self._batsim_module
        original = module.NetworkHandler
        network = self.network
        module.NetworkHandler = lambda *args, **kwargs: network
        try:
            return module.Batsim(self.scheduler, "in-process", 0)
        finally:
            module.NetworkHandler = original


def _import_pybatsim(ref: str) -> Any:
    try:
        import batsim.batsim as batsim_module  # pybatsim's package is named `batsim`
    except ImportError as exc:
        raise UsageError(
            f"--scheduler {ref} needs pybatsim 3.2.1, which is not installed "
            f"({exc}); install it with: {INSTALL}"
        ) from None
    return batsim_module


def _instantiate(ref: str, name: str, options: dict[str, Any]) -> Any:
    """The scheduler as `pybatsim NAME -o OPTIONS` builds it: a module of pybatsim's
    `schedulers` package (`easyBackfill` -> class `EasyBackfill`) or a file path."""
    from batsim.tools.launcher import instanciate_scheduler

    if not name:
        raise UsageError(f"--scheduler {ref}: name a pybatsim scheduler, e.g. "
                         "pybatsim:easyBackfill")
    try:
        return instanciate_scheduler(name, options=options)
    except SystemExit:  # pybatsim prints a line and exits when the module or class is missing
        raise UsageError(
            f"--scheduler {ref}: pybatsim has no scheduler '{name}' (known: "
            f"{', '.join(known_schedulers())}; or a path/to/file.py whose class is the "
            "file name capitalised)"
        ) from None
    except Exception as exc:
        from batsim_py.plugins import _where

        raise SchedulerError(f"scheduler {ref}: creating it failed: {_where(exc)}") from exc


def known_schedulers() -> list[str]:
    """The modules of pybatsim's `schedulers` package (what `pybatsim NAME` accepts)."""
    import pkgutil

    try:
        import schedulers
    except ImportError:
        return []
    return sorted(m.name for m in pkgutil.iter_modules(schedulers.__path__) if not m.ispkg)


# ---------------------------------------------------------------------------- the message


class _Message(dict):  # type: ignore[type-arg]
    """A message as pybatsim gets it: a plain dict to every reader, but for one thing.

    pybatsim's `_read_bat_msg` logs each message it reads with
    `logger.info("Message Received from Batsim: {}".format(msg))`: the text of the whole
    message is built before `info` looks at the level, and thrown away when INFO is off
    (`pybatsim -v warning`, or in-process, where nothing sets pybatsim's logger to INFO).
    `format` gives that text exactly when the logger would emit it, else a short
    placeholder that the logger drops unseen. Nothing else differs from a dict."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        if _PYBATSIM_LOGGER.isEnabledFor(logging.INFO):
            return super().__format__(spec)
        return "(a message pybatsim's logger does not emit at this level)"


def _message(now: float, events: Sequence[Event]) -> _Message:
    """`{"now": .., "events": [event_object(e) ...]}`, the decoded message pybatsim would read
    from Batsim's text. Job submissions and completions (nearly every event of a run) are
    built directly (`_submitted`, `_completed`), with what `batsim_json.as_parsed` gives for
    their data; any other event, or data those do not take, goes through `event_object`
    itself. An event's time is `event_object`'s `round(float(t), 6)`, taken from `now`'s
    when equal (most events are at `now`; not for zeros, whose sign `==` does not tell)."""
    if type(now) is float:
        wire_now = round6(now)
        same: float | None = now if now else None
    else:
        wire_now = wire_time(now)
        same = None
    objects = []
    for event in events:
        cls = type(event)
        if cls is JobCompleted:
            kind = "JOB_COMPLETED"
            data = _completed(event)  # type: ignore[arg-type]
        elif cls is JobSubmitted:
            kind = "JOB_SUBMITTED"
            data = _submitted(event)  # type: ignore[arg-type]
        else:
            data = None
        if data is None:
            objects.append(event_object(event))
            continue
        t = event.timestamp
        objects.append({"timestamp": (wire_now if t == same else round6(t))
                        if type(t) is float else round(float(t), 6),
                        "type": kind, "data": data})
    return _Message(now=wire_now, events=objects)


def _completed(event: JobCompleted) -> dict[str, Any] | None:
    """The data of JOB_COMPLETED as pybatsim reads it (`_event_data`'s, whose values parse
    back as they are), or None (not plain strings: the generic route)."""
    job_id = event.job_id
    state = event.job_state
    if type(job_id) is not str or type(state) is not str:
        return None
    return {"job_id": job_id, "job_state": state, "return_code": int(event.return_code),
            "alloc": _alloc_text(event.alloc)}


def _submitted(event: JobSubmitted) -> dict[str, Any] | None:
    """The data of JOB_SUBMITTED as pybatsim reads it, built from the job's `JobShape`
    (a job read from a file) in one pass: the object `job_json` rebuilds, its floats read
    back from `%.6f` as `_flat` does. None for anything else (a forwarded profile, a job
    given its JSON object, values `_flat` does not take): the generic route."""
    job = event.job
    form = job.json_form
    if type(form) is JobShape:
        extra: tuple[Any, ...] = ()
    elif type(form) is tuple and len(form) == 2 and type(form[0]) is JobShape:
        form, extra = form
    else:
        return None
    if event.profile is not None:
        return None
    job_id = job.id
    if type(job_id) is not str:
        return None
    obj: dict[str, Any] = {}
    other = 0
    for key, code in zip(form.keys, form.codes, strict=True):
        if code == ID:
            obj[key] = job_id
        elif code == PROFILE:
            value = job.profile
            if type(value) is not str:
                return None
            obj[key] = value
        elif code == RES:
            value = job.res
            if type(value) is not int:
                return None
            obj[key] = value
        elif code == INT_SUBTIME:
            obj[key] = int(job.subtime)
        elif code == INT_WALLTIME:
            obj[key] = int(job.walltime)
        elif code == FLOAT_SUBTIME or code == FLOAT_WALLTIME:
            value = job.subtime if code == FLOAT_SUBTIME else job.walltime
            if type(value) is not float or value - value != 0.0:
                return None
            obj[key] = round(value, 6)
        elif code == OTHER:
            value = _flat_value(extra[other], 2)
            if value is _NOT_FLAT:
                return None
            obj[key] = value
            other += 1
        else:  # (a code this reader does not know)
            return None
    if "id" not in obj:  # (job_json adds it; a JobShape always has it)
        return None
    return {"job_id": job_id, "job": obj}


_NOT_FLAT = object()


def _flat_value(item: Any, depth: int) -> Any:
    """One value as `_flat` converts it (a dict at `depth`), or `_NOT_FLAT`."""
    t = type(item)
    if t is str or t is int or t is bool or item is None:
        return item
    if t is float:
        return _NOT_FLAT if item - item != 0.0 else round(item, 6)
    if t is dict and depth <= 2:
        flat = _flat(item, depth)
        return _NOT_FLAT if flat is None else flat
    return _NOT_FLAT


def _flat(value: dict[str, Any], depth: int) -> dict[str, Any] | None:
    """A copy of `value` as `json.loads(batsim_json.dumps(value))` returns it, when its keys
    are strings and its values plain scalars or (at most two levels down) such objects;
    None for anything else (lists, subclasses, non-finite floats...), which the caller
    leaves to the generic conversion. Floats are read back from `%.6f` (`round(x, 6)`, as
    `batsim_json.as_parsed` does)."""
    out = {}
    for key, item in value.items():
        t = type(item)
        if t is float:
            if item - item != 0.0:  # nan or inf: the text route says what happens
                return None
            item = round(item, 6)
        elif t is dict:
            if depth >= 2:
                return None
            item = _flat(item, depth + 1)
            if item is None:
                return None
        elif not (t is str or t is int or t is bool or item is None):
            return None
        if type(key) is not str:
            return None
        out[key] = item
    return out


# ------------------------------------------------------------------------------ the reply


def _fast_reply(reply: Any, sent_now: float) -> Reply | None:
    """`decode_reply_object(reply)` for the replies of nearly every message, built by
    pybatsim itself: no event, or EXECUTE_JOBs of a job id and an interval set string only
    (`Batsim.execute_job`), every number a float that RapidJSON reads back unchanged. None
    for any other reply, which `_decode` reads (validation and its errors included).

    pybatsim's times are the message's `now` (`Batsim.time()`), `sent_now`, a `round(t, 6)`
    value: below 1e9 such a value reads back as itself (`round` is idempotent there, its
    15 significant digits are exact for RapidJSON), so a number equal to it needs no check.
    A contiguous allocation `a-b` is decided as `range(a, b + 1)`, the ids `intervalset.parse`
    gives, in the form the in-process schedulers use (decisions.ExecuteJob)."""
    if type(reply) is not dict or len(reply) != 2:
        return None
    now = reply.get("now")
    events = reply.get("events")
    if type(now) is not float or type(events) is not list:
        return None
    known = sent_now if -1e9 < sent_now < 1e9 else None  # reads back as itself
    if now != known and not _reads_back(now):
        return None
    if not events:
        return Reply(now, ())
    decisions = []
    for event in events:
        if type(event) is not dict or len(event) != 3 or event.get("type") != "EXECUTE_JOB":
            return None
        ts = event.get("timestamp")
        data = event.get("data")
        if type(ts) is not float or not ts <= now or (ts != known and not _reads_back(ts)) \
                or type(data) is not dict or len(data) != 2:
            return None
        job_id = data.get("job_id")
        alloc = data.get("alloc")
        if type(job_id) is not str or type(alloc) is not str:
            return None
        ids = _ALLOCS.get(alloc)
        if ids is None:
            ids = _contiguous(alloc)
        if ids is None:
            try:
                ids = intervalset.parse(alloc)
            except ValueError:
                return None  # (the generic reading names the culprit)
        decisions.append(ExecuteJob(ts, job_id, ids))
    return Reply(now, tuple(decisions))


# The allocations met so far (a few thousand distinct ones in a run of 10,000 jobs): the
# ranges of pybatsim's texts, and the canonical texts of those ranges, read once each.
_ALLOCS: dict[str, range] = {}
_ALLOC_TEXTS: dict[range, str] = {}
_MAX_ALLOCS = 1 << 14


def _contiguous(text: str) -> range | None:
    """The ids of a one-token interval set `a-b` or `a` (pybatsim's usual allocation) as a
    range, when `intervalset.parse` accepts it (remembered in `_ALLOCS`); None for anything
    else (parse decides)."""
    lo, sep, hi = text.partition("-")
    if not lo.isdecimal() or (sep and not hi.isdecimal()):  # (then int() reads them, as parse)
        return None
    a = int(lo)
    b = int(hi) if sep else a
    if b < a or b - a >= intervalset.MAX_IDS:
        return None
    ids = range(a, b + 1)
    if len(_ALLOCS) >= _MAX_ALLOCS:
        _ALLOCS.clear()
    _ALLOCS[text] = ids
    return ids


def _alloc_text(alloc: Any) -> str:
    """`intervalset.format(alloc)`, remembered for ranges (the allocations `_contiguous`
    gives come back in JOB_COMPLETED)."""
    if type(alloc) is not range:
        return intervalset.format(alloc)
    text = _ALLOC_TEXTS.get(alloc)
    if text is None:
        text = intervalset.format(alloc)
        if len(_ALLOC_TEXTS) >= _MAX_ALLOCS:
            _ALLOC_TEXTS.clear()
        _ALLOC_TEXTS[alloc] = text
    return text


def _decode(reply: dict[str, Any], ref: str) -> Reply:
    """What Batsim reads from `json.dumps(reply)`, pybatsim's own send.

    A reply of plain JSON values whose floats RapidJSON reads back exactly from their repr
    is decoded as it is: `json.loads(json.dumps(x))` equals `x` there. Anything else
    (tuples, non-string keys, long or non-finite numbers, foreign types) takes the real text
    route, so it is read exactly as over ZeroMQ."""
    if _plain(reply, 0):
        return decode_reply_object(reply)
    try:
        text = json.dumps(reply)
    except (TypeError, ValueError) as exc:
        raise SchedulerError(f"scheduler {ref}: its reply cannot be sent as JSON "
                             f"({exc})") from None
    return decode_reply(text)


def _plain(value: Any, depth: int) -> bool:
    """`value` survives `json.dumps` then Batsim's reading unchanged (type for type)."""
    cls = type(value)
    if cls is str or cls is int or cls is bool or value is None:
        return True
    if cls is float:
        return _reads_back(value)
    if depth > 100:
        return False
    if cls is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            t = type(item)
            if t is not str and t is not int and not _plain(item, depth + 1):
                return False
        return True
    if cls is list:
        return all(_plain(item, depth + 1) for item in value)
    return False  # tuples, subclasses, numpy numbers...: as json.dumps writes them


def _reads_back(x: float) -> bool:
    """RapidJSON reads `repr(x)` (what `json.dumps` writes) back as `x` itself: the one
    conversion every in-process peer applies (`wire.read_back`)."""
    return math.isfinite(x) and read_back(x) == x
