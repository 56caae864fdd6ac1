"""The server mailbox: Batsim's internal notifications as 1-byte transfers to the master host.

Every actor (submitters, job executors, the reply processor, waiters) tells the server what
happened by a blocking 1-byte SimGrid communication to the master host. The server receives one
message at a time, in the order they were posted; a transfer starts only when both the sender
has posted and the server is waiting, and lasts the route latency plus one byte at the route's
rate. This serialisation is what makes Batsim's timestamps what they are (batsim-semantics §6).

In `ideal` timing every transfer is instantaneous (it still completes in a later engine step, so
ordering rules are unchanged).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from simpy.events import Event

from batsim_py.sim.kernel import Kernel

# (latency, duration of the byte once the latency is paid); (0, 0) means free.
Cost = tuple[float, float]


class Mailbox:
    """FIFO of posted messages; the server takes them one by one (`get`)."""

    __slots__ = ("env", "_queue", "_waiting", "_on_register")

    def __init__(self, env: Kernel) -> None:
        self.env = env
        self._queue: deque[tuple[Any, Cost, Event]] = deque()
        self._waiting: Event | None = None  # the server's pending get

    def put(self, msg: Any, cost: Cost) -> Event:
        """Post `msg`; the returned event succeeds when the server has received it.

        The post is registered at the end of the current round (a deferred event), as SimGrid
        handles an actor's request after every actor woken at that step has run: a message
        posted in the same round as the server's mailbox check is not yet visible to it.
        """
        done = Event(self.env)
        reg = Event(self.env)
        reg.callbacks.append(lambda _ev, m=msg, c=cost, d=done: self._register(m, c, d))
        reg._ok = True
        reg._value = None
        self.env.schedule(reg)
        return done

    def _register(self, msg: Any, cost: Cost, done: Event) -> None:
        waiting = self._waiting
        if waiting is not None:
            self._waiting = None
            self._transfer(msg, cost, done, waiting, sender_first=False)
        else:
            self._queue.append((msg, cost, done))

    def get(self) -> Event:
        """The server waits for the next message (handled at once, it is the server's request)."""
        ev = Event(self.env)
        if self._queue:
            msg, cost, done = self._queue.popleft()
            self._transfer(msg, cost, done, ev, sender_first=True)
        else:
            self._waiting = ev
        return ev

    def has_pending(self) -> bool:
        """True when a message is already posted and not yet received (Batsim's mailbox check)."""
        return bool(self._queue)

    def _transfer(self, msg: Any, cost: Cost, done: Event, got: Event, sender_first: bool) -> None:
        env = self.env
        latency, transfer = cost
        end = Event(env)
        end._ok = True
        end._value = None

        def deliver(_ev: Event, msg: Any = msg) -> None:
            # SimGrid wakes the two sides in the order they started waiting on the comm.
            if sender_first:
                done.succeed()
                got.succeed(msg)
            else:
                got.succeed(msg)
                done.succeed()

        end.callbacks.append(deliver)
        if latency == 0.0 and transfer == 0.0:
            env.schedule_next_step(end)
        else:
            # Two engine steps as in SimGrid: the latency phase ends, then the byte flows.
            env.schedule_at(end, (env.now + latency) + transfer)

