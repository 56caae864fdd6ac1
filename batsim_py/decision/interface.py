"""The one interface between the engine and whoever decides (in-process, ZeroMQ, replay).

The engine cannot tell the peers apart: it calls `exchange` with the request's `now` and the
batch of events, and applies the reply's decisions at their timestamps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event


class DecisionProcess(ABC):
    @abstractmethod
    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        """Hand one batch of events (the first holds SIMULATION_BEGINS) and get the reply."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (sockets, subprocesses). Called once, even after an error."""
