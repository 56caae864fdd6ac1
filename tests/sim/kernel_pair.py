"""What the tests comparing two kernels compare (tests/sim/test_lean.py,
tests/sim/test_quiet_shortcuts.py, tests/sim/test_lean_ideal.py): the scheduler calls
(`Recorder`) and the output files (`output_files`) of a run made with some switch of the
environment (`run_with`), against another's (`assert_same`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options


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


@dataclass
class PairRun:
    """One run of a pair: the scheduler's calls, the output files, the simulation, the error."""

    calls: list[tuple[float, tuple[Event, ...]]]
    files: dict[str, bytes]
    sim: Any
    error: str  # a SchedulerError's message, or ""


def run_with(folder: Path, spec: RunSpec, make: Callable[[], DecisionProcess],
             env: dict[str, str | None], monkeypatch: pytest.MonkeyPatch) -> PairRun:
    """One run of `spec` with its outputs in `folder`, the variables `env` set in the
    environment (None: unset), the scheduler `make()` recorded."""
    prefix = folder / "out"
    with monkeypatch.context() as m:
        for name, value in env.items():
            if value is None:
                m.delenv(name, raising=False)
            else:
                m.setenv(name, value)
        recorder = Recorder(make())
        sims: list[Any] = []
        error = ""
        options = Options(**{**{n: getattr(spec.options, n) for n in Options.__slots__},
                             "export_prefix": str(prefix)})
        run_spec = RunSpec(spec.platform, spec.workloads, options,
                           mmax_workload=spec.mmax_workload, events=spec.events)
        try:
            run_simulation(run_spec, recorder, setup=sims.append)
        except SchedulerError as exc:
            error = str(exc)
    return PairRun(recorder.calls, output_files(folder), sims[0], error)


def assert_same(first: PairRun, second: PairRun) -> None:
    """The two runs gave the same error, the same scheduler calls (every event of every
    batch, and the call's date) and the same files byte for byte."""
    assert second.error == first.error
    assert "out_jobs.csv" in first.files and first.files.keys() == second.files.keys()
    assert len(second.calls) == len(first.calls)
    for k, (call_2, call_1) in enumerate(zip(second.calls, first.calls, strict=True)):
        assert call_2 == call_1, f"scheduler call {k}"
    for name in first.files:
        assert second.files[name] == first.files[name], name
