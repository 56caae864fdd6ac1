"""The engine's sleep heap (`sleep_push`, `sleep_pop`, compiled with `_Sleep`'s order inline)
keeps the very list heapq keeps: the kernel reads the heap's first three places (lean.step's
window test), so not only the order of the pops must be heapq's."""

from __future__ import annotations

import heapq
import random

from batsim_py.sim import engine
from batsim_py.sim.engine import _Sleep, sleep_pop, sleep_push


def _sleep(end: float, seq: int) -> _Sleep:
    return _Sleep(end, 0, end, seq, None)


def test_same_list_as_heapq() -> None:
    rng = random.Random(7)
    ours: list[_Sleep] = []
    theirs: list[_Sleep] = []
    seq = 0
    for _ in range(20_000):
        if ours and rng.random() < 0.45:
            a, b = sleep_pop(ours), heapq.heappop(theirs)
            assert a is b
        else:
            seq += 1
            # few distinct ends: many ties, broken by the creation order
            s = _sleep(float(rng.randrange(40)) + rng.choice((0.0, 0.5)), seq)
            sleep_push(ours, s)
            heapq.heappush(theirs, s)
        assert all(x is y for x, y in zip(ours, theirs, strict=True))
    while ours:
        assert sleep_pop(ours) is heapq.heappop(theirs)
    assert not theirs


def test_which_path_runs() -> None:
    # compiled: the inline sift (what the speed comes from); interpreted: heapq itself
    assert engine._COMPILED == (not engine.__file__.endswith(".py"))
