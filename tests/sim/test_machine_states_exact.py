"""MachineStates adds the time machines spend in each state without visiting them (sums of
dates per state, sim/machines.py): checked against the rule itself, written the plain way
(each machine's closed intervals, in exact fractions), on random job starts and ends (blocks,
small and scattered allocations, compute sharing), switches and unavailability, with dates
whose binary digits get finer as the run goes (the integer sums' scale must grow mid-run)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

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
