#!/usr/bin/env python3
"""The plain-SimPy yardstick: how fast this machine runs a bare discrete-event loop.

50,000 SimPy processes, started 0.7 s apart, each doing 5 timeouts of 1.5 s: the practical
floor of a Python discrete-event run at job granularity. Every benchmark here times this loop
in the same run and prints its figures as ratios to it, so figures taken on different machines
(or on one noisy machine at different moments) compare. It is the same loop as the team's
../shared/tools/yardstick.py, shipped so that a fresh clone has it.

    python benchmarks/yardstick.py [--repeat 3]      prints the best wall time in seconds, then
                                                     that run's CPU time

In a benchmark: `stick = Yardstick(); stick.sample()` before and after the measured runs (each
sample is a fresh process, so it adds nothing to the benchmark's own peak memory), then
`stick.ratio(seconds)` and `stick.summary()`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def loop(n: int = 50_000) -> float:
    """Wall time of one run of the yardstick loop, in this process (`loop_times` gives its
    CPU time too)."""
    return loop_times(n)[0]


def loop_times(n: int = 50_000) -> tuple[float, float]:
    """Wall and CPU time of one run of the yardstick loop, in this process."""
    import simpy

    env = simpy.Environment()

    def job(env: simpy.Environment):  # noqa: ANN202
        for _ in range(5):
            yield env.timeout(1.5)

    def arrivals(env: simpy.Environment):  # noqa: ANN202
        for _ in range(n):
            env.process(job(env))
            yield env.timeout(0.7)

    env.process(arrivals(env))
    t0 = time.perf_counter()
    c0 = time.process_time()
    env.run()
    return time.perf_counter() - t0, time.process_time() - c0


class Yardstick:
    """Samples of the loop taken during one benchmark run; the best one is the yardstick."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu_samples: list[float] = []  # CPU time of the same loops

    def sample(self, repeat: int = 1) -> float:
        """Time the loop `repeat` times in a fresh process; keep and return the best wall
        time (its CPU time goes to `cpu_samples`)."""
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--repeat",
                              str(repeat)], check=True, capture_output=True, text=True)
        fields = out.stdout.strip().splitlines()[-1].split()
        best = float(fields[0])
        self.samples.append(best)
        self.cpu_samples.append(float(fields[1]) if len(fields) > 1 else best)
        return best

    @property
    def best(self) -> float:
        if not self.samples:
            self.sample()
        return min(self.samples)

    def ratio(self, seconds: float) -> str:
        """`seconds` as a multiple of the yardstick, e.g. `4.21 x yardstick` (3 digits)."""
        return f"{seconds / self.best:.3g} x yardstick"

    def summary(self) -> str:
        runs = ", ".join(f"{s:.3f}" for s in self.samples)
        return (f"yardstick (plain SimPy, 50,000 processes x 5 timeouts): {self.best:.3f} s "
                f"(best of samples {runs})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    wall, cpu = min(loop_times() for _ in range(ap.parse_args().repeat))
    print(f"{wall:.3f} {cpu:.3f}")
