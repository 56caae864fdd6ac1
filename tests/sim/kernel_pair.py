"""What the tests comparing two kernels compare (tests/sim/test_lean.py,
tests/sim/test_lean_ideal.py): the scheduler calls (`Recorder`) and the output files
(`output_files`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess


class Recorder(DecisionProcess):
    """Keeps every call: its date and events (batches as the scheduler got them)."""

    def __init__(self, inner: DecisionProcess) -> None:
        self.inner = inner
        self.calls: list[tuple[float, tuple[Event, ...]]] = []

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self.calls.append((now, tuple(events)))
        return self.inner.exchange(now, events)

    def close(self) -> None:
        self.inner.close()


def output_files(folder: Path) -> dict[str, bytes]:
    """Every file of `folder` by name, schedule.csv without its two wall-clock columns (they
    vary from run to run)."""
    files = {}
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        if path.name.endswith("schedule.csv"):
            header, row = data.decode().splitlines()
            names, values = header.split(","), row.split(",")
            data = ",".join(v for n, v in zip(names, values, strict=True)
                            if n not in ("simulation_time", "scheduling_time")).encode()
        files[path.name] = data
    return files
