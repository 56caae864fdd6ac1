"""In-process schedulers behind the decision interface.

A scheduler over the Batsim protocol only ever sees times printed with 6 decimals, and replies
with those rounded values (pybatsim sets its `now` from the message). To take exactly the
decisions it would take over ZeroMQ (and so land on the same timestamps), the in-process peer
hands the scheduler the same rounded `now` (the engine already stamps events with the times
the protocol would show).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from batsim_py.decision.decisions import CallMeLater, Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.rapidjson_number import wire_value
from batsim_py.wire import wire_time


class InProcess(DecisionProcess):
    def __init__(self, scheduler: DecisionProcess) -> None:
        self.scheduler = scheduler

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        reply = self.scheduler.exchange(wire_time(now), events)
        if reply.now < 1e9:  # times a scheduler prints with 15 digits or less read back exactly
            return reply
        # Batsim would read long numbers back through RapidJSON (see rapidjson_number).
        decisions = []
        for decision in reply.decisions:
            timestamp = wire_value(decision.timestamp)
            if timestamp != decision.timestamp:  # (a copy only where the value changes)
                decision = replace(decision, timestamp=timestamp)
            if isinstance(decision, CallMeLater):
                at = wire_value(decision.at)
                if at != decision.at:
                    decision = replace(decision, at=at)
            decisions.append(decision)
        return Reply(wire_value(reply.now), tuple(decisions))

    def close(self) -> None:
        self.scheduler.close()
