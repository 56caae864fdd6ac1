"""In-process schedulers behind the decision interface.

A scheduler over the Batsim protocol only ever sees times printed with 6 decimals, and replies
with those rounded values (pybatsim sets its `now` from the message). To take exactly the
decisions it would take over ZeroMQ (and so land on the same timestamps), the in-process peer
hands the scheduler the same rounded times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

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
        rounded = [replace(e, timestamp=wire_time(e.timestamp)) for e in events]
        return self.scheduler.exchange(wire_time(now), rounded)

    def close(self) -> None:
        self.scheduler.close()
