"""External event files, malformed or random: loading returns events or raises a one-line
WorkloadError naming file:line; valid random events simulate with fcfs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from fuzzlib import SMALL4, outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsim_py.decision.inprocess import InProcess
from batsim_py.errors import BatsimPyError, WorkloadError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options
from batsim_py.workload.events import load_events

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow])
DELAYS = str(Path(SMALL4).parents[1] / "workloads" / "delays_small.json")


def load(tmp_path: Path, text: str | bytes, forward: bool) -> Any:
    path = tmp_path / "ev.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    result = outcome(lambda: load_events(str(path), "we0", forward), seconds=3.0)
    if isinstance(result, BatsimPyError):
        assert isinstance(result, WorkloadError), repr(result)
        assert str(result).startswith(str(path)), str(result)
    return result


values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=4), st.sampled_from(["machine_available", "machine_unavailable",
                                                    "0-3", "1 2", "3-1", "0-99999999999"])),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3), max_leaves=5)
events = st.fixed_dictionaries({}, optional={
    "type": st.one_of(st.sampled_from(["machine_available", "machine_unavailable", "custom"]),
                      values),
    "timestamp": st.one_of(st.floats(-1, 100, allow_nan=False), st.integers(), values,
                           st.just(10 ** 400)),
    "resources": st.one_of(st.sampled_from(["0", "0-3", "1 3", "", "a", "3-1", "-1",
                                            "0-99999999999"]), values),
    "extra": values})


@settings(max_examples=200, **SETTINGS)
@given(st.lists(st.one_of(events.map(json.dumps), st.text(max_size=20)), max_size=5),
       st.booleans())
@example(['{"type": "machine_available", "resources": "0-99999999999", "timestamp": 1}'], False)
@example(['{"type": "machine_available", "resources": "0", "timestamp": 1' + "0" * 400 + "}"],
         False)
@example(['{"type": "machine_available", "resources": "0", "timestamp": NaN}'], False)
@example(["[" * 3000], False)
def test_event_lines(tmp_path: Path, lines: list[str], forward: bool) -> None:
    load(tmp_path, "\n".join(lines), forward)


@settings(max_examples=50, **SETTINGS)
@given(st.binary(max_size=60))
@example(b"\xff\xfe")
def test_raw_bytes(tmp_path: Path, content: bytes) -> None:
    load(tmp_path, content, True)


def test_regression_unbuildable_events(tmp_path: Path) -> None:
    """Found by the fuzzer: a hang (huge range), OverflowError, RecursionError, NaN accepted."""
    cases = {
        '{"type": "machine_available", "resources": "0-99999999999", "timestamp": 1}':
            "ev.txt:1: 'resources' '0-99999999999': '0-99999999999': too many machine ids",
        '{"type": "machine_available", "resources": "0", "timestamp": 1' + "0" * 400 + "}":
            "ev.txt:1: the timestamp is too large",
        '{"type": "machine_available", "resources": "0", "timestamp": NaN}':
            "ev.txt:1: not a JSON object (NaN is not a JSON number",
        "[" * 3000: "ev.txt:1: not a JSON object (nesting too deep)",
    }
    assert "ev.txt: not UTF-8 text at byte 0" in str(load(tmp_path, b"\xff\xfe", False))
    # 3,000 nested lists exceed Python's default recursion limit (1,000); a library run earlier
    # in the same process may have raised it for good (mypy sets 16,384), and which tests share
    # a process depends on pytest-xdist's scheduling: the check runs at the default limit.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        for line, message in cases.items():
            result = load(tmp_path, line, False)
            assert isinstance(result, WorkloadError) and message in str(result), str(result)
    finally:
        sys.setrecursionlimit(limit)


@st.composite
def valid_events(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["machine_available", "machine_unavailable", "custom"]))
        event: dict[str, Any] = {"type": kind,
                                 "timestamp": draw(st.sampled_from([0, 1, 5, 5, 20.5, 300]))}
        if kind != "custom":
            ids = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True))
            event["resources"] = " ".join(map(str, ids))
        lines.append(json.dumps(event))
    return "\n".join(lines)


@settings(max_examples=20, **SETTINGS)
@given(valid_events(), st.booleans())
def test_valid_events_simulate(tmp_path: Path, text: str, forward: bool) -> None:
    path = tmp_path / "ev.txt"
    path.write_text(text)
    spec = RunSpec(SMALL4, [DELAYS], Options(export_prefix=str(tmp_path / "o"),
                                             forward_unknown_events=forward),
                   events=[str(path)])
    outcome(lambda: run_simulation(spec, InProcess(get_scheduler("fcfs"))), seconds=8.0)
