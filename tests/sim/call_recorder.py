"""A decision process that keeps every scheduler call it passes on, for tests comparing two
kernels' calls (tests/sim/test_lean.py, tests/sim/test_lean_ideal.py)."""

from __future__ import annotations

from collections.abc import Sequence

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess


class Recorder(DecisionProcess):
    """Keeps every call: its date and events (batches as the scheduler got them)."""

    def __init__(self, inner: DecisionProcess) -> None:
        self.inner = inner
        self.calls: list[tuple[float, tuple[Event, ...]]] = []

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self.calls.append((now, tuple(events)))
        return self.inner.exchange(now, events)

    def close(self) -> None:
        self.inner.close()
