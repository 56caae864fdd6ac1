"""In-process schedulers behind the decision interface.

A scheduler over the Batsim protocol only ever sees times printed with 6 decimals, and replies
with those rounded values (pybatsim sets its `now` from the message). To take exactly the
decisions it would take over ZeroMQ (and so land on the same timestamps), the in-process peer
hands the scheduler the same rounded `now` (the engine already stamps events with the times
the protocol would show), and reads the times of its reply as Batsim reads them from the
scheduler's text (`wire.read_back`, the conversion the pybatsim peer uses too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from batsim_py.decision.decisions import CallMeLater, Decision, Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.schedulers.easy import EasyBackfill
from batsim_py.wire import EXACT_READ_LIMIT, read_back, wire_time


class InProcess(DecisionProcess):
    def __init__(self, scheduler: DecisionProcess) -> None:
        self.scheduler = scheduler
        # A scheduler that says so (`replies_at_request_time = True`, e.g. `easy`) replies
        # with the request's `now` and stamps every decision with it, never CALL_ME_LATER:
        # its reply, at a time `read_back` keeps as it is, is read as it is without a look.
        self.at_request = getattr(scheduler, "replies_at_request_time", False) is True
        # The shipped `easy` (compiled with this module) is called natively: a Python-level
        # method call (look-up, bound method, arguments parsed) per exchange otherwise.
        self.easy: EasyBackfill | None = (scheduler if type(scheduler) is EasyBackfill
                                          else None)

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        t = wire_time(now)
        easy = self.easy
        reply = easy.exchange(t, events) if easy is not None else self.scheduler.exchange(t, events)
        if self.at_request and type(t) is float and -EXACT_READ_LIMIT < t < EXACT_READ_LIMIT:
            return reply
        # The usual reply (`now` and every decision at the request's time, a 6-decimal float
        # below `EXACT_READ_LIMIT` (or an int below 1e9) which `read_back` keeps as it is, and
        # no CALL_ME_LATER date to read) is read as it is: the same reply `as_read` would
        # return, without its calls per decision (past 1e9 s, `read_back`'s conversion of each
        # new `now` tripled the scheduler's time per job on the million-job benchmark).
        limit = EXACT_READ_LIMIT if type(t) is float else 1e9
        if reply.now == t and -limit < t < limit:
            for decision in reply.decisions:
                if decision.timestamp != t or type(decision) is CallMeLater:
                    return as_read(reply)
            return reply
        return as_read(reply)

    def close(self) -> None:
        self.scheduler.close()


def as_read(reply: Reply) -> Reply:
    """The reply as Batsim reads it over ZeroMQ: each time as RapidJSON reads its repr
    (`wire.read_back`), so that an in-process scheduler's own sums (`now + 100 / 3`) land on
    the same dates as over the wire; a copy only where a value changes."""
    now = reply.now
    read_now = read_back(now)
    out: list[Decision] | None = None
    for k, decision in enumerate(reply.decisions):
        ts = decision.timestamp
        timestamp = read_now if ts == now else read_back(ts)  # (mostly the reply's now)
        read = decision
        if timestamp != ts:
            read = replace(read, timestamp=timestamp)
        if type(read) is CallMeLater:
            at = read_back(read.at)
            if at != read.at:
                read = replace(read, at=at)
        if read is not decision and out is None:
            out = list(reply.decisions[:k])
        if out is not None:
            out.append(read)
    if out is None:
        return reply if read_now == now else Reply(read_now, reply.decisions)
    return Reply(read_now, tuple(out))
