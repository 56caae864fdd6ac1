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
`now` adds n * now to old's sum and takes it from new's, whatever n. The exact sum rounded once
to a double is what Batsim's long double sums give once rounded to the double printed, but when
the exact sum lies within their rounding error (about 1e-19 relative) of the middle between two
doubles.

Two ways of keeping the books, one after the other:

- The log (from the start, and for as long as the run is plain: every job starts on idle
  machines and ends on machines that run it alone, no switch, no unavailability): a job start
  or end only flips its machines in `state` (one C slice assignment for a contiguous
  allocation) and appends (date, allocation) to a log, the date's sign bit marking an end. The
  counts, the time sums, the last-change dates and the file's rows are computed from the log
  when asked, vectorized: the counts after each change are a cumulative sum of the machines
  moved; the sums are exact integers, computed by chunks with int64 arrays (each date's
  53-bit mantissa cut in three pieces, the products summed per binary exponent), divided once
  at the end like the live books' sums; the last-change dates come from the last entries (a
  backwards scan that stops once every machine is seen). This is what a run of a million
  jobs pays per job: two appends and a slice assignment.
- The live books (once anything else happens: a `set`, compute sharing, a reader of
  `last_change`): the log is turned into the live per-machine arrays, counts, rows and exact
  integer sums (dates in units of 2**-scale seconds, the scale growing when a finer date comes;
  every double is such an integer for some scale, divided once at the end: int / int rounds
  correctly), then every change updates them as it comes (a contiguous block of at least BLOCK
  machines by slice assignments, smaller or scattered allocations machine by machine).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from batsim_py.output import machine_states_csv
from batsim_py.output.fixed import native_text

# The first five in the order of machine_states.csv's columns (write_row relies on it).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")
# Contiguous allocations of at least this many machines (all idle at a start, each running
# only this job at an end) change as one block, smaller ones machine by machine: the block's
# cost does not depend on its size, and is that of about 4 machines one by one.
BLOCK = 4
_STATE_BYTES = [bytes((s,)) for s in range(len(NAMES))]
_JOBS = (array("q", [0]), array("q", [1]))


class _Fill(dict):
    """One state's byte repeated n times, by n: made once for the lengths up to 4,096 (at
    most 8 MB), a lookup afterwards."""

    def __init__(self, state: int) -> None:
        super().__init__()
        self.byte = bytes((state,))

    def __missing__(self, n: int) -> bytes:
        fill = self.byte * n
        if n <= 4096:
            self[n] = fill
        return fill


def _fills(state: int, nb_machines: int) -> Sequence[bytes]:
    """A block's new states by its length: a list (the fastest lookup) on up to 1,024
    machines (at most 0.5 MB), else a _Fill."""
    if nb_machines <= 1024:
        return [bytes((state,)) * n for n in range(nb_machines + 1)]
    return _Fill(state)
_MAX_COUNT = 1 << 26  # machines moved at one date at most, for the vectorized exact sums
_PIECE = (1 << 18) - 1
_CHUNK = 1 << 16  # log entries read at a time at the end
_SCAN = 1024  # log entries of the last chunk scanned for the last-change dates (then x4)


class MachineStates:
    __slots__ = ("state", "nb_compute", "_nb_jobs", "_last_change", "nb_shared", "_counts",
                 "_sums", "_scale", "_date", "_units_of_date", "_one_date", "_row_times",
                 "_rows", "tracing", "_listener", "_log", "_log_dates", "_jobs_view", "_busy",
                 "_free", "job_starts", "job_ends", "_fast")

    # A job's start and end (alloc, now): the methods `_job_starts` and `_job_ends`, or while
    # the log is kept and the native writer is built, its C callables doing their common case
    # (a block of machines, all idle at a start, all computing at an end) and handing the
    # rest to the methods (output/_ctext.c's StateLog: the same bytes flipped, the same
    # appends; a microsecond less per job event).
    job_starts: Callable[[Sequence[int], float], None]
    job_ends: Callable[[Sequence[int], float], None]

    def __init__(self, nb_machines: int, nb_compute: int, tracing: bool = True) -> None:
        # Flat C arrays: indexed one machine at a time like lists, but a block of a thousand
        # machines is counted and reset by single C calls (bytearray.count, slice assignment).
        self.state = bytearray([IDLE]) * nb_machines
        self._busy, self._free = _fills(COMPUTING, nb_machines), _fills(IDLE, nb_machines)
        self.nb_compute = nb_compute
        # The log: allocations (() for a row alone), and their dates, negative for an end
        # (the sign bit: an end at 0 is -0.0). None once the live books are kept.
        self._log: list[Sequence[int]] | None = []
        self._log_dates = array("d")
        self._jobs_view: _JobsOfPlainRun | None = None
        # The live books (filled from the log when it is left):
        self._nb_jobs = array("q")
        self._last_change = array("d")
        self.nb_shared = 0  # machines running more than one job (compute sharing)
        # Machines per state (SLEEPING ... UNAVAILABLE), a C array so that a row of the file is
        # copied by one C call; 16-bit when it holds every count (half a million-job run's
        # rows' memory), signed (with storage machines a count can go below zero).
        self._counts = array("h" if nb_machines < 1 << 15 else "q", [0]) * 6
        self._counts[IDLE] = nb_compute
        # Per state: dates of leaving minus dates of entering, in units of 2**-_scale s.
        self._sums = [0] * len(NAMES)
        self._scale = 64
        self._date = 0.0  # the last date converted, and its units (most changes share one)
        self._units_of_date = 0
        self._one_date = array("d", [0.0])  # (a block's last-change dates, by repetition)
        # machine_states.csv rows, kept as numbers and formatted when the file is written:
        # the dates, and the six counts after each (the file shows the first five).
        self._row_times = array("d")
        self._rows = array(self._counts.typecode)
        self.tracing = tracing
        self._listener: Callable[[float], None] | None = None  # user code's machine signal
        self.job_starts = self._job_starts
        self.job_ends = self._job_ends
        self._fast: tuple[Any, Any] | None = None
        native = native_text()
        if native is not None:
            self._fast = (
                native.StateLog(self.state, IDLE, COMPUTING, self._log_dates.append, self._log,
                                False, self._job_starts),
                native.StateLog(self.state, COMPUTING, IDLE, self._log_dates.append, self._log,
                                True, self._job_ends))
            self.job_starts, self.job_ends = self._fast

    @property
    def listener(self) -> Callable[[float], None] | None:
        """Called (now) after every change (user code's machine signal): every change then
        goes through the methods."""
        return self._listener

    @listener.setter
    def listener(self, listener: Callable[[float], None] | None) -> None:
        self._listener = listener
        if listener is not None:
            self._slow_path()

    def _slow_path(self) -> None:
        """Every job start and end through the methods from now on (the native callables
        off, where a caller kept them)."""
        if self._fast is not None:
            for fast in self._fast:
                fast.active = False
            self._fast = None
        self.job_starts = self._job_starts
        self.job_ends = self._job_ends

    # ------------------------------------------------------------------ readers
    @property
    def nb_jobs(self) -> Any:
        """Jobs running on each machine (indexable by machine id). While the run is plain, a
        machine runs one job exactly when it computes: a view made from `state`."""
        if self._log is not None:
            if self._jobs_view is None:
                self._jobs_view = _JobsOfPlainRun(self.state)
            return self._jobs_view
        return self._nb_jobs

    @property
    def last_change(self) -> array:
        """Each machine's last change date (the live books are kept from then on)."""
        self._leave_log()
        return self._last_change

    @property
    def counts(self) -> array:
        """Machines per state, in the order of NAMES (a snapshot while the run is plain)."""
        if self._log is not None:
            counts = array(self._counts.typecode, [0]) * 6
            busy = self.state.count(COMPUTING)
            counts[IDLE] = self.nb_compute - busy
            counts[COMPUTING] = busy
            return counts
        return self._counts

    def nb_unavailable(self) -> int:
        """Machines unavailable now (none while the run is plain)."""
        return 0 if self._log is not None else self._counts[UNAVAILABLE]

    # ------------------------------------------------------------------ changes
    def set(self, machine: int, new: int, now: float) -> None:
        self._leave_log()
        old = self.state[machine]
        units = self._units(now)
        sums = self._sums
        sums[old] += units
        sums[new] -= units
        self._last_change[machine] = now
        self.state[machine] = new
        self._counts[old] -= 1
        self._counts[new] += 1

    def _job_starts(self, alloc: Sequence[int], now: float) -> None:
        log = self._log
        if log is not None:
            if type(alloc) is range and alloc.step == 1:
                lo, hi = alloc.start, alloc.stop
                state = self.state
                if 0 <= lo < hi and state.count(IDLE, lo, hi) == hi - lo:
                    state[lo:hi] = self._busy[hi - lo]
                    self._log_dates.append(now)
                    log.append(alloc)
                    if self._listener is not None:
                        self._listener(now)
                    return
            elif self._flip(alloc, IDLE, COMPUTING):
                self._log_dates.append(now)
                log.append(alloc)
                if self._listener is not None:
                    self._listener(now)
                return
            self._leave_log()  # (not on idle machines only: compute sharing)
        self._live_starts(alloc, now)
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._rows += self._counts
        if self._listener is not None:
            self._listener(now)

    def _job_ends(self, alloc: Sequence[int], now: float) -> None:
        log = self._log
        if log is not None:
            if type(alloc) is range and alloc.step == 1:
                lo, hi = alloc.start, alloc.stop
                state = self.state
                if 0 <= lo < hi and state.count(COMPUTING, lo, hi) == hi - lo:
                    state[lo:hi] = self._free[hi - lo]
                    self._log_dates.append(-(now + 0.0))  # (+ 0.0: an int 0 becomes 0.0)
                    log.append(alloc)
                    if self._listener is not None:
                        self._listener(now)
                    return
            elif self._flip(alloc, COMPUTING, IDLE):
                self._log_dates.append(-(now + 0.0))
                log.append(alloc)
                if self._listener is not None:
                    self._listener(now)
                return
            self._leave_log()
        self._live_ends(alloc, now)
        if self.tracing:  # write_row, inlined
            self._row_times.append(now)
            self._rows += self._counts
        if self._listener is not None:
            self._listener(now)

    def write_row(self, now: float) -> None:
        if self.tracing:
            if self._log is not None:
                self._log_dates.append(now + 0.0)
                self._log.append(())
            else:
                self._row_times.append(now)
                self._rows += self._counts
        if self._listener is not None:
            self._listener(now)

    def _flip(self, alloc: Sequence[int], old: int, new: int) -> bool:
        """Set the machines of `alloc` from `old` to `new` if all are in `old` (each once);
        else change nothing and say so."""
        state = self.state
        nb = len(state)
        done = 0
        for m in alloc:
            if not 0 <= m < nb or state[m] != old:
                break
            state[m] = new
            done += 1
        else:
            return done > 0
        for m in alloc:  # undo
            if not done:
                break
            state[m] = old
            done -= 1
        return False

    # ------------------------------------------------------------------ the log
    def _log_chunks(self, size: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The log, `size` entries at a time: the dates (absolute) and, per entry, the
        machines that went computing (minus those that went idle). By chunks, so that a
        million-job run's end needs a few MB more, not a hundred."""
        log = self._log
        assert log is not None
        size = size or _CHUNK
        for lo in range(0, len(log), size):
            signed = np.frombuffer(self._log_dates[lo:lo + size], dtype=np.float64)  # (a copy)
            allocs = log[lo:lo + size]
            sizes = np.fromiter(map(len, allocs), dtype=np.int64, count=len(allocs))
            yield np.abs(signed), np.where(np.signbit(signed), -sizes, sizes)

    def _last_changes(self) -> np.ndarray:
        """Each machine's last change date from the log (0.0 for a machine never changed):
        the log is scanned backwards, by chunks (1,024 entries, then 4 times more each time up
        to 65,536), until every machine is seen; a machine never changed makes the scan read
        the whole log (about 0.1 s per million entries of ranges)."""
        log = self._log
        assert log is not None
        nb = len(self.state)
        last = np.zeros(nb)
        seen = np.zeros(nb, dtype=bool)
        end, size = len(log), _SCAN
        while end > 0 and not seen.all():
            start = max(0, end - size)
            los, his, entries = _intervals(log[start:end], start)
            if len(entries):
                latest = _latest_cover(los, his, entries, nb)
                new = (latest >= 0) & ~seen
                dates = np.frombuffer(self._log_dates[start:end], dtype=np.float64)
                last[new] = np.abs(dates[latest[new] - start])
                seen |= new
            end, size = start, min(size * 4, _CHUNK)
        return last

    def _leave_log(self) -> None:
        """Turn the log into the live books (once)."""
        log = self._log
        if log is None:
            return
        self._slow_path()
        chunks = list(self._log_chunks())
        dates = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0)
        moved = np.concatenate([c[1] for c in chunks]) if chunks else np.zeros(0, np.int64)
        del chunks
        last = self._last_changes()
        self._log = None
        self._jobs_view = None
        nb = len(self.state)
        states = np.frombuffer(self.state, dtype=np.uint8)
        self._nb_jobs = array("q")
        self._nb_jobs.frombytes((states == COMPUTING).astype(np.int64).tobytes())
        self._last_change = array("d")
        self._last_change.frombytes(last.tobytes())
        busy = self.state.count(COMPUTING)
        counts = self._counts
        counts[IDLE] = self.nb_compute - busy
        counts[COMPUTING] = busy
        if len(dates):
            firsts = _runs_of_equal(dates)
            sums = self._sums
            for date, k in zip(dates[firsts].tolist(), np.add.reduceat(moved, firsts).tolist(),
                               strict=True):
                if k:  # k machines went computing at `date`, on balance
                    units = k * self._units(date)
                    sums[IDLE] += units
                    sums[COMPUTING] -= units
            if self.tracing:
                self._row_times.frombytes(dates.tobytes())
                rows = np.zeros((len(dates), 6), dtype=np.dtype(counts.typecode))
                busy_after = np.cumsum(moved)
                rows[:, COMPUTING] = busy_after
                rows[:, IDLE] = self.nb_compute - busy_after
                self._rows.frombytes(rows.tobytes())
        self._log_dates = array("d")
        assert len(self._nb_jobs) == nb

    def _time_in_log(self) -> dict[str, float] | None:
        """time_in from the log: per state, the exact sum of (machines that left minus
        machines that entered) x date over the dates, plus the open intervals' starts, as
        one integer over a power of two (so int / int rounds it correctly once, inf beyond
        the doubles, as the live books do); None when a count is too large for the
        vectorized sum (then the live books do it)."""
        moves = _ExactSum()
        for dates, moved in self._log_chunks():
            # (a run of equal dates cut by a chunk's end is two terms: as exact)
            firsts = _runs_of_equal(dates)
            net = np.add.reduceat(moved, firsts)
            keep = net != 0
            if keep.any() and int(np.abs(net[keep]).max()) >= _MAX_COUNT:
                return None
            moves.add(dates[firsts][keep], net[keep])
        last = self._last_changes()
        states = np.frombuffer(self.state, dtype=np.uint8)
        out = {name: 0.0 for name in NAMES}
        gained, exponent = moves.total()  # (by idle: machines that went computing, x date)
        for name, state, sign in (("idle", IDLE, 1), ("computing", COMPUTING, -1)):
            opened = _ExactSum()
            starts = last[states == state]
            opened.add(starts, np.ones(len(starts), dtype=np.int64))
            out[name] = _ExactSum.ratio((sign * gained, exponent), opened.total())
        return out

    # ------------------------------------------------------------------ results
    def text_chunks(self, size: int) -> Iterator[str]:
        """The rows of machine_states.csv written so far (header excluded), `size` rows per
        piece of text, each formatted by one C-level `%` over the chunk's values. The five
        counts of a row are written once per distinct row (a plain run: one per number of
        busy machines) and reused: only the dates are formatted row by row."""
        if not self.tracing:
            return
        if self._log is not None:
            # (busy machines after each entry: 0 to all; a row's counts written once each)
            suffixes: list[str | None] = [None] * (len(self.state) + 1)
            busy_before = 0
            for dates, moved in self._log_chunks(size):
                busy = np.cumsum(moved) + busy_before
                busy_before = int(busy[-1])
                # (np.unique would import numpy.ma: 0.1-0.3 s)
                for b in np.flatnonzero(np.bincount(busy)).tolist():
                    if suffixes[b] is None:
                        suffixes[b] = machine_states_csv.COUNTS % (
                            0, 0, 0, self.nb_compute - b, b)
                yield _rows_text(dates, busy, suffixes)
            return
        dates = np.array(self._row_times, dtype=np.float64)
        if not len(dates):
            return
        rows = np.array(self._rows).reshape(-1, 6)[:, :5]  # (the file shows five counts)
        distinct, which = _distinct_rows(rows)
        del rows
        counts = machine_states_csv.COUNTS
        texts = [counts % tuple(r) for r in distinct.tolist()]
        for lo in range(0, len(dates), size):
            yield _rows_text(dates[lo:lo + size], which[lo:lo + size], texts)

    def time_in(self) -> dict[str, float]:
        """Seconds spent in each state over all machines (closed intervals only)."""
        if self._log is not None:
            out = self._time_in_log()
            if out is not None:
                return out
            self._leave_log()
        state = self.state
        while True:  # (again if a last date made the scale grow: the sums were shifted)
            scale = self._scale
            open_ = [0] * len(NAMES)  # the open intervals' starts, not counted
            for m, date in enumerate(self._last_change):
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

    # ------------------------------------------------------------------ the live books
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

    def _live_starts(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        state = self.state
        counts = self._counts
        sums = self._sums
        if n >= BLOCK and hi - lo == n and state.count(IDLE, lo, hi) == n:
            # One block of idle machines (the usual case): no machine visited.
            moved = n * self._units(now)
            sums[IDLE] += moved
            sums[COMPUTING] -= moved
            one = self._one_date
            one[0] = now
            self._last_change[lo:hi] = one * n
            state[lo:hi] = _STATE_BYTES[COMPUTING] * n
            self._nb_jobs[lo:hi] = _JOBS[1] * n
            counts[IDLE] -= n
            counts[COMPUTING] += n
        else:  # `set` machine by machine, inlined
            nb_jobs, last = self._nb_jobs, self._last_change
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

    def _live_ends(self, alloc: Sequence[int], now: float) -> None:
        n = len(alloc)
        lo, hi = alloc[0], alloc[-1] + 1
        nb_jobs = self._nb_jobs
        state = self.state
        counts = self._counts
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
            self._last_change[lo:hi] = one * n
            state[lo:hi] = _STATE_BYTES[IDLE] * n
            nb_jobs[lo:hi] = _JOBS[0] * n
            counts[COMPUTING] -= n
            counts[IDLE] += n
        else:  # `set` machine by machine, inlined
            last = self._last_change
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


class _JobsOfPlainRun:
    """Jobs per machine while the run is plain: 1 on a computing machine, else 0."""

    __slots__ = ("state",)

    def __init__(self, state: bytearray) -> None:
        self.state = state

    def __getitem__(self, machine: int) -> int:
        return 1 if self.state[machine] == COMPUTING else 0

    def __len__(self) -> int:
        return len(self.state)

    def __iter__(self) -> Iterator[int]:
        return (1 if s == COMPUTING else 0 for s in self.state)


def _runs_of_equal(dates: np.ndarray) -> np.ndarray:
    """The first index of each run of equal consecutive dates (dates is not empty)."""
    return np.concatenate(([0], np.flatnonzero(dates[1:] != dates[:-1]) + 1))


def _rows_text(dates: np.ndarray, which: np.ndarray, texts: Sequence[str | None]) -> str:
    """Rows of machine_states.csv: each date, then the text of its counts (texts[which]); by
    the native writer (output/_ctext.c, `state_rows`: `%g` of a date is most of a row's cost)
    when it is built, else by one C-level `%`. Same text either way."""
    native = native_text()
    if native is not None:
        return native.state_rows(np.ascontiguousarray(dates, dtype=np.float64),
                                 np.ascontiguousarray(which, dtype=np.int64), list(texts))
    n = len(dates)
    flat: list = [None] * (2 * n)
    flat[0::2] = dates.tolist()
    flat[1::2] = itemgetter(*which.tolist())(texts) if n > 1 else [texts[int(which[0])]]
    return ((machine_states_csv.DATE + "%s") * n) % tuple(flat)


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D array, and for each row the index of its distinct row
    (np.unique(axis=0) does the same, ten times slower)."""
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    new = np.empty(len(rows), dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    which = np.empty(len(rows), dtype=np.int64)
    which[order] = np.cumsum(new) - 1
    return ordered[new], which


class _ExactSum:
    """An exact sum of count x date terms, vectorized: each date is an integer mantissa M
    of 53 bits times 2**E (np.frexp), cut in three pieces of 18 bits; a count below 2**26
    times a piece is below 2**44, so the sums of up to 2**16 of them per exponent fit in
    int64 exactly. The pieces' sums become Python integers per distinct exponent (a few per
    chunk of dates)."""

    __slots__ = ("terms",)

    def __init__(self) -> None:
        self.terms: list[tuple[int, int]] = []  # (integer, exponent of 2)

    def add(self, dates: np.ndarray, counts: np.ndarray) -> None:
        """Add sum(counts * dates) (dates finite, |counts| < 2**26)."""
        for lo in range(0, len(dates), 1 << 16):
            mantissa, exponent = np.frexp(dates[lo:lo + (1 << 16)])
            whole = (mantissa * float(1 << 53)).astype(np.int64)  # (exact)
            count = counts[lo:lo + (1 << 16)].astype(np.int64)
            order = np.argsort(exponent, kind="stable")
            exponent = exponent[order]
            whole, count = whole[order], count[order]
            firsts = _runs_of_equal(exponent) if len(exponent) else np.zeros(0, np.int64)
            sums = [np.add.reduceat(count * ((whole >> shift) & _PIECE), firsts).tolist()
                    if len(firsts) else [] for shift in (0, 18, 36)]
            for e, s0, s1, s2 in zip(exponent[firsts].tolist(), *sums, strict=True):
                self.terms.append((s0 + (s1 << 18) + (s2 << 36), e - 53))

    def total(self) -> tuple[int, int]:
        """The sum as (integer, exponent of 2)."""
        if not self.terms:
            return 0, 0
        low = min(e for _, e in self.terms)
        return sum(v << (e - low) for v, e in self.terms), low

    @staticmethod
    def ratio(a: tuple[int, int], b: tuple[int, int]) -> float:
        """a + b as the nearest double (inf beyond the doubles)."""
        low = min(a[1], b[1])
        total = (a[0] << (a[1] - low)) + (b[0] << (b[1] - low))
        try:
            return total * 2.0 ** low if low >= 0 else total / (1 << -low) + 0.0
        except OverflowError:
            return float("inf")


def _intervals(allocs: list[Sequence[int]], first: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The machines of log entries `first`, `first` + 1, ... as intervals [lo, hi) and the
    entry of each: read by C-level maps when every entry is a range of step 1 (the usual
    case), else entry by entry."""
    n = len(allocs)
    if set(map(type, allocs)) == {range}:
        steps = np.fromiter(map(_STEP, allocs), dtype=np.int64, count=n)
        if (steps == 1).all():
            los = np.fromiter(map(_START, allocs), dtype=np.int64, count=n)
            his = np.fromiter(map(_STOP, allocs), dtype=np.int64, count=n)
            keep = his > los
            return los[keep], his[keep], np.arange(first, first + n, dtype=np.int64)[keep]
    lo_list: list[int] = []
    hi_list: list[int] = []
    entries: list[int] = []
    for e, alloc in enumerate(allocs, first):
        if type(alloc) is range and alloc.step == 1:
            if len(alloc):
                lo_list.append(alloc.start)
                hi_list.append(alloc.stop)
                entries.append(e)
        else:
            for m in alloc:
                lo_list.append(m)
                hi_list.append(m + 1)
                entries.append(e)
    return (np.array(lo_list, dtype=np.int64), np.array(hi_list, dtype=np.int64),
            np.array(entries, dtype=np.int64))


_START, _STOP, _STEP = attrgetter("start"), attrgetter("stop"), attrgetter("step")


def _latest_cover(lo: np.ndarray, hi: np.ndarray, entry: np.ndarray, nb: int) -> np.ndarray:
    """For each of `nb` points, the largest `entry` among the intervals [lo, hi) that cover
    it (-1: none). Each interval is written as two overlapping blocks of a power-of-two length
    (a sparse table), then every level is pushed down to the one below it: O(intervals +
    points x log points), vectorized."""
    level = np.frexp(hi - lo)[1].astype(np.int64) - 1  # floor(log2(length))
    table = np.full((int(level.max()) + 1, nb), -1, dtype=np.int64)
    np.maximum.at(table, (level, lo), entry)
    np.maximum.at(table, (level, hi - np.left_shift(1, level)), entry)
    for j in range(len(table) - 1, 0, -1):
        half = 1 << (j - 1)
        below, row = table[j - 1], table[j]
        np.maximum(below, row, out=below)
        np.maximum(below[half:], row[:nb - half], out=below[half:])
    return table[0]
