"""Machine states over time: who is idle or computing, the time spent in each state, and the
rows of `machine_states.csv`.

Batsim's quirks are kept on purpose (§7.2-7.3): the counters start with every compute machine
idle (storage machines are not counted but do move between columns); a job start sets each of
its machines to computing even when it already was; time spent in a state is only accumulated
when a machine changes state, so the last interval is never counted. Batsim accumulates those
times in long double; we keep every interval's two ends and add them exactly at the end
(`math.fsum`), which gives the same printed digits.
"""

from __future__ import annotations

import math

from batsim_py.output import machine_states_csv

SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")


class MachineStates:
    __slots__ = ("state", "last_change", "nb_jobs", "counts", "_ends", "_starts", "rows",
                 "tracing")

    def __init__(self, nb_machines: int, nb_compute: int, tracing: bool = True) -> None:
        self.state = [IDLE] * nb_machines
        self.last_change = [0.0] * nb_machines
        self.nb_jobs = [0] * nb_machines
        self.counts = [0] * 6
        self.counts[IDLE] = nb_compute
        self._ends: list[list[float]] = [[] for _ in NAMES]
        self._starts: list[list[float]] = [[] for _ in NAMES]
        self.rows: list[str] = []
        self.tracing = tracing

    def set(self, machine: int, new: int, now: float) -> None:
        old = self.state[machine]
        self._ends[old].append(now)
        self._starts[old].append(self.last_change[machine])
        self.last_change[machine] = now
        self.state[machine] = new
        self.counts[old] -= 1
        self.counts[new] += 1

    def job_starts(self, alloc: tuple[int, ...], now: float) -> None:
        lo = alloc[0]
        hi = alloc[-1] + 1
        n = len(alloc)
        state = self.state
        if hi - lo == n and state[lo:hi].count(IDLE) == n:
            # A contiguous block of idle machines (the usual case): update it as slices.
            self._ends[IDLE].extend([now] * n)
            self._starts[IDLE].extend(self.last_change[lo:hi])
            self.last_change[lo:hi] = [now] * n
            state[lo:hi] = [COMPUTING] * n
            self.nb_jobs[lo:hi] = [1] * n
            self.counts[IDLE] -= n
            self.counts[COMPUTING] += n
        else:
            nb_jobs = self.nb_jobs
            for m in alloc:
                nb_jobs[m] += 1
                self.set(m, COMPUTING, now)  # even when already computing, as Batsim does
        self.write_row(now)

    def job_ends(self, alloc: tuple[int, ...], now: float) -> None:
        lo = alloc[0]
        hi = alloc[-1] + 1
        n = len(alloc)
        nb_jobs = self.nb_jobs
        contiguous = hi - lo == n
        if contiguous and nb_jobs[lo:hi].count(1) == n and self.state[lo:hi].count(COMPUTING) == n:
            self._ends[COMPUTING].extend([now] * n)
            self._starts[COMPUTING].extend(self.last_change[lo:hi])
            self.last_change[lo:hi] = [now] * n
            self.state[lo:hi] = [IDLE] * n
            nb_jobs[lo:hi] = [0] * n
            self.counts[COMPUTING] -= n
            self.counts[IDLE] += n
        else:
            state = self.state
            for m in alloc:
                nb_jobs[m] -= 1
                if nb_jobs[m] == 0 and state[m] != UNAVAILABLE:
                    self.set(m, IDLE, now)
        self.write_row(now)

    def write_row(self, now: float) -> None:
        if self.tracing:
            c = self.counts
            self.rows.append(
                machine_states_csv.format_row(
                    now, c[SLEEPING], c[SWITCHING_ON], c[SWITCHING_OFF], c[IDLE], c[COMPUTING]
                )
            )

    def time_in(self) -> dict[str, float]:
        """Seconds spent in each state, summed exactly over machines and closed intervals."""
        return {
            name: math.fsum(self._ends[i] + [-t for t in self._starts[i]])
            for i, name in enumerate(NAMES)
        }
