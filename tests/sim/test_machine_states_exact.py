"""MachineStates adds the time machines spend in each state without visiting them (sums of
dates per state, sim/machines.py): checked against the rule itself, written the plain way
(each machine's closed intervals, in exact fractions), on random job starts and ends (blocks,
small and scattered allocations, compute sharing), switches and unavailability, with dates
whose binary digits get finer as the run goes (the integer sums' scale must grow mid-run)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from batsim_py.sim import machines
from batsim_py.sim.machines import (
    COMPUTING,
    IDLE,
    NAMES,
    SLEEPING,
    SWITCHING_OFF,
    SWITCHING_ON,
    UNAVAILABLE,
    MachineStates,
)


class PlainStates:
    """Batsim's accounting machine by machine (machines.cpp): a change closes the interval of
    the state left, which is added to that state's time."""

    def __init__(self, nb: int) -> None:
        self.state = [IDLE] * nb
        self.last = [0.0] * nb
        self.jobs = [0] * nb
        self.time = [Fraction(0)] * len(NAMES)

    def set(self, m: int, new: int, now: float) -> None:
        self.time[self.state[m]] += Fraction(now) - Fraction(self.last[m])
        self.last[m] = now
        self.state[m] = new

    def job_starts(self, alloc: list[int], now: float) -> None:
        for m in alloc:
            self.jobs[m] += 1
            self.set(m, COMPUTING, now)

    def job_ends(self, alloc: list[int], now: float) -> None:
        for m in alloc:
            self.jobs[m] -= 1
            if self.jobs[m] == 0 and self.state[m] != UNAVAILABLE:
                self.set(m, IDLE, now)


@pytest.mark.parametrize("seed", range(10))
def test_time_in_each_state_is_the_exact_sum_of_closed_intervals(seed: int) -> None:
    rng = random.Random(seed)
    nb = 24
    fast, plain = MachineStates(nb, nb), PlainStates(nb)
    now = 0.0
    running: list[list[int]] = []
    for step in range(400):
        # Coarse dates first, then finer and finer ones (down to 2**-70 s), some repeated.
        if rng.random() < 0.8:
            now += rng.choice([1.0, 0.5, 3.25, 1e-3, 7.501e-05, 2.0 ** -(20 + step // 8)])
        kind = rng.random()
        free = [m for m in range(nb) if plain.state[m] == IDLE]
        if kind < 0.45 and free:
            if rng.random() < 0.6:  # a contiguous block of idle machines, if there is one
                lo = rng.choice(free)
                hi = lo
                while hi < nb and plain.state[hi] == IDLE and hi - lo < rng.randint(1, 12):
                    hi += 1
                alloc = list(range(lo, hi))
            else:  # scattered, or on machines already computing (compute sharing)
                pool = [m for m in range(nb) if plain.state[m] in (IDLE, COMPUTING)]
                alloc = sorted(rng.sample(pool, rng.randint(1, min(6, len(pool)))))
            if alloc:
                fast.job_starts(tuple(alloc), now)
                plain.job_starts(alloc, now)
                running.append(alloc)
        elif kind < 0.85 and running:
            alloc = running.pop(rng.randrange(len(running)))
            fast.job_ends(tuple(alloc), now)
            plain.job_ends(alloc, now)
        else:  # a switch or an availability change of one machine without a job
            m = rng.randrange(nb)
            if plain.jobs[m] == 0 and plain.state[m] != UNAVAILABLE:
                new = rng.choice([SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, UNAVAILABLE])
            elif plain.state[m] == UNAVAILABLE:
                new = COMPUTING if plain.jobs[m] else IDLE
            else:
                new = UNAVAILABLE
            fast.set(m, new, now)
            plain.set(m, new, now)
        assert list(fast.state) == plain.state
        assert list(fast.nb_jobs) == plain.jobs
    expected = {name: float(plain.time[i]) for i, name in enumerate(NAMES)}
    assert fast.time_in() == expected


def test_a_sum_beyond_the_doubles_is_infinite() -> None:
    states = MachineStates(4, 4)
    states.job_starts((0, 1, 2, 3), 1e308)
    states.job_ends((0, 1, 2, 3), 1.7e308)
    states.job_starts((0,), 1.75e308)
    times = states.time_in()
    assert times["idle"] == float("inf")  # 4 x 1e308 (closed intervals only)
    assert times["computing"] == float("inf")  # 4 x 0.7e308
    assert times["sleeping"] == 0.0


class PlainRows(PlainStates):
    """PlainStates with machine_states.csv's rows: the five counts after each job change."""

    def __init__(self, nb: int, nb_compute: int) -> None:
        super().__init__(nb)
        self.counts = [0] * len(NAMES)
        self.counts[IDLE] = nb_compute
        self.rows: list[str] = []

    def set(self, m: int, new: int, now: float) -> None:
        self.counts[self.state[m]] -= 1
        self.counts[new] += 1
        super().set(m, new, now)

    def row(self, now: float) -> None:
        self.rows.append(f"{now:g}," + ",".join(map(str, self.counts[:5])))

    def job_starts(self, alloc: list[int], now: float) -> None:
        super().job_starts(alloc, now)
        self.row(now)

    def job_ends(self, alloc: list[int], now: float) -> None:
        super().job_ends(alloc, now)
        self.row(now)


def _plain_run(seed: int, steps: int, nb: int, leave_at: int | None) -> None:
    """Jobs on idle machines only (contiguous ranges, scattered tuples, single machines)
    until step `leave_at`, where compute sharing or a switch starts (the log is turned into
    the live books), then anything; every step checks the live readers, the end checks the
    time per state and the rows against the plain rule."""
    rng = random.Random(seed)
    nb_compute = nb - 2  # (two storage machines: not counted, but moving between columns)
    fast, plain = MachineStates(nb, nb_compute), PlainRows(nb, nb_compute)
    now = 0.0
    running: list[list[int]] = []
    for step in range(steps):
        if rng.random() < 0.7:
            now += rng.choice([1.0, 0.1, 2.0 ** -30, 1e300 * 2.0 ** -1100, 7.501e-05,
                               2.0 ** -(20 + step % 50), 1e5 / 3])
        free = [m for m in range(nb) if plain.state[m] == IDLE]
        plain_phase = leave_at is None or step < leave_at
        if rng.random() < 0.5 and free:
            if rng.random() < 0.5:
                lo = rng.choice(free)
                hi = lo
                while hi < nb and plain.state[hi] == IDLE and hi - lo < rng.randint(1, 9):
                    hi += 1
                alloc: list[int] = list(range(lo, hi))
                given: object = range(lo, hi)
            else:
                pool = free if plain_phase else [
                    m for m in range(nb) if plain.state[m] in (IDLE, COMPUTING)]
                alloc = sorted(rng.sample(pool, rng.randint(1, min(5, len(pool)))))
                given = tuple(alloc)
            fast.job_starts(given, now)  # type: ignore[arg-type]
            plain.job_starts(alloc, now)
            running.append(alloc)
        elif running:
            alloc = running.pop(rng.randrange(len(running)))
            contiguous = alloc == list(range(alloc[0], alloc[-1] + 1))
            given = range(alloc[0], alloc[-1] + 1) if contiguous and rng.random() < 0.8 \
                else tuple(alloc)
            fast.job_ends(given, now)  # type: ignore[arg-type]
            plain.job_ends(alloc, now)
        if not plain_phase and rng.random() < 0.1:
            m = rng.randrange(nb)
            if plain.jobs[m] == 0 and plain.state[m] == IDLE:
                fast.set(m, SLEEPING, now)
                plain.set(m, SLEEPING, now)
            elif plain.state[m] == SLEEPING:
                fast.set(m, IDLE, now)
                plain.set(m, IDLE, now)
        assert list(fast.state) == plain.state
        assert list(fast.nb_jobs) == plain.jobs
        assert [fast.nb_jobs[m] for m in range(nb)] == plain.jobs
        assert list(fast.counts) == plain.counts
    expected = {name: float(plain.time[i]) for i, name in enumerate(NAMES)}
    assert fast.time_in() == expected
    assert "".join(fast.text_chunks(7)).splitlines() == plain.rows
    fast.last_change  # noqa: B018  (a reader the log cannot answer: the live books from here)
    assert fast.time_in() == expected
    assert "".join(fast.text_chunks(5)).splitlines() == plain.rows


@pytest.mark.parametrize("seed", range(8))
def test_a_plain_run_is_exact_from_its_log(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if seed % 2:  # the log read by chunks of a few entries (runs of equal dates cut in two)
        monkeypatch.setattr(machines, "_CHUNK", 1 + seed)
    _plain_run(seed, steps=300, nb=20, leave_at=None)


@pytest.mark.parametrize("seed", range(6))
def test_the_log_turned_into_live_books_mid_run_stays_exact(seed: int) -> None:
    _plain_run(seed, steps=300, nb=20, leave_at=40 + 40 * seed)


def test_last_changes_far_back_in_a_long_log() -> None:
    """Machine 0 changes only in the first entries of a log of several scan chunks; the
    others change all the time: its last change is found far back."""
    fast, plain = MachineStates(6, 6), PlainRows(6, 6)
    fast.job_starts((0,), 0.5)
    plain.job_starts([0], 0.5)
    fast.job_ends((0,), 0.75)
    plain.job_ends([0], 0.75)
    now = 1.0
    for i in range(6000):
        alloc = [1 + i % 5] if i % 3 else [1, 2, 3, 4, 5]
        fast.job_starts(range(alloc[0], alloc[-1] + 1), now)
        plain.job_starts(alloc, now)
        now += 0.25
        fast.job_ends(range(alloc[0], alloc[-1] + 1), now)
        plain.job_ends(alloc, now)
    expected = {name: float(plain.time[i]) for i, name in enumerate(NAMES)}
    assert fast.time_in() == expected
    assert list(fast.last_change) == plain.last and plain.last[0] == 0.75


def test_rows_without_changes_and_disabled_tracing() -> None:
    """write_row adds a row of the current counts; without tracing there are no rows, and
    the time per state is still kept."""
    fast = MachineStates(4, 4)
    fast.job_starts(range(0, 2), 1.0)
    fast.write_row(1.5)
    fast.job_ends((0, 1), 2.0)
    rows = "1,0,0,0,2,2\n1.5,0,0,0,2,2\n2,0,0,0,4,0\n"
    assert "".join(fast.text_chunks(10)) == rows
    assert "".join(fast.text_chunks(1)) == rows
    fast.set(3, SLEEPING, 2.5)  # (the live books from here)
    fast.write_row(3.0)
    assert "".join(fast.text_chunks(1)) == rows + "3,1,0,0,3,0\n"
    assert list(MachineStates(4, 4).text_chunks(10)) == []
    empty = MachineStates(4, 4)
    empty.set(0, SLEEPING, 1.0)
    assert list(empty.text_chunks(10)) == []
    quiet = MachineStates(4, 4, tracing=False)
    quiet.job_starts(range(0, 2), 1.0)
    quiet.write_row(1.5)
    quiet.job_ends((0, 1), 2.0)
    assert list(quiet.text_chunks(10)) == []
    assert quiet.time_in()["computing"] == 2.0 and quiet.time_in()["idle"] == 2.0


def test_wide_jobs_at_dates_of_full_precision() -> None:
    """Thousands of machines per change at dates using all 53 bits: each product of a count
    and a date takes more bits than a double has (the log splits the date in two)."""
    rng = random.Random(3)
    nb = 3000
    fast, plain = MachineStates(nb, nb), PlainStates(nb)
    now = 0.0
    for _ in range(12):
        lo = rng.randrange(100)
        hi = nb - rng.randrange(100)
        now += rng.random() * 1e4 + 1 / 3
        fast.job_starts(range(lo, hi), now)
        plain.job_starts(list(range(lo, hi)), now)
        now += rng.random() * 1e-3
        fast.job_ends(range(lo, hi), now)
        plain.job_ends(list(range(lo, hi)), now)
    expected = {name: float(plain.time[i]) for i, name in enumerate(NAMES)}
    assert fast.time_in() == expected


def test_huge_and_subnormal_dates_from_the_log() -> None:
    """Products that fit in a double but partial sums that do not (the integer sums take
    over: a total beyond the doubles is inf), and dates below the normal doubles."""
    fast, plain = MachineStates(2, 2), PlainStates(2)
    for alloc, now, start in (((0,), 1.6e308, True), ((1,), 1.7e308, True),
                              ((0,), 1.75e308, False), ((1,), 1.79e308, False)):
        (fast.job_starts if start else fast.job_ends)(alloc, now)
        (plain.job_starts if start else plain.job_ends)(list(alloc), now)
    times = fast.time_in()
    assert times["idle"] == float("inf")  # 3.3e308
    assert times["computing"] == float(plain.time[COMPUTING])
    tiny, plain = MachineStates(3, 3), PlainStates(3)
    for alloc, now, start in (((0, 1), 5e-324, True), ((2,), 3 * 5e-324, True),
                              ((0, 1), 7 * 5e-324, False), ((0,), 2.5e-308, True)):
        (tiny.job_starts if start else tiny.job_ends)(alloc, now)
        (plain.job_starts if start else plain.job_ends)(list(alloc), now)
    expected = {name: float(plain.time[i]) for i, name in enumerate(NAMES)}
    assert tiny.time_in() == expected and expected["computing"] == 12 * 5e-324


def test_counts_too_large_for_the_vectorized_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """More machines moved at one date than the int64 pieces allow (2**26; here lowered to
    4): the log is turned into the live books, whose integer sums take any count."""
    monkeypatch.setattr(machines, "_MAX_COUNT", 4)
    _plain_run(3, steps=200, nb=20, leave_at=None)
