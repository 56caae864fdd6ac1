"""In-process schedulers behind the decision interface.

A scheduler over the Batsim protocol only ever sees times printed with 6 decimals, and replies
with those rounded values (pybatsim sets its `now` from the message). To take exactly the
decisions it would take over ZeroMQ (and so land on the same timestamps), the in-process peer
hands the scheduler the same rounded `now` (the engine already stamps events with the times
the protocol would show).
"""

from __future__ import annotations

from collections.abc import Sequence

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess


def wire_time(t: float) -> float:
    """The value a scheduler parses from Batsim's `%.6f`."""
    return float("%.6f" % t)


class InProcess(DecisionProcess):
    def __init__(self, scheduler: DecisionProcess) -> None:
        self.scheduler = scheduler

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        return self.scheduler.exchange(wire_time(now), events)

    def close(self) -> None:
        self.scheduler.close()
