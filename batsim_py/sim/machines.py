"""Machine states over time: who is idle or computing, the time spent in each state, and the
rows of `machine_states.csv`.

Batsim's quirks are kept on purpose (§7.2-7.3): the counters start with every compute machine
idle (storage machines are not counted but do move between columns); a job start sets each of
its machines to computing even when it already was; time spent in a state is only accumulated
when a machine changes state, so the last interval is never counted.

Batsim adds each machine's closed intervals in long double. We add them exactly, without
visiting the machines: the time spent in state s over all closed intervals is

    (sum of the dates at which a machine left s) - (sum of the dates at which one entered s)
    + (sum of the last-change dates of the machines that are in s at the end)

(the last term removes the open intervals). So a change of n machines from `old` to `new` at
`now` adds n * now to old's sum and takes it from new's, whatever n: a job on a thousand
machines costs what a job on one does (but for a few C-level slice assignments of the
per-machine arrays). The sums are Python integers counting units of 2**-scale seconds, the
scale growing when a finer date comes (every double is such an integer for some scale), divided
once at the end (int / int rounds correctly). The exact sum rounded once to a double is what
Batsim's long double sums give once rounded to the double printed, but when the exact sum lies
within their rounding error (about 1e-19 relative) of the middle between two doubles.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence

from batsim_py.output import machine_states_csv

# The first five in the order of machine_states.csv's columns (write_row relies on it).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")
# Contiguous allocations of at least this many machines (all idle at a start, each running
# only this job at an end) change as one block, smaller ones machine by machine: the block's
# cost does not depend on its size, and is that of about 4 machines one by one.
BLOCK = 4
_STATE_BYTES = [bytes((s,)) for s in range(len(NAMES))]
_JOBS = (array("q", [0]), array("q", [1]))


class MachineStates:
    __slots__ = ("state", "last_change", "nb_jobs", "nb_shared", "counts", "_sums", "_scale",
                 "_date", "_units_of_date", "_one_date", "_row_times", "_rows", "tracing",
                 "listener")

    def __init__(self, nb_machines: int, nb_compute: int, tracing: bool = True) -> None:
        # Flat C arrays: indexed one machine at a time like lists, but a block of a thousand
        # machines is counted and reset by single C calls (bytearray.count, slice assignment).
        self.state = bytearray([IDLE]) * nb_machines
        self.last_change = array("d", [0.0]) * nb_machines
        self.nb_jobs = array("q", [0]) * nb_machines
        self.nb_shared = 0  # machines running more than one job (compute sharing)
        # Machines per state (SLEEPING ... UNAVAILABLE), a C array so that a row of the file is
        # copied by one C call; 16-bit when it holds every count (half a million-job run's
        # rows' memory), signed (with storage machines a count can go below zero).
        self.counts = array("h" if nb_machines < 1 << 15 else "q", [0]) * 6
        self.counts[IDLE] = nb_compute
        # Per state: dates of leaving minus dates of entering, in units of 2**-_scale s.
        self._sums = [0] * len(NAMES)
        self._scale = 64
        self._date = 0.0  # the last date converted, and its units (most changes share one)
        self._units_of_date = 0
        self._one_date = array("d", [0.0])  # (a block's last-change dates, by repetition)
        # machine_states.csv rows, kept as numbers and formatted when the file is written:
        # the dates, and the six counts after each (the file shows the first five).
        self._row_times = array("d")
        self._rows = array(self.counts.typecode)
        self.tracing = tracing
        self.listener: Callable[[float], None] | None = None  # user code's machine signal

    def _units(self, date: float) -> int:
        """`date` as an integer number of 2**-_scale seconds (exact: the scale grows when a
        date needs more binary digits after the point)."""
        if date == self._date:
            return self._units_of_date
        num, den = date.as_integer_ratio()  # (a date is finite: the engine never reaches inf)
        shift = self._scale - den.bit_length() + 1  # den is a power of two
        if shift < 0:
            grow = 32 - shift  # (room for the next finer dates)
            sums = self._sums  # (in place: callers hold the list)
            for i, total in enumerate(sums):
                sums[i] = total << grow
            self._scale += grow
            shift += grow
        self._date = date
        self._units_of_date = units = num << shift
        return units

    def set(self, machine: int, new: int, now: float) -> None:
        old = self.state[machine]
        units = self._units(now)
        sums = self._sums
        sums[old] += units
        sums[new] -= units
        self.last_change[machine] = now
        self.state[machine] = new
        self.counts[old] -= 1
        self.counts[new] += 1

    def job_starts(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        state = self.state
        counts = self.counts
        sums = self._sums
        if n >= BLOCK and hi - lo == n and state.count(IDLE, lo, hi) == n:
            # One block of idle machines (the usual case): no machine visited.
            moved = n * self._units(now)
            sums[IDLE] += moved
            sums[COMPUTING] -= moved
            one = self._one_date
            one[0] = now
            self.last_change[lo:hi] = one * n
            state[lo:hi] = _STATE_BYTES[COMPUTING] * n
            self.nb_jobs[lo:hi] = _JOBS[1] * n
            counts[IDLE] -= n
            counts[COMPUTING] += n
        else:  # `set` machine by machine, inlined
            nb_jobs, last = self.nb_jobs, self.last_change
            units = self._units(now)
            for m in alloc:
                jobs = nb_jobs[m] + 1
                nb_jobs[m] = jobs
                if jobs == 2:
                    self.nb_shared += 1
                old = state[m]  # even when already computing, as Batsim does
                sums[old] += units
                last[m] = now
                state[m] = COMPUTING
                counts[old] -= 1
            sums[COMPUTING] -= n * units
            counts[COMPUTING] += n
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._rows += counts
        if self.listener is not None:
            self.listener(now)

    def job_ends(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        nb_jobs = self.nb_jobs
        state = self.state
        counts = self.counts
        sums = self._sums
        # (With no machine shared, each machine of the job runs it alone: one job each.)
        if (n >= BLOCK and hi - lo == n
                and (self.nb_shared == 0 or list(nb_jobs[lo:hi]).count(1) == n)
                and state.count(COMPUTING, lo, hi) == n):
            moved = n * self._units(now)
            sums[COMPUTING] += moved
            sums[IDLE] -= moved
            one = self._one_date
            one[0] = now
            self.last_change[lo:hi] = one * n
            state[lo:hi] = _STATE_BYTES[IDLE] * n
            nb_jobs[lo:hi] = _JOBS[0] * n
            counts[COMPUTING] -= n
            counts[IDLE] += n
        else:  # `set` machine by machine, inlined
            last = self.last_change
            units = self._units(now)
            for m in alloc:
                jobs = nb_jobs[m]
                if jobs == 2:
                    self.nb_shared -= 1
                nb_jobs[m] = jobs - 1
                if jobs == 1 and state[m] != UNAVAILABLE:
                    old = state[m]
                    sums[old] += units
                    sums[IDLE] -= units
                    last[m] = now
                    state[m] = IDLE
                    counts[old] -= 1
                    counts[IDLE] += 1
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._rows += counts
        if self.listener is not None:
            self.listener(now)

    def write_row(self, now: float) -> None:
        if self.tracing:
            self._row_times.append(now)
            self._rows += self.counts
        if self.listener is not None:
            self.listener(now)

    def text_chunks(self, size: int) -> Iterator[str]:
        """The rows of machine_states.csv written so far (header excluded), `size` rows per
        piece of text, each formatted by one C-level `%` over the chunk's values."""
        times, rows = self._row_times, self._rows
        for lo in range(0, len(times), size):
            n = min(size, len(times) - lo)
            flat: list = [None] * (6 * n)
            flat[0::6] = times[lo:lo + n].tolist()
            column = rows[6 * lo:6 * (lo + n)].tolist()
            for k in range(5):  # sleeping, switching on, switching off, idle, computing
                flat[k + 1::6] = column[k::6]
            yield (machine_states_csv.ROW * n) % tuple(flat)

    def time_in(self) -> dict[str, float]:
        """Seconds spent in each state over all machines (closed intervals only)."""
        state = self.state
        while True:  # (again if a last date made the scale grow: the sums were shifted)
            scale = self._scale
            open_ = [0] * len(NAMES)  # the open intervals' starts, not counted
            for m, date in enumerate(self.last_change):
                open_[state[m]] += self._units(date)
            if self._scale == scale:
                break
        out = {}
        unit = 1 << scale
        for name, total, start in zip(NAMES, self._sums, open_, strict=True):
            try:
                out[name] = (total + start) / unit  # (int / int: correctly rounded)
            except OverflowError:  # a total beyond the doubles is written inf
                out[name] = float("inf")
        return out
