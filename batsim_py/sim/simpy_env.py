"""A `simpy.Environment` whose clock and steps are the kernel's.

The kernel (`engine.py`) keeps SimGrid's rounds and step clock; this module lets ordinary SimPy
processes run inside them, so users extend a simulation without touching the kernel:

- `now` is the kernel's clock (`Engine.now`), never a date of SimPy's own.
- An event scheduled with no delay (`succeed()`, a process starting, a condition met) is due
  *now*: it is processed in the current kernel round if SimPy code is running, else by a
  kernel actor created for it (it runs in the next round, at the same date, like an actor
  woken by a message).
- An event scheduled with a delay `d` (`env.timeout(d)`) becomes a kernel sleep of `d`: the
  date it wakes at is the one SimGrid's clock gives that sleep (`now += delta` per step, the
  kernel's own arithmetic), not `now + d` computed by SimPy.

SimPy code therefore always runs inside a kernel actor, a *driver*. A driver makes at most one
kernel request at a time (a sleep, or a message to Batsim's server from the master host); the
first request that SimPy code makes while a driver runs is that driver's next request, issued
at the end of the very round, exactly as the kernel actor that SimPy code replaces would issue
it (this is what makes a SimPy process indistinguishable from one of Batsim's submitters).
Further requests go to new drivers, one round later at the same date.

The kernel is compiled (mypyc): nothing here subclasses or patches it; drivers are plain
generators speaking the kernel's request tuples. A run with no SimPy code has no driver.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.core import EmptySchedule
from simpy.events import NORMAL, Event, Process

from batsim_py.errors import UserCodeError
from batsim_py.sim.engine import SLEEP, Engine


class _Driver:
    """The kernel actor running SimPy code: its next request and what to do once it is met."""

    __slots__ = ("request", "then", "actor")

    def __init__(self, request: tuple | None, then: Callable[[], None] | None) -> None:
        self.request = request
        self.then = then
        self.actor: Any = None


class KernelEnvironment(simpy.Environment):
    """SimPy's environment on the kernel's clock (see the module docstring).

    Everything SimPy builds on `schedule()` works unchanged: `timeout`, `event`, `process`,
    `all_of`/`any_of`, interrupts, `simpy.Resource`, `Store`, `Container`.
    """

    def __init__(self, engine: Engine) -> None:
        super().__init__(0.0)
        self._engine = engine
        # Events due at the kernel's current date: (priority, id, event), SimPy's order.
        self._due: list[tuple[int, int, Event]] = []
        self._driver: _Driver | None = None  # the driver running SimPy code right now
        self._drivers: set[_Driver] = set()  # live drivers (stopped when the simulation ends)
        self._drain_spawned = False  # a driver is already on its way for the due events
        self._stopping = False
        self.closed = False
        self.runner: Callable[[Any], Any] | None = None  # Simulator.run, when there is one

    # ------------------------------------------------------------------ SimPy's interface
    @property
    def now(self) -> float:
        """The kernel's clock (SimGrid's dates, in seconds)."""
        return self._engine.now

    def schedule(self, event: Event, priority: int = NORMAL, delay: float = 0) -> None:
        if self.closed:
            return  # the simulation is over: nothing can happen any more
        if delay == 0:
            heappush(self._due, (priority, next(self._eid), event))
            if self._driver is None and not self._drain_spawned:
                self._drain_spawned = True
                self._spawn(_Driver(None, None))
            return
        if not delay > 0:  # (negative or NaN: SimPy's Timeout refuses negatives itself)
            raise ValueError(f"delay must be a positive number of seconds, not {delay!r}")
        eid = next(self._eid)
        due = self._due

        def wake() -> None:
            heappush(due, (priority, eid, event))

        self.request((SLEEP, float(delay)), wake)

    def peek(self) -> float:
        """`now` when an event is due now, else infinity (later dates are the kernel's)."""
        return self.now if self._due else float("inf")

    def step(self) -> None:
        """Process the next event due now (SimPy's `step`, within the current round)."""
        try:
            _, _, event = heappop(self._due)
        except IndexError:
            raise EmptySchedule from None
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            raise _user_failure(event, self.now) from None

    def run(self, until: Any = None) -> Any:
        """Run the whole simulation (`Simulator.run(until)`): only from outside it."""
        if self.runner is None or self._driver is not None or self.closed:
            raise UserCodeError(
                "env.run() runs the simulation from outside it (as Simulator.run does); SimPy "
                "processes wait with yield, and end the simulation with sim.stop()"
            )
        return self.runner(until)

    # ------------------------------------------------------------------ kernel side
    def request(self, request: tuple, then: Callable[[], None] | None = None) -> None:
        """Have a kernel request made for SimPy code: by the running driver if it has none
        yet (end of this round), else by a new driver (next round, same date); `then` runs
        inside a driver once the request is met (the sleep ended, the message arrived)."""
        driver = self._driver
        if driver is not None and driver.request is None:
            driver.request = request
            driver.then = then
        else:
            self._spawn(_Driver(request, then))

    def _spawn(self, driver: _Driver) -> None:
        self._drivers.add(driver)
        driver.actor = self._engine.spawn(self._drive(driver), "simpy")

    def _drive(self, driver: _Driver) -> Generator[tuple, Any, None]:
        try:
            while True:
                request = driver.request
                if request is not None:
                    then = driver.then
                    driver.request = driver.then = None
                    yield request
                    self._run_due(driver, then)
                else:
                    self._drain_spawned = False
                    self._run_due(driver, None)
                if driver.request is None:
                    return
        finally:
            self._drivers.discard(driver)

    def _run_due(self, driver: _Driver, then: Callable[[], None] | None) -> None:
        """Run SimPy code in `driver`: its own wake-up, then every event due now."""
        self._driver = driver
        try:
            if then is not None:
                then()
            due = self._due
            step = self.step
            while due and not self._stopping:
                step()
        finally:
            self._driver = None
        if self._stopping:
            from batsim_py.sim.simulation import Stopped

            raise Stopped

    def stop(self) -> None:
        """End the simulation once the SimPy code running now returns (no further event is
        processed); what was simulated so far is kept and written."""
        self._stopping = True
        if self._driver is None:
            self._spawn(_Driver(None, None))

    def close(self) -> None:
        """The simulation ended: stop every driver (their sleeps are cancelled), ignore
        anything SimPy code schedules from now on."""
        self.closed = True
        self._due.clear()
        for driver in list(self._drivers):
            if driver.actor is not None and not driver.actor.dead:
                self._engine.kill(driver.actor)
        self._drivers.clear()


def _user_failure(event: Event, now: float) -> UserCodeError:
    """One line naming the user code that failed (the innermost user frame)."""
    exc = event._value
    where = ""
    tb = getattr(exc, "__traceback__", None)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(package) and "/simpy/" not in filename:
            where = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    name = ""
    if isinstance(event, Process):
        name = getattr(event._generator, "__name__", "")
    who = f"SimPy process '{name}'" if name else "a SimPy event"
    at = f" ({where})" if where else ""
    error = UserCodeError(
        f"{who}{at} failed at t={now:f}: {type(exc).__name__}: {exc}"
    )
    error.__cause__ = exc if isinstance(exc, BaseException) else None
    return error
