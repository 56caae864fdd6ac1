"""Signals: what happens in the simulation, offered to SimPy processes as SimPy events.

The server calls `fire(name, value)` where Batsim learns a fact (a job submitted, started or
ended, machines changing state, the scheduler called). Nothing is fired unless user code
listens: the simulation holds no `Signals` until the first `next()`/`subscribe()`.

Two ways to listen, as SimPy users expect:
- `next(name)`: a fresh `simpy.Event` that succeeds at the next occurrence (its value is the
  occurrence's record). Occurrences between two waits are missed, as with any SimPy event.
- `subscribe(name)`: a `simpy.Store` that receives every occurrence, none missed
  (`record = yield store.get()`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import simpy

SIGNALS = {
    "job_submitted": "the server received a job (value: the `Job`)",
    "job_started": "the scheduler's EXECUTE_JOB was applied (value: the `Job`)",
    "job_completed": "a job ended: completed, killed, failed or rejected (value: its "
                     "`JobRecord`: .job, .final_state, .starting_time, .end_time, .alloc)",
    "machines_changed": "machine states changed (value: the date)",
    "scheduler_called": "events were handed to the scheduler (value: the tuple of events)",
}


class Signals:
    def __init__(self, env: Any) -> None:
        self.env = env
        self.listeners: dict[str, list[Callable[[Any], None]]] = {name: [] for name in SIGNALS}

    def fire(self, name: str, value: Any) -> None:
        listeners = self.listeners[name]
        if listeners:
            for listener in list(listeners):
                listener(value)

    def listen(self, name: str, listener: Callable[[Any], None]) -> None:
        """Call `listener(value)` at every occurrence (library code; keep it short)."""
        self._check(name)
        self.listeners[name].append(listener)

    def next(self, name: str) -> simpy.Event:
        self._check(name)
        event = self.env.event()
        listeners = self.listeners[name]

        def once(value: Any) -> None:
            listeners.remove(once)
            event.succeed(value)

        listeners.append(once)
        return event

    def subscribe(self, name: str) -> simpy.Store:
        self._check(name)
        store = simpy.Store(self.env)
        self.listeners[name].append(store.put)
        return store

    def _check(self, name: str) -> None:
        if name not in SIGNALS:
            raise ValueError(
                f"unknown signal '{name}' (known: {', '.join(SIGNALS)})"
            )
