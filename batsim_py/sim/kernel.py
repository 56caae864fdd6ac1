"""The simulation clock: a SimPy environment that orders same-date events like SimGrid does.

Batsim's timestamps depend on *when* things happen inside one simulated instant, because the
server decides to call the scheduler only when no other message is already waiting in its
mailbox. SimGrid runs an instant as a sequence of engine steps (actions that complete together),
each made of rounds (the actors woken run, then their requests are handled in order). We map
that onto SimPy's event queue, keyed `(time, rank, insertion order)`:

- an event due at a later date gets rank 0: it belongs to the first step at that date;
- an event triggered with no delay keeps the rank of the event being processed, so it is handled
  after everything already queued in the current step (the next round of that step);
- `schedule_next_step` gives rank + 1: an activity of zero duration (a message over a zero-latency
  route) completes in the next engine step at the same date, as in SimGrid.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.core import EmptySchedule
from simpy.events import NORMAL, Event


class Kernel(simpy.Environment):
    def __init__(self) -> None:
        super().__init__()
        self.rank = 0

    def schedule(self, event: Event, priority: Any = NORMAL, delay: float = 0) -> None:
        now = self._now
        if delay:
            at = now + delay
            if at > now:
                heappush(self._queue, (at, 0, next(self._eid), event))
                return
        heappush(self._queue, (now, self.rank, next(self._eid), event))

    def schedule_at(self, event: Event, at: float) -> None:
        """Trigger `event` (already succeeded or to be processed) at absolute date `at`."""
        if at > self._now:
            heappush(self._queue, (at, 0, next(self._eid), event))
        else:
            heappush(self._queue, (self._now, self.rank + 1, next(self._eid), event))

    def schedule_next_step(self, event: Event) -> None:
        heappush(self._queue, (self._now, self.rank + 1, next(self._eid), event))

    def step(self) -> None:
        try:
            self._now, self.rank, _, event = heappop(self._queue)
        except IndexError:
            raise EmptySchedule from None
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            raise event._value

    def fire_at(self, at: float, value: Any = None) -> Event:
        """An event that succeeds at absolute date `at` (no float drift from `now + delay`)."""
        ev = Event(self)
        ev._ok = True
        ev._value = value
        self.schedule_at(ev, at)
        return ev
