"""Power states as Batsim sees them (§2.4-2.5): computation, sleep and virtual pstates, and
the grouping of switch requests.

A host's `sleep_pstates` property lists `sleep:switch_off:switch_on` triplets: going to sleep
pstate S runs 1 flop at the speed of S's switch-off pstate, waking from S runs 1 flop at the
speed of its switch-on pstate. Every other pstate is a computation pstate. A request
(SET_RESOURCE_STATE) completes when all its machines reached the target; requests with the same
target are completed in the order they were made.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from batsim_py.errors import PlatformError
from batsim_py.platform.model import Machine
from batsim_py.sim.energy import parse_sleep_pstates

COMPUTATION, SLEEP, VIRTUAL = "computation", "sleep", "virtual"


class PStates:
    """Kinds of every machine's pstates."""

    def __init__(self, machines: Sequence[Machine], label: str = "") -> None:
        """Read every machine's `sleep_pstates`; configurations that could only fail later (a
        switch that never ends, a host starting asleep) are refused now, naming the host."""
        self.kinds: list[list[str]] = []
        self.sleep: list[dict[int, tuple[int, int]]] = []
        for m in machines:
            where = f"{label}: host {m.name}" if label else f"host {m.name}"
            speeds = m.host.speeds
            n = len(speeds)
            text = m.host.properties.get("sleep_pstates", "")
            sleeps = parse_sleep_pstates(m.name, text, n, label) if text else {}
            kinds = [COMPUTATION] * n
            for off, on in sleeps.values():
                kinds[off] = kinds[on] = VIRTUAL
            for s, (off, on) in sleeps.items():
                if kinds[s] == VIRTUAL:
                    raise PlatformError(
                        f"{where}: pstate {s} is both a sleep and a virtual pstate in "
                        "sleep_pstates"
                    )
                kinds[s] = SLEEP
                for role, p in (("switch-off", off), ("switch-on", on)):
                    if not speeds[p] > 0:
                        raise PlatformError(
                            f"{where}: sleep_pstates '{text}': the {role} pstate {p} of sleep "
                            f"pstate {s} has speed {speeds[p]:g}; a switch runs 1 flop at that "
                            "speed and would never end (give it a speed > 0)"
                        )
            if sleeps and kinds[m.host.pstate] != COMPUTATION:
                raise PlatformError(
                    f"{where}: sleep_pstates '{text}' makes pstate {m.host.pstate}, the one the "
                    f"host starts in, a {kinds[m.host.pstate]} pstate; a host must start in a "
                    "computation pstate (renumber the triplet or set the host's pstate "
                    "attribute)"
                )
            if m.role == "compute_node":
                for p in range(n):
                    if kinds[p] == COMPUTATION and speeds[p] <= 0:
                        raise PlatformError(
                            f"{where}: computation pstate {p} has speed {speeds[p]:g}; with "
                            "--energy every computation pstate must be faster than 0"
                        )
            self.kinds.append(kinds)
            self.sleep.append(sleeps)


class Switches:
    """Pending SET_RESOURCE_STATE requests, per target pstate, in order."""

    def __init__(self) -> None:
        self._pending: dict[int, deque[tuple[tuple[int, ...], set[int]]]] = {}

    def add(self, machines: tuple[int, ...], target: int) -> None:
        self._pending.setdefault(target, deque()).append((machines, set(machines)))

    def done(self, machine: int, target: int) -> tuple[int, ...] | None:
        """Mark one machine switched; the request's machines if that completed it."""
        queue = self._pending[target]
        for k, (machines, waiting) in enumerate(queue):
            if machine in waiting:
                waiting.discard(machine)
                if waiting:
                    return None
                del queue[k]
                if not queue:
                    del self._pending[target]
                return machines
        raise AssertionError(f"machine {machine} was not switching to pstate {target}")
