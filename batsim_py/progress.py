"""A progress line on stderr while a long simulation runs: jobs done of all, jobs per
second, expected remaining wall time (tqdm) and the simulated time.

The simulation loop is not touched: a daemon thread reads three counters of the simulation a
few times a second and redraws the line, so the cost is a few microseconds per redraw
(measured in docs/analysis.md). The line appears only after `DELAY` seconds (short runs stay
silent) and is erased at the end, also when the run stops on an error or Ctrl-C. The CLI turns
it on only when stderr is a terminal and -q is not given.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

DELAY = 1.0
"""Seconds before the line appears (`BATSIM_PY_PROGRESS_DELAY` changes it)."""
INTERVAL = 0.25
"""Seconds between redraws."""


def delay_from_env() -> float:
    """`DELAY`, or the seconds `BATSIM_PY_PROGRESS_DELAY` gives (finite, >= 0; anything else is
    ignored). Why: the tests of the real line (tests/analysis/test_progress.py) would otherwise
    need a run that outlasts the delay on the fastest kernel (100,000 jobs, two runs of
    several seconds each); with 0 a run of a few thousand jobs shows it."""
    text = os.environ.get("BATSIM_PY_PROGRESS_DELAY")
    try:
        value = float(text) if text else DELAY
    except ValueError:
        return DELAY
    return value if value >= 0 and math.isfinite(value) else DELAY


class ProgressDisplay:
    """Context manager showing the progress of `sim` (a Simulation) on `stream`."""

    def __init__(self, sim: Any, stream: TextIO | None = None, delay: float | None = None,
                 interval: float = INTERVAL) -> None:
        self.sim = sim
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay_from_env() if delay is None else delay
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="batsim-py progress",
                                        daemon=True)
        self._bar: Any = None
        self._lock = threading.Lock()
        self.cpu_seconds = 0.0  # CPU time the display's thread used (its whole cost but GIL
        # hand-overs), known once the display is closed

    def _total(self) -> int | None:
        """Jobs of the workloads (dynamic jobs come on top: then the total is unknown)."""
        if getattr(self.sim.options, "dynamic_jobs", False):
            return None
        return sum(len(w.jobs) for w in self.sim.workloads)

    def _loop(self) -> None:
        try:
            self._show()
        finally:
            self.cpu_seconds = time.thread_time()

    def _show(self) -> None:
        if self._stop.wait(self.delay):
            return
        from tqdm import tqdm

        with self._lock:
            if self._stop.is_set():
                return
            self._bar = tqdm(total=self._total(), unit="job", file=self.stream, leave=False,
                             dynamic_ncols=True, mininterval=0, smoothing=0.1,
                             desc="simulating")
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                self._draw()
            if self._stop.wait(self.interval):
                return

    def _draw(self) -> None:
        bar = self._bar
        done = self.sim.nb_completed
        if done > bar.n:
            bar.update(done - bar.n)
        bar.set_postfix_str(f"simulated t={self.sim.engine.now:,.0f} s", refresh=False)
        bar.refresh()

    def __enter__(self) -> ProgressDisplay:
        # Log lines printed during the run go through tqdm, which lifts the line above them.
        from tqdm.contrib.logging import logging_redirect_tqdm

        self._logging = logging_redirect_tqdm()
        self._logging.__enter__()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        with self._lock:
            self._stop.set()
            if self._bar is not None:
                self._bar.close()  # leave=False: the line is erased
                self._bar = None
        self._thread.join(timeout=1.0)
        self._logging.__exit__(None, None, None)
