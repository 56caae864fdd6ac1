"""Cost bounds that hold beside other tests: CPU times of sizes that take turns over rounds.

A cost test compares the CPU time of a few sizes of the same work (linear vs quadratic, ...).
CI runs the suite on every core of a 2-core machine (pytest-xdist) and developers run it beside
each other's work, so a burst of load can land on one sample: CPU time (time.process_time)
leaves out the time the process waits, yet cache and memory-bandwidth sharing still stretch it
by up to 2x for a while. Hence:

- the sizes take turns within each round, so a burst weighs on one round of every size, not on
  every sample of one size, and each size keeps its best (least loaded) time; the largest size
  goes first, so that what the first sample of a process pays once (imports, caches, lazy
  set-ups) inflates the large size, which can only cost another round, never hide a bad ratio;
- the garbage collector is off while a sample runs (a collection triggered by the allocations of
  one size's sample, or of the previous sample, would be charged to it alone);
- the rounds stop as soon as the bound holds (`holds(best)`, checked after each whole round and
  after `least` rounds at least): a quiet machine pays one round, a loaded one more; a bound
  that still fails after `rounds` rounds fails the test. A ratio that only a real regression
  exceeds on every round (each test sets its bound between the linear ratio and the bad one)
  thus fails, while a burst that happens to slow one round's larger size does not.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def cpu_seconds(work: Callable[[], object]) -> float:
    """CPU seconds of `work()`, with the garbage collector off meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        t = time.process_time()
        work()
        return time.process_time() - t
    finally:
        if enabled:
            gc.enable()


def best_seconds(samples: Mapping[K, Callable[[], float]], holds: Callable[[dict[K, float]], bool],
                 rounds: int = 5, least: int = 1) -> dict[K, float]:
    """Best CPU seconds of each size: `samples[size]()` runs one sample and returns its seconds
    (time it with `cpu_seconds`, leaving its set-up outside). Every size takes its turn in each
    round; rounds stop once `holds(best)` is true (after `least` rounds at least) or after
    `rounds` rounds. Sizes run in the mapping's order: put the largest first. The caller asserts
    its bound on the result (with the figures)."""
    best = {size: float("inf") for size in samples}
    for done in range(1, rounds + 1):
        for size, sample in samples.items():
            best[size] = min(best[size], sample())
        if done >= least and holds(best):
            break
    return best
