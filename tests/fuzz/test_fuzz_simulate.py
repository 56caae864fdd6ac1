"""Generated platforms, workloads and scheduler replies, SIMULATED (issue 12 item 8).

Each example writes a small platform (speeds, bandwidths, latencies, watts and sleep pstates
drawn from pools of ordinary, extreme and invalid values), a workload (odd ids and profile
names, `res` 0 to too many, extreme delays and amounts, nested composed profiles) and runs it,
either through the command line with a shipped scheduler or through the Python API with a
scheduler answering random decisions. Whatever the input, the run must:
- end within the time bound (no hang);
- exit 0, or exit 1 with exactly one line `batsim-py: error: ...` (never `internal error`,
  never a raw control character from a name);
- leave its outputs complete or absent: a written jobs.csv is whole valid CSV (header, one
  17-column row per line, final newline) and, after a successful run, has a row per job.
The default run is short; `-m slow` runs the long version.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fuzzlib import time_limit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batsim_py.cli import main
from batsim_py.decision import decisions as d
from batsim_py.decision.events import Event, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import BatsimPyError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

# (accepted values, ordinary or extreme; refused ones): an example draws from the refused pool
# rarely, so that most examples get past loading and are simulated.
SPEEDS = (["1Gf", "2.5Mf", "1f", "1e308f", "1e-300f", "3Gf,1Gf", "2.2250738585072014e-308f"],
          ["0f", "1e-320f", "inf", "nan", "-1Gf", "1e308Gf", "0x1p99999f", "1e999f"])
BANDWIDTHS = (["1GBps", "10Bps", "1e308Bps", "1e-300Bps", "1.25e8Bps"],
              ["0Bps", "inf", "1e-320Bps", "-5Bps"])
LATENCIES = (["0", "10us", "1e308s", "1e-300s", "1e-300ps", "500ms"],
             ["1e-320s", "infs", "-1s", "nans"])
WATTS = (["100:200", "1:2:3", "1e308:1e308", "0:0", "1e-320:1"], ["inf:1:2", "-1:2", "nan:1"])
ENERGY_SPEEDS = (["1Gf, 1e-9f, 1f", "1Gf,1f,1f", "1e308f, 0f, 1e-300f"],
                 ["1Gf, 1e-9f, 0f"])
SLEEPS = (["1:2:2", ""], ["1:0:2", "0:1:2", "1:2:2,1:2:2", "1:5:0"])
NAMES = (["a", "a,b", 'q"x', "n\nl", "t\tb", "é", "sep\u2028", "\x1b[2J", "w0!5", " sp ",
          "7"], ["\ud800", "", "x!y"])
AMOUNTS = ([0, 1, 2.5, 1e-320, 1e-300, 1e308, 1e-9, 3600, 1e12], [-1])
DELAYS = ([1, 2.5, 1e-320, 1e-300, 1e308, 1e-9, 3600], [0, -1])
HEADER_FIELDS = 17

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])


def xml_attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
            .replace("\n", "&#10;").replace("\t", "&#9;"))


def pick(draw: Any, pools: tuple[list, list], bad: bool) -> Any:
    """A value of the accepted pool, or of either pool when this example may be refused."""
    return draw(st.sampled_from(pools[0] + pools[1] if bad else pools[0]))


@st.composite
def platforms(draw: Any) -> str:
    bad = draw(st.integers(0, 7)) == 0
    n = draw(st.integers(1, 3))
    speed = pick(draw, SPEEDS, bad)
    bw, lat = pick(draw, BANDWIDTHS, bad), pick(draw, LATENCIES, bad)
    props = ""
    if draw(st.booleans()):  # energy: three pstates (computation, sleep, switch)
        speed = pick(draw, ENERGY_SPEEDS, bad)
        watt = ", ".join(pick(draw, WATTS, bad) for _ in range(3))
        sleep = pick(draw, SLEEPS, bad)
        props = (f'<prop id="wattage_per_state" value="{watt}"/>'
                 f'<prop id="sleep_pstates" value="{sleep}"/>')
    names = [f"n{i}" for i in range(n)]
    if draw(st.booleans()):
        names[0] = "n" + draw(st.sampled_from(["-x", "_0", "é", ".1"]))
    hosts = "\n".join(f'<host id="{xml_attr(h)}" speed="{speed}">{props}</host>' for h in names)
    routes = "\n".join(f'<route src="master_host" dst="{xml_attr(h)}"><link_ctn id="l"/></route>'
                       for h in names)
    return (f'<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">\n'
            f'<host id="master_host" speed="1Gf"/>\n{hosts}\n'
            f'<link id="l" bandwidth="{bw}" latency="{lat}"/>\n{routes}\n</zone></platform>\n')


@st.composite
def profiles(draw: Any) -> dict:
    bad = draw(st.integers(0, 7)) == 0
    num = st.sampled_from(AMOUNTS[0] + AMOUNTS[1] if bad else AMOUNTS[0])
    out: dict[str, Any] = {
        "d": {"type": "delay", "delay": pick(draw, DELAYS, bad)},
        "p": {"type": "parallel_homogeneous", "cpu": draw(num), "com": draw(num)},
        "t": {"type": "parallel_homogeneous_total", "cpu": draw(num), "com": draw(num)},
        "x": {"type": "parallel", "cpu": [draw(num), draw(num)],
              "com": [draw(num) for _ in range(4)]},
    }
    depth = draw(st.sampled_from([1, 2, 50]))
    for i in range(depth):  # deep chains stay linear (2^50 tasks would be a real, long run)
        inner = "d" if i == 0 else f"c{i - 1}"
        out[f"c{i}"] = {"type": "composed",
                        "repeat": draw(st.integers(1, 2)) if depth < 50 else 1,
                        "seq": [inner, draw(st.sampled_from(["d", "p", "x"]))]}
    if draw(st.integers(0, 5)) == 0:
        out["cyc"] = {"type": "composed", "seq": ["cyc"]}
    return out


@st.composite
def workloads(draw: Any) -> dict:
    profs = draw(profiles())
    bad = draw(st.integers(0, 7)) == 0
    jobs = []
    for i in range(draw(st.integers(1, 5))):
        name = pick(draw, NAMES, bad) + str(i)
        prof = draw(st.sampled_from(sorted(profs)))
        job = {"id": name, "subtime": draw(st.sampled_from([0, 1, 2.5, 1e-320, 1e308])),
               "res": 2 if prof == "x" else draw(st.integers(0, 4)), "profile": prof}
        if draw(st.booleans()):
            job["walltime"] = draw(st.sampled_from([-1, 1e-320, 5, 1e308, 0.5]))
        jobs.append(job)
    return {"nb_res": 4, "jobs": jobs, "profiles": profs}


def check_outputs(prefix: Path, nb_jobs: int, ok: bool) -> None:
    jobs = Path(f"{prefix}_jobs.csv")
    if not jobs.exists():
        assert not ok, "a successful run wrote no jobs.csv"
        return
    text = jobs.read_text(encoding="utf-8")
    assert text.endswith("\n"), "jobs.csv is truncated"
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows and len(rows[0]) == HEADER_FIELDS
    assert all(len(r) == HEADER_FIELDS for r in rows), "a jobs.csv row is not 17 columns"
    if ok:
        assert len(rows) - 1 == nb_jobs, "a successful run lost jobs"


def check_message(code: int, err: str) -> None:
    assert code in (0, 1), (code, err)
    lines = [line for line in err.splitlines() if line.startswith("batsim-py:")]
    assert "internal error" not in err, err
    if code == 1:
        assert len(lines) == 1 and lines[0].startswith("batsim-py: error: "), err
        assert err.endswith(lines[0] + "\n"), f"the error is not the last line: {err!r}"
        assert not any(c in lines[0] for c in "\r\x1b\u2028"), repr(lines[0])


def write_inputs(tmp: Path, platform: str, workload: dict) -> tuple[Path, Path]:
    p, w = tmp / "p.xml", tmp / "w.json"
    p.write_text(platform, encoding="utf-8")
    w.write_text(json.dumps(workload), encoding="utf-8")  # lone surrogates as \ud800 escapes
    return p, w


def simulate_cli(tmp: Path, platform: str, workload: dict, scheduler: str, energy: bool,
                 seconds: float) -> None:
    p, w = write_inputs(tmp, platform, workload)
    prefix = tmp / "out"
    argv = ["-p", str(p), "-w", str(w), "-e", str(prefix), "--scheduler", scheduler, "-q"]
    if energy:
        argv.append("-E")
    err = io.StringIO()
    with time_limit(seconds), contextlib.redirect_stderr(err):
        code = main(argv)
    check_message(code, err.getvalue())
    check_outputs(prefix, len(workload["jobs"]), code == 0)


class RandomReplies(DecisionProcess):
    """Mostly valid decisions (jobs started on free machines, rejected, metadata with odd
    strings, CALL_ME_LATERs at extreme dates) and now and then invalid ones; every job gets a
    decision, so a run of valid decisions ends."""

    def __init__(self, data: st.DataObject, rounds: int) -> None:
        self.data, self.rounds = data, rounds
        self.nb = 4
        self.busy: dict[str, tuple[int, ...]] = {}

    def exchange(self, now: float, events: Sequence[Event]) -> d.Reply:
        draw = self.data.draw
        new: list[Any] = []
        for e in events:
            if isinstance(e, SimulationBegins):
                self.nb = e.nb_compute_resources
            elif isinstance(e, JobSubmitted):
                new.append(e.job)
            elif getattr(e, "job_id", None) in self.busy:
                del self.busy[e.job_id]  # completed or killed: its machines are free
        out: list[d.Decision] = []
        bad = self.rounds > 0 and draw(st.integers(0, 5)) == 0
        self.rounds -= 1
        if bad:
            ids = [j.id for j in new] + ["w0!nope", "\ud800", "w0!a,b"]
            job = st.sampled_from(ids)
            alloc = st.lists(st.integers(0, self.nb + 1), max_size=3, unique=True).map(
                lambda xs: tuple(sorted(xs)))
            out += draw(st.lists(st.one_of(
                st.builds(lambda j, a: d.ExecuteJob(now, j, a), job, alloc),
                st.builds(lambda j: d.KillJob(now, (j,)), job),
                st.builds(lambda t: d.CallMeLater(now, now + t),
                          st.sampled_from([-1.0, 0.0, 1e-320])),
            ), max_size=2))
        taken = {m for alloc in self.busy.values() for m in alloc}
        for job in new:
            free = [m for m in range(self.nb) if m not in taken]
            if 0 < job.res <= len(free) and draw(st.booleans()):
                alloc = tuple(free[:job.res])
                taken.update(alloc)
                self.busy[job.id] = alloc
                out.append(d.ExecuteJob(now, job.id, alloc))
                if draw(st.booleans()):
                    out.append(d.SetJobMetadata(now, job.id, draw(st.sampled_from(
                        ["m", "a,b", "n\nl", "\x1b[0m", "é"]))))
            else:
                out.append(d.RejectJob(now, job.id))
        if draw(st.integers(0, 3)) == 0:
            out.append(d.CallMeLater(now, now + draw(st.sampled_from([1e-9, 1.0, 1e308, 7.5]))))
        return d.Reply(now, tuple(out))


def simulate_api(tmp: Path, platform: str, workload: dict, data: st.DataObject,
                 seconds: float) -> None:
    p, w = write_inputs(tmp, platform, workload)
    prefix = tmp / "out"
    ok = True
    try:
        with time_limit(seconds):
            run_simulation(RunSpec(str(p), [str(w)], Options(export_prefix=str(prefix))),
                           RandomReplies(data, rounds=4))
    except BatsimPyError as exc:
        ok = False
        assert str(exc) and "\n" not in str(exc), repr(str(exc))
    check_outputs(prefix, len(workload["jobs"]), ok)


def _cli_case(tmp_path: Path, platform: str, workload: dict, scheduler: str, energy: bool,
              n: list[int]) -> None:
    n[0] += 1
    case = tmp_path / f"c{n[0]}"
    case.mkdir()
    simulate_cli(case, platform, workload, scheduler, energy, seconds=20.0)


def _api_case(tmp_path: Path, platform: str, workload: dict, data: st.DataObject,
              n: list[int]) -> None:
    n[0] += 1
    case = tmp_path / f"c{n[0]}"
    case.mkdir()
    simulate_api(case, platform, workload, data, seconds=20.0)


SCHEDULERS = st.sampled_from(["fcfs", "easy", "fcfs_sleep"])


@settings(max_examples=12, **SETTINGS)
@given(platforms(), workloads(), SCHEDULERS, st.booleans())
def test_simulate_with_shipped_schedulers(tmp_path: Path, platform: str, workload: dict,
                                          scheduler: str, energy: bool) -> None:
    _cli_case(tmp_path, platform, workload, scheduler, energy or scheduler == "fcfs_sleep",
              _COUNTER)


@settings(max_examples=12, **SETTINGS)
@given(platforms(), workloads(), st.data())
def test_simulate_with_random_replies(tmp_path: Path, platform: str, workload: dict,
                                      data: st.DataObject) -> None:
    _api_case(tmp_path, platform, workload, data, _COUNTER)


@pytest.mark.slow
@settings(max_examples=300, **{**SETTINGS, "derandomize": False})
@given(platforms(), workloads(), SCHEDULERS, st.booleans())
def test_simulate_with_shipped_schedulers_long(tmp_path: Path, platform: str, workload: dict,
                                               scheduler: str, energy: bool) -> None:
    _cli_case(tmp_path, platform, workload, scheduler, energy or scheduler == "fcfs_sleep",
              _COUNTER)


@pytest.mark.slow
@settings(max_examples=300, **{**SETTINGS, "derandomize": False})
@given(platforms(), workloads(), st.data())
def test_simulate_with_random_replies_long(tmp_path: Path, platform: str, workload: dict,
                                           data: st.DataObject) -> None:
    _api_case(tmp_path, platform, workload, data, _COUNTER)


_COUNTER = [0]  # distinct output folders across the examples of one test
