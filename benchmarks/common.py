"""What several benchmarks need: the shipped reference corpus, a free TCP port, and the CPU
time of an in-process scheduler over a run."""

from __future__ import annotations

import gc
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reference() -> Path:
    """The reference corpus shipped in tests/conformance/reference, its compressed (f_50k)
    files written out on first use (tests/conformance/corpus.py)."""
    sys.path.insert(0, str(ROOT / "tests" / "conformance"))
    from corpus import prepare

    return prepare()


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scheduler_cpu(run, scheduler: str) -> tuple[float, int]:  # noqa: ANN001
    """CPU time the in-process scheduler `scheduler` (a `get_scheduler` name) takes over one
    run, and its number of exchanges.

    `sim.scheduling_time` is wall time (what Batsim prints in schedule.csv): on a loaded
    machine it counts the time the process waited for a core. Timing each exchange's CPU
    in the run itself would cost two `process_time` calls (about 0.8 us each, a system call)
    per exchange, more than some exchanges take. So the exchanges are recorded instead in an
    extra, untimed run (`run(decision)` simulates with the given decision process), then
    replayed in order into a fresh scheduler between two `process_time` calls: an in-process
    scheduler's replies depend only on the events it was handed, so the replay does the same
    work (checked: same number of decisions per reply).
    """
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.decision.interface import DecisionProcess
    from batsim_py.schedulers import get_scheduler

    recorded: list[tuple[float, tuple, int]] = []

    class Recording(DecisionProcess):
        def __init__(self) -> None:
            self.inner = InProcess(get_scheduler(scheduler))

        def exchange(self, now, events):  # noqa: ANN001, ANN202
            kept = tuple(events)  # (before the call: the engine may reuse its list)
            reply = self.inner.exchange(now, events)
            recorded.append((now, kept, len(reply.decisions)))
            return reply

        def close(self) -> None:
            self.inner.close()

    run(Recording())
    inputs = [(now, list(events)) for now, events, _ in recorded]
    fresh = InProcess(get_scheduler(scheduler))
    exchange = fresh.exchange
    counts = []
    # The recording holds every event of the run alive at once, which the run never does: with
    # the collector on, its full passes over those millions of objects doubled the figure
    # (f_50k: 0.54 s against 0.27 s of wall time in the run). It is off during the replay, and
    # only each reply's decision count is kept.
    gc.collect()
    gc.disable()
    try:
        c0 = time.process_time()
        for now, events in inputs:
            counts.append(len(exchange(now, events).decisions))
        cpu = time.process_time() - c0
    finally:
        gc.enable()
    fresh.close()
    if counts != [n for _, _, n in recorded]:
        raise RuntimeError("the replayed scheduler decided otherwise: its CPU time is not "
                           "the run's")
    return cpu, len(inputs)
