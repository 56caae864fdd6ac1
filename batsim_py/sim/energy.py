"""Host energy as SimGrid's energy plugin computes it, and Batsim's energy bookkeeping.

SimGrid does not integrate power exactly: each host keeps its consumed joules and the date of
its last update, and an update charges the whole interval since then at the power of *now*
(the pstate saved at the previous update, the CPU load of the last solve). Updates happen only
when the host's energy is read (Batsim reads it at every job start and end, energy trace row
and energy query), on pstate changes, and when a task using the host's CPU ends (or, for a
single-host execution, starts). Reproducing those update points reproduces Batsim's joules to
the printed digit (simgrid-models §5).

Power at pstate p with load L in [0, 1]: Idle_p if L == 0, else Epsilon_p + L (AllCores_p -
Epsilon_p); a pstate of speed <= 0 counts as fully loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from batsim_py.errors import PlatformError, SimulationError

LD = np.longdouble
_MANY = 16  # hosts read at once from which `total` updates them in numpy


def parse_wattage(host: str, text: str, nb_pstates: int,
                  label: str = "") -> list[tuple[float, float, float]]:
    """`wattage_per_state`: one `Idle:Epsilon:AllCores` or `Idle:AllCores` per pstate.

    SimGrid takes any number strtod reads; powers that are not finite or negative would give
    nan, infinite or negative joules, so they are refused here, before the run."""
    where = f"{label}: host {host}" if label else f"host {host}"
    entries = [e.strip() for e in text.split(",")]
    if len(entries) != nb_pstates:
        raise PlatformError(
            f"{where}: wattage_per_state has {len(entries)} entries for {nb_pstates} pstates "
            "(give one Idle:Epsilon:AllCores or Idle:AllCores per pstate)"
        )
    out = []
    for entry in entries:
        try:
            values = [float(v) for v in entry.split(":")]
        except ValueError:
            values = []
        if len(values) == 2:
            values = [values[0], values[0], values[1]]
        if len(values) != 3:
            raise PlatformError(
                f"{where}: wattage_per_state entry '{entry}' is not Idle:Epsilon:AllCores "
                "or Idle:AllCores (watts)"
            )
        for v in values:
            if not 0 <= v < math.inf:
                raise PlatformError(
                    f"{where}: wattage_per_state entry '{entry}': {v:g} W cannot be simulated "
                    "(powers must be finite and >= 0)"
                )
        out.append((values[0], values[1], values[2]))
    return out


def parse_sleep_pstates(host: str, text: str, nb_pstates: int,
                        label: str = "") -> dict[int, tuple[int, int]]:
    """`sleep_pstates`: triplets `sleep:switch_off:switch_on` -> {sleep: (off, on)}."""
    where = f"{label}: host {host}" if label else f"host {host}"
    result: dict[int, tuple[int, int]] = {}
    for triplet in (t.strip() for t in text.split(",")):
        if not triplet:
            continue
        try:
            sleep, off, on = (int(v) for v in triplet.split(":"))
        except ValueError:
            raise PlatformError(
                f"{where}: sleep_pstates entry '{triplet}' is not sleep:switch_off:switch_on"
            ) from None
        for p in (sleep, off, on):
            if not 0 <= p < nb_pstates:
                raise PlatformError(
                    f"{where}: sleep_pstates refers to pstate {p}, which does not exist "
                    f"(pstates 0-{nb_pstates - 1})"
                )
        if sleep in result:
            raise PlatformError(
                f"{where}: sleep_pstates defines sleep pstate {sleep} twice (as Batsim, "
                "batsim-py wants one triplet per sleep pstate: remove one)"
            )
        result[sleep] = (off, on)
    return result


class HostEnergy:
    """Consumed joules of every host, updated lazily like SimGrid's plugin."""

    def __init__(self, engine: object, network: object, hosts: Sequence[object]) -> None:
        self.engine = engine
        self.network = network
        n = len(network.host_names)
        self.watts: list[list[tuple[float, float, float]]] = [[] for _ in range(n)]
        for h in hosts:
            i = network.host_index[h.name]
            text = h.properties.get("wattage_per_state")
            if text is None:
                self.watts[i] = [(0.0, 0.0, 0.0)] * len(h.speeds)  # SimGrid: 0 W, warned
            else:
                self.watts[i] = parse_wattage(h.name, text, len(h.speeds),
                                              network.platform.path)
        self.speeds = [list(network.platform.hosts[name].speeds) for name in network.host_names]
        self.cores = [network.platform.hosts[name].cores for name in network.host_names]
        # Per host (numpy arrays, so that the hosts of a trace row update at once): joules,
        # date of the last update, and the pstate saved then.
        self.energy = np.zeros(n)
        self.last = np.zeros(n)
        # SimGrid 3.32 seals every host twice (at its end tag, where the XML `pstate` is
        # applied, and again when its zone is sealed); the second seal re-creates the plugin's
        # record with pstate 0. Until a host's first update its joules are therefore charged at
        # pstate 0's wattage and speed, whatever its initial pstate (oracle-checked).
        self.saved_pstate = np.zeros(n, dtype=np.int64)
        self._tables: tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None = None
        self._index: tuple[object, np.ndarray] = ((), np.zeros(0, dtype=np.int64))
        self._wattmin: tuple[object, list[int], LD] = ((), [], LD(0))
        self._pstates: tuple[list[int], np.ndarray] = ([], np.zeros(0, dtype=np.int64))

    def update(self, h: int) -> None:
        """`HostEnergy::update`: charge the interval since the last update, save the pstate.

        SimGrid calls it unconditionally on a pstate change and as a single-host execution
        starts; see `action_ended` for the other update points."""
        now = self.engine.now
        last = float(self.last[h])
        if last < now:
            power = self._power(h)
            joules = float(self.energy[h]) + power * (now - last)
            if not joules < math.inf:
                raise self._overflow(h, now, power, last)
            self.energy[h] = joules
            self.last[h] = now
        self.saved_pstate[h] = self.network.pstate[h]

    def _overflow(self, h: int, now: float, watts: float, last: float) -> SimulationError:
        """Host h's joules would leave the floats: the error naming it (both update paths)."""
        return SimulationError(
            f"at t={now!r} the consumed energy of host {self.network.host_names[h]} "
            f"overflows ({watts!r} W for {now - last!r} s after "
            f"{float(self.energy[h])!r} J): joules beyond the floats cannot be written")

    def _power(self, h: int) -> float:
        """Watts drawn by host h since its last update (its saved pstate, its current load)."""
        p = int(self.saved_pstate[h])
        speed = self.speeds[h][p]
        if speed <= 0:
            load = 1.0
        else:
            load = self.engine.cpu_load(h) / speed
            load /= self.cores[h]
            if load > 1:
                load = 1.0
        idle, eps, full = self.watts[h][p]
        return eps + load * (full - eps) if load > 0 else idle

    def consumed_now(self, h: int) -> float:
        """Joules of host h up to now, without updating it: what user code may read (an
        update is an update point of SimGrid's plugin, and would change later joules)."""
        now = self.engine.now
        last = float(self.last[h])
        if last < now:
            return float(self.energy[h]) + self._power(h) * (now - last)
        return float(self.energy[h])

    def action_ended(self, h: int) -> None:
        """An action using h's CPU changed state (ended, was cancelled): SimGrid updates only
        if time passed since the last update. This differs from `update` only before a host's
        first update, at t = 0, for a host whose XML pstate is not 0."""
        if self.last[h] < self.engine.now:
            self.update(h)

    def consumed(self, h: int) -> float:
        """`sg_host_get_consumed_energy`: updates only if time passed since the last update
        (so a read at the date of the last update does not save the current pstate)."""
        if self.last[h] < self.engine.now:
            self.update(h)
        return float(self.energy[h])

    def total(self, hosts: Iterable[int]) -> LD:
        """Sum of the consumed joules of `hosts` (each read as `consumed` reads it), in long
        double as Batsim adds them.

        Batsim reads every machine's joules at each energy trace row, twice per job: many
        hosts are then updated at once (`_update_many`, numpy, the same operations host by
        host) and added up by one sequential long double accumulation."""
        known, index = self._index
        if hosts is not known:  # (a trace row passes the same tuple of all its hosts)
            hosts = hosts if type(hosts) in (list, tuple) else list(hosts)
            if len(hosts) < _MANY:
                total = LD(0)
                for h in hosts:
                    total += LD(self.consumed(h))
                return total
            index = np.array(hosts, dtype=np.int64)
            if type(hosts) is tuple:
                self._index = (hosts, index)
        stale = index[self.last[index] < self.engine.now]
        if len(stale):
            self._update_many(stale, self.engine.now)
        return np.add.accumulate(self.energy[index].astype(LD))[-1]

    def _update_many(self, hosts: np.ndarray, now: float) -> None:
        """`update` of every host of `hosts` (each last updated before `now`), vectorised:
        `_power` and the charge of its interval in the same double operations, elementwise."""
        if self._tables is None:
            width = max(len(w) for w in self.watts)
            watts = np.zeros((len(self.watts), width, 3))
            speeds = np.ones((len(self.watts), width))
            for h, (w, v) in enumerate(zip(self.watts, self.speeds, strict=True)):
                watts[h, :len(w)] = w
                speeds[h, :len(v)] = v
            self._tables = (watts, speeds, np.array(self.cores, dtype=np.float64),
                            bool((speeds > 0).all()))
        watts, speeds, cores, positive = self._tables
        pstate = self.saved_pstate[hosts]
        loads = self.engine.cpu_loads()
        if not loads and positive:  # no task computes: every load is 0, the power idle
            power = watts[hosts, pstate, 0]
        else:
            speed = speeds[hosts, pstate]
            raw = np.array([loads.get(h, 0.0) for h in hosts.tolist()])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                load = raw / speed / cores[hosts]
                load = np.where(speed <= 0, 1.0, load)
                load = np.where(load > 1, 1.0, load)
                w = watts[hosts, pstate]
                idle, eps, full = w[:, 0], w[:, 1], w[:, 2]
                power = np.where(load > 0, eps + load * (full - eps), idle)
        with np.errstate(over="ignore", invalid="ignore"):
            joules = self.energy[hosts] + power * (now - self.last[hosts])
        if not joules.max() < math.inf:  # (a nan too)
            k = int(np.flatnonzero(~(joules < math.inf))[0])
            h = int(hosts[k])
            raise self._overflow(h, now, float(power[k]), float(self.last[h]))
        self.energy[hosts] = joules
        self.last[hosts] = now
        current = self.network.pstate
        known, array = self._pstates
        if current != known:
            array = np.array(current, dtype=np.int64)
            self._pstates = (list(current), array)
        self.saved_pstate[hosts] = array[hosts]

    def wattmin(self, hosts: Iterable[int]) -> LD:
        """Sum of the Epsilon watts of `hosts` at their current pstates (long double); the
        last sum is reused while the pstates stay the same (a trace row asks at every job
        start and end)."""
        pstate = self.network.pstate
        known, pstates, value = self._wattmin
        if hosts is known and pstate == pstates:
            return value
        hosts = hosts if type(hosts) in (list, tuple) else list(hosts)
        values = [self.watts[h][pstate[h]][1] for h in hosts]
        value = np.add.accumulate(np.array(values).astype(LD))[-1] if values else LD(0)
        if type(hosts) is tuple:  # (immutable: the same object holds the same hosts)
            self._wattmin = (hosts, list(pstate), value)
        return value
