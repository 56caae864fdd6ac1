"""The platform's profiles during a run: host speed, link bandwidth and latency changing over
time, applied as SimGrid 3.32's engine applies them (src/kernel/EngineImpl.cpp `solve`,
src/surf/ptask_L07.cpp).

The events dated 0 apply before anything runs (SimGrid's presolve). Then, each engine step,
once the next completion is known (`delta`), the profile events due by then
are applied, in date order, before time advances: an event on a resource that some running
activity uses cuts the step at the event's date (so the new value holds from that date on); an
event on an unused resource does not, and is applied at once (SimGrid's "lazy" rule: nothing
observes the difference, but a route's latency read by an activity started in between). The
rates of the step are those computed before the events; the next step solves again.

- SPEED (host): the host's speed is multiplied by the value (`scale`): CPU capacity is
  cores x peak x scale, each executor's one-core bound peak x scale / flops, and the energy
  plugin updates the host (its load is measured against the unscaled pstate speed, as SimGrid
  does).
- BANDWIDTH (link): the link's bandwidth becomes the value.
- LATENCY (link): the link's latency becomes the value. Activities started from then on pay
  it; running ones keep the latency they paid but their TCP-gamma bound uses it.

State profiles (on/off) are refused when the platform is read (see platform/reader.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from heapq import heappop, heappush
from typing import Any

from batsim_py.sim.network import TracedRow

COMM = 0  # engine.COMM (not imported: the engine is compiled, its constants are plain ints)


class _Target:
    """A resource a profile is attached to."""

    __slots__ = ("kind", "name", "index")

    def __init__(self, kind: str, name: str, index: int) -> None:
        self.kind = kind  # SPEED, BANDWIDTH or LATENCY
        self.name = name  # host or link name
        self.index = index  # host index, or link index


class Availability:
    def __init__(self, sim: Any) -> None:
        self.sim = sim
        network = sim.engine.network
        self.heap: list[tuple[float, int, _Target, Iterator[tuple[float, float]], float]] = []
        self.seq = 0
        for attachment in sim.platform.traces:
            if attachment.kind == "SPEED":
                names = [attachment.element]
            else:
                split = _split_names(sim.platform, attachment.element)
                names = split or [attachment.element]
            for name in names:
                index = (network.host_index[name] if attachment.kind == "SPEED"
                         else network.link_index[name])
                events = attachment.profile.events()
                self._push(_Target(attachment.kind, name, index), events)
        # SimGrid's presolve: the events dated 0 (or before) apply once the platform is built,
        # before any actor runs.
        heap = self.heap
        while heap and heap[0][0] <= 0.0:
            _, _, target, events, value = heappop(heap)
            self._push(target, events)
            self._apply(sim.engine, target, value)

    def _push(self, target: _Target, events: Iterator[tuple[float, float]]) -> None:
        nxt = next(events, None)
        if nxt is not None:
            self.seq += 1
            heappush(self.heap, (nxt[0], self.seq, target, events, nxt[1]))

    def apply_due(self, engine: Any, now: float, delta: float) -> float:
        """Apply the events due within the step; return the step, cut at the first event on
        a used resource."""
        heap = self.heap
        while heap and heap[0][0] <= now + delta:
            date = heap[0][0]
            while heap and heap[0][0] <= date:
                _, _, target, events, value = heappop(heap)
                self._push(target, events)
                if self._used(engine, target):
                    delta = date - now
                saved = engine.now
                engine.now = date
                try:
                    self._apply(engine, target, value)
                finally:
                    engine.now = saved
        return delta

    # ------------------------------------------------------------------------------------
    def _used(self, engine: Any, target: _Target) -> bool:
        """Whether an enabled activity has an element on the resource (SimGrid's
        Resource::is_used: a non-empty enabled-element set)."""
        network = engine.network
        for a in engine._actions:
            if not a.enabled:
                continue
            row = a.row
            if row is None:  # a message that has not needed the solver yet
                row = a.row = network.message_row(a.host, a.dst or engine.master_host, a.nbytes)
            if target.kind == "SPEED":
                if target.index in row.cpu_hosts:
                    return True
            elif target.index in row.links:
                return True
        return False

    def _apply(self, engine: Any, target: _Target, value: float) -> None:
        sim = self.sim
        network = engine.network
        if target.kind == "SPEED":
            h = target.index
            network.scale[h] = value
            engine.set_speed(h, sim.platform.hosts[target.name].speeds[network.pstate[h]])
            if sim.energy_trace is not None:
                sim.energy_trace.hosts.update(h)  # SimGrid's plugin updates on a speed change
            return
        link = sim.platform.links[target.name]
        if target.kind == "BANDWIDTH":
            object.__setattr__(link, "bandwidth", value)  # (what new routes' costs read)
            network.capacity[network.n_hosts + target.index] = value
        else:
            sim.platform.set_link_latency(target.name, value)
            network._routes.clear()
        engine._dirty = True
        self._refresh_activities(engine, target)

    def _refresh_activities(self, engine: Any, target: _Target) -> None:
        """Messages' cached costs and bounds, and parallel tasks' TCP-gamma bounds, follow the
        link's new value."""
        sim = self.sim
        network = engine.network
        sim._costs.clear()
        sim.master_cost = sim.cost(sim.master_host)
        for a in engine._actions:
            if a.kind == COMM:
                cost = sim.cost_between(a.host, a.dst or sim.master_host, a.nbytes)
                a.lone_rate = cost[1]
                a.row = None  # rebuilt from the current routes when the solver needs it
            elif (target.kind == "LATENCY" and isinstance(a.row, TracedRow)
                  and target.index in a.row.links):
                a.row = replace(a.row, bound=min(network.cpu_bound(a.row),
                                                 network.net_bound(a.row)))


def _split_names(platform: Any, name: str) -> list[str]:
    """A SPLITDUPLEX link named X is X_UP and X_DOWN: its profile applies to both."""
    if name in platform.links:
        return []
    return [n for n in (name + "_UP", name + "_DOWN") if n in platform.links]
