"""Machine states over time: who is idle or computing, the time spent in each state, and the
rows of `machine_states.csv`.

Batsim's quirks are kept on purpose (§7.2-7.3): the counters start with every compute machine
idle (storage machines are not counted but do move between columns); a job start sets each of
its machines to computing even when it already was; time spent in a state is only accumulated
when a machine changes state, so the last interval is never counted. Batsim accumulates those
times per machine in long double, then adds the machines up. We keep that precision two ways:
small allocations record each interval's two ends in Python lists, added exactly at the end
(`math.fsum`); large contiguous allocations update numpy long double sums a whole block at a
time, so jobs on a thousand machines stay cheap.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import chain

import numpy as np

from batsim_py.output import machine_states_csv

# The first five in the order of machine_states.csv's columns (write_row relies on it).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")
LD = np.longdouble
SMALL = 8  # allocations up to this size are updated machine by machine
_STATE_BYTES = [bytes((s,)) for s in range(len(NAMES))]
_JOBS = (array("q", [0]), array("q", [1]))
_subtract = np.subtract


class MachineStates:
    __slots__ = ("state", "last_change", "_last_change", "nb_jobs", "nb_shared", "counts",
                 "_time", "_rows", "_ends", "_starts", "_row_times", "_row_counts", "tracing",
                 "listener")

    def __init__(self, nb_machines: int, nb_compute: int, tracing: bool = True) -> None:
        # Flat C arrays: indexed one machine at a time like lists, but a block of a thousand
        # machines is counted, read and reset by single C calls (bytearray.count, a numpy view
        # of `last_change`, slice assignment) instead of Python loops over list slices.
        self.state = bytearray([IDLE]) * nb_machines
        self.last_change = array("d", [0.0]) * nb_machines
        self._last_change = np.frombuffer(self.last_change)  # a view (the array never grows)
        self.nb_jobs = array("q", [0]) * nb_machines
        self.nb_shared = 0  # machines running more than one job (compute sharing)
        self.counts = [0] * 6
        self.counts[IDLE] = nb_compute
        self._time = np.zeros((len(NAMES), nb_machines), dtype=LD)  # block path sums
        self._rows = list(self._time)  # its rows (views), one per state
        # Machine-by-machine path: the two ends of each interval, in flat double arrays (a
        # million-job run records millions of them).
        self._ends = [array("d") for _ in NAMES]
        self._starts = [array("d") for _ in NAMES]
        # machine_states.csv rows, kept as numbers and formatted when the file is written.
        self._row_times = array("d")
        self._row_counts = array("i")
        self.tracing = tracing
        self.listener: Callable[[float], None] | None = None  # user code's machine signal

    def set(self, machine: int, new: int, now: float) -> None:
        old = self.state[machine]
        self._ends[old].append(now)
        self._starts[old].append(self.last_change[machine])
        self.last_change[machine] = now
        self.state[machine] = new
        self.counts[old] -= 1
        self.counts[new] += 1

    def job_starts(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        state = self.state
        if n > SMALL and hi - lo == n and state.count(IDLE, lo, hi) == n:
            self._block(lo, hi, IDLE, COMPUTING, now, 1)
        else:  # `set` machine by machine, inlined (this runs once per job)
            nb_jobs, last, ends, starts = self.nb_jobs, self.last_change, self._ends, self._starts
            counts = self.counts
            for m in alloc:
                jobs = nb_jobs[m] + 1
                nb_jobs[m] = jobs
                if jobs == 2:
                    self.nb_shared += 1
                old = state[m]  # even when already computing, as Batsim does
                ends[old].append(now)
                starts[old].append(last[m])
                last[m] = now
                state[m] = COMPUTING
                counts[old] -= 1
                counts[COMPUTING] += 1
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._row_counts.extend(self.counts[:5])
        if self.listener is not None:
            self.listener(now)

    def job_ends(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        nb_jobs = self.nb_jobs
        state = self.state
        # (With no machine shared, each machine of the job runs it alone: one job each.)
        if (n > SMALL and hi - lo == n
                and (self.nb_shared == 0 or list(nb_jobs[lo:hi]).count(1) == n)
                and state.count(COMPUTING, lo, hi) == n):
            self._block(lo, hi, COMPUTING, IDLE, now, 0)
        else:  # `set` machine by machine, inlined
            last, ends, starts, counts = self.last_change, self._ends, self._starts, self.counts
            for m in alloc:
                jobs = nb_jobs[m]
                if jobs == 2:
                    self.nb_shared -= 1
                nb_jobs[m] = jobs - 1
                if jobs == 1 and state[m] != UNAVAILABLE:
                    old = state[m]
                    ends[old].append(now)
                    starts[old].append(last[m])
                    last[m] = now
                    state[m] = IDLE
                    counts[old] -= 1
                    counts[IDLE] += 1
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._row_counts.extend(self.counts[:5])
        if self.listener is not None:
            self.listener(now)

    def _block(self, lo: int, hi: int, old: int, new: int, now: float, jobs: int) -> None:
        """Machines lo..hi-1, all in state `old`, go to `new` at once (long double sums)."""
        n = hi - lo
        time = self._rows[old][lo:hi]
        time += _subtract(now, self._last_change[lo:hi], dtype=LD)  # in long double
        self._last_change[lo:hi] = now
        self.state[lo:hi] = _STATE_BYTES[new] * n
        self.nb_jobs[lo:hi] = _JOBS[jobs] * n
        self.counts[old] -= n
        self.counts[new] += n

    def write_row(self, now: float) -> None:
        if self.tracing:
            self._row_times.append(now)
            # counts[0:5]: sleeping, switching on, switching off, idle, computing (file order)
            self._row_counts.extend(self.counts[:5])
        if self.listener is not None:
            self.listener(now)

    def text_chunks(self, size: int) -> Iterator[str]:
        """The rows of machine_states.csv written so far (header excluded), `size` rows per
        piece of text, each formatted by one C-level `%` over the chunk's values."""
        times, counts = self._row_times, self._row_counts
        for lo in range(0, len(times), size):
            n = min(size, len(times) - lo)
            flat: list = [None] * (6 * n)
            flat[0::6] = times[lo:lo + n].tolist()
            column = counts[5 * lo:5 * (lo + n)].tolist()
            for k in range(5):
                flat[k + 1::6] = column[k::5]
            yield (machine_states_csv.ROW * n) % tuple(flat)

    def time_in(self) -> dict[str, float]:
        """Seconds spent in each state over all machines (closed intervals only)."""
        out = {}
        for i, name in enumerate(NAMES):
            row = self._time[i]
            blocks = np.add.accumulate(row)[-1] if len(row) else LD(0)
            try:
                singles = LD(math.fsum(chain(self._ends[i], (-t for t in self._starts[i]))))
            except OverflowError:  # partial sums beyond the doubles (dates near 1e308)
                singles = LD(0)
                for t in chain(self._ends[i], (-t for t in self._starts[i])):
                    singles += LD(t)
            with np.errstate(over="ignore"):  # a total beyond the doubles is written inf
                out[name] = float(blocks + singles)
        return out
