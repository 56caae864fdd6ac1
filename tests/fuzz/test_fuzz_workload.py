"""Workload files, malformed or random: loading returns a Workload or raises a one-line
WorkloadError naming the file; valid random workloads simulate with fcfs without any other
exception."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fuzzlib import SMALL4, outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsim_py.decision.inprocess import InProcess
from batsim_py.errors import BatsimPyError, WorkloadError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options
from batsim_py.workload.model import Workload
from batsim_py.workload.reader import load_workload

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow])


def load(tmp_path: Path, content: str | bytes) -> Workload | BatsimPyError:
    path = tmp_path / "wl.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8",
                                                                              "surrogatepass"))
    result = outcome(lambda: load_workload(str(path), "w0"), seconds=3.0)
    if isinstance(result, BatsimPyError):
        assert isinstance(result, WorkloadError), repr(result)
        assert str(result).startswith(str(path)), str(result)
    return result


# -- raw bytes and text ----------------------------------------------------------------------

@settings(max_examples=200, **SETTINGS)
@given(st.one_of(st.binary(max_size=80), st.text(max_size=80)))
@example(b"\xff\xfe{}")
@example('{"nb_res": 1e999, "profiles": {}, "jobs": []}')
@example('{"nb_res": ' + "1" * 5000 + ', "profiles": {}, "jobs": []}')
@example('{"nb_res": 4, "profiles": {}, "jobs": [' + "[" * 3000)
@example("[" * 3000 + "]" * 3000)
@example('{"nb_res": Infinity}')
def test_raw_content(tmp_path: Path, content: str | bytes) -> None:
    load(tmp_path, content)


# -- structured, with hostile values ---------------------------------------------------------

hostile_numbers = st.one_of(
    st.integers(-3, 5), st.integers(), st.sampled_from([10 ** 400, -(10 ** 400), 2 ** 63, 0]),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, -0.0, 5e-324]),
)
scalars = st.one_of(st.none(), st.booleans(), hostile_numbers, st.text(max_size=4),
                    st.sampled_from(["w0", "w0!1", "x!1", "!!", "w0!!2", "d", "p", "s"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
profile_fields = {
    "delay": hostile_numbers, "cpu": st.one_of(hostile_numbers, st.lists(hostile_numbers,
                                                                          max_size=4)),
    "com": st.one_of(hostile_numbers, st.lists(hostile_numbers, max_size=16)),
    "seq": st.lists(st.sampled_from(["d", "p", "s", "nope"]), max_size=3),
    "repeat": hostile_numbers, "ret": hostile_numbers, "trace": st.text(max_size=4),
    "other": values,
}
profiles = st.dictionaries(
    st.sampled_from(["d", "p", "s"]),
    st.builds(lambda t, extra: {"type": t, **extra},
              st.sampled_from(["delay", "parallel", "parallel_homogeneous",
                               "parallel_homogeneous_total", "composed", "usage_trace",
                               "bogus"]),
              st.fixed_dictionaries({}, optional=profile_fields)),
    max_size=3,
)
jobs = st.lists(st.fixed_dictionaries({}, optional={
    "id": st.one_of(hostile_numbers, scalars), "subtime": hostile_numbers,
    "walltime": hostile_numbers, "res": hostile_numbers,
    "profile": st.sampled_from(["d", "p", "s", "nope"]),
    "smpi_ranks_to_hosts_mapping": values, "extra": values}), max_size=4)


@settings(max_examples=300, **SETTINGS)
@given(st.one_of(values, st.fixed_dictionaries(
    {"nb_res": st.one_of(hostile_numbers, values), "profiles": profiles, "jobs": jobs})))
@example({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 10 ** 400}},
          "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}]})
@example({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},
          "jobs": [{"id": 1, "subtime": 10 ** 400, "res": 1, "profile": "d"}]})
@example({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},
          "jobs": [{"id": 1, "subtime": 0, "walltime": 10 ** 400, "res": 1, "profile": "d"}]})
def test_structured(tmp_path: Path, data: Any) -> None:
    load(tmp_path, json.dumps(data))


@pytest.mark.parametrize(("text", "pattern"), [
    ('{"nb_res": 1e999, "profiles": {}, "jobs": []}', r"wl\.json: invalid JSON: .*too big"),
    ('{"nb_res": ' + "1" * 5000 + "}", r"wl\.json: invalid JSON: .*4300 digits"),
    ('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1' + "0" * 400 + '}}, '
     '"jobs": []}', r"profile 'd': field 'delay' must be finite"),
    ('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}}, "jobs": [{"id": 1, '
     '"subtime": 1' + "0" * 400 + ', "res": 1, "profile": "d"}]}',
     r"job w0!1: field 'subtime' must be finite"),
])
def test_regression_numbers_python_cannot_hold(tmp_path: Path, text: str, pattern: str) -> None:
    """Found by the fuzzer: these escaped as ValueError / OverflowError."""
    result = load(tmp_path, text)
    assert isinstance(result, WorkloadError)
    assert re.search(pattern, str(result)), str(result)


# -- valid random workloads, simulated ---------------------------------------------------------

delays = st.floats(0.5, 50, allow_nan=False).map(lambda x: round(x, 3))
valid_profiles = st.one_of(
    st.builds(lambda d: {"type": "delay", "delay": d}, delays),
    st.builds(lambda c, m: {"type": "parallel_homogeneous", "cpu": c, "com": m},
              st.sampled_from([0, 1e6, 1e9, 3e9]), st.sampled_from([0, 1e5, 1e7])),
    st.builds(lambda c, m: {"type": "parallel_homogeneous_total", "cpu": c, "com": m},
              st.sampled_from([0, 1e9, 4e9]), st.sampled_from([0, 1e6])),
)


@st.composite
def valid_workloads(draw: st.DrawFn) -> dict[str, Any]:
    base = draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), valid_profiles, min_size=1))
    names = sorted(base)
    profiles: dict[str, Any] = dict(base)
    if draw(st.booleans()):
        profiles["seq"] = {"type": "composed", "repeat": draw(st.integers(1, 3)),
                           "seq": draw(st.lists(st.sampled_from(names), min_size=1,
                                                max_size=3))}
    nb_cpu = draw(st.integers(1, 4))
    profiles["par"] = {"type": "parallel", "cpu": [1e9] * nb_cpu,
                       "com": draw(st.sampled_from([[0.0] * nb_cpu ** 2,
                                                    [1e6] * nb_cpu ** 2]))}
    jobs = []
    for i in range(draw(st.integers(0, 8))):
        profile = draw(st.sampled_from(sorted(profiles)))
        res = nb_cpu if profile == "par" else draw(st.integers(0, 5))
        job: dict[str, Any] = {"id": i, "subtime": draw(st.sampled_from([0, 0, 1, 2.5, 10])),
                               "res": res, "profile": profile}
        if draw(st.booleans()):
            job["walltime"] = draw(st.sampled_from([1, 5, 100, -1]))
        jobs.append(job)
    return {"nb_res": 4, "profiles": profiles, "jobs": jobs}


def simulate(tmp_path: Path, workload: dict[str, Any], events: str | None = None,
             **options: Any) -> Any:
    path = tmp_path / "wl.json"
    path.write_text(json.dumps(workload))
    spec = RunSpec(SMALL4, [str(path)], Options(export_prefix=str(tmp_path / "out"), **options),
                   events=[events] if events else [])
    return outcome(lambda: run_simulation(spec, InProcess(get_scheduler("fcfs"))), seconds=8.0)


@settings(max_examples=25, **SETTINGS)
@given(valid_workloads(), st.sampled_from(["batsim", "ideal"]))
def test_valid_workloads_simulate(tmp_path: Path, workload: dict[str, Any], timing: str) -> None:
    result = simulate(tmp_path, workload, timing=timing)
    if isinstance(result, BatsimPyError):  # a job larger than the platform stalls fcfs
        assert any(j["res"] > 4 or j["res"] == 0 for j in workload["jobs"]), str(result)
    else:
        rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
        assert len(rows) == 1 + len(workload["jobs"])
