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

pybatsim is an optional dependency (it pins old versions of its dependencies, hence
`--no-deps`); asking for it without it installed is one clear error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import ProtocolError, SchedulerError, UsageError
from batsim_py.protocol.batsim_events import event_object
from batsim_py.protocol.replies import decode_reply, decode_reply_object
from batsim_py.wire import read_back, wire_time

PREFIX = "pybatsim:"
INSTALL = "pip install --no-deps pybatsim==3.2.1 procset sortedcontainers docopt"


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
        network.inbox = {"now": wire_time(now), "events": [event_object(e) for e in events]}
        network.outbox = None
        try:
            if self.bs is None:
                self.bs = self._start()
            else:
                self.bs.do_next_event()
        except (SchedulerError, ProtocolError, UsageError):
            raise
        except Exception as exc:
            from batsim_py.plugins import _where

            raise SchedulerError(f"scheduler {self.ref} failed: {_where(exc)}") from exc
        reply = network.outbox
        if reply is None:
            raise SchedulerError(f"scheduler {self.ref} did not reply to a message")
        return _decode(reply, self.ref)

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


# ------------------------------------------------------------------------------ the reply


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
