"""Profiles (host speed, link bandwidth and latency over time): random platforms and parallel
tasks against real SimGrid 3.32, the profile format, and whole Batsim runs worked out by hand."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from batsim_py.errors import PlatformError
from batsim_py.platform.reader import load_platform
from batsim_py.platform.traces import parse_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from simgrid_oracle_support import SYSTEM_PYTHON, simgrid_available  # noqa: E402
from trace_cases import our_ends, random_case, simgrid_ends  # noqa: E402

FAST_SEEDS = range(12)
SLOW_SEEDS = range(12, 100)


def _compare(seeds: range) -> None:
    if not simgrid_available():
        pytest.skip("Debian python3-simgrid is not installed (apt-get install python3-simgrid)")

    def one(seed: int) -> tuple[int, list[float], list[float]]:
        case = random_case(seed)
        return seed, our_ends(case), simgrid_ends(case, SYSTEM_PYTHON)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(one, seeds))
    wrong = [(seed, ours, theirs) for seed, ours, theirs in results
             if any(abs(a - b) > 1e-9 * max(abs(b), 1e-9) for a, b in zip(ours, theirs,
                                                                        strict=True))]
    exact = sum(ours == theirs for _, ours, theirs in results)
    worst = max(abs(a - b) / max(abs(b), 1e-300) for _, ours, theirs in results
                for a, b in zip(ours, theirs, strict=True))
    print(f"\n{len(results)} cases, {exact} bit for bit, worst relative difference {worst:.2g}")
    assert not wrong, wrong[:3]


def test_random_profiles_match_simgrid() -> None:
    _compare(FAST_SEEDS)


@pytest.mark.slow
def test_more_random_profiles_match_simgrid() -> None:
    _compare(SLOW_SEEDS)


# --------------------------------------------------------------------------- the format


def test_profile_dates_are_summed_as_simgrid_does() -> None:
    p = parse_profile("p", "# comment\n% other\n\n0.1 1\n0.3 0.5\n0.7 2\n")
    events = list(p.events())
    assert [v for _, v in events] == [1.0, 0.5, 2.0]
    assert events[2][0] == (0.1 + (0.3 - 0.1)) + (0.7 - 0.3)  # not 0.7


def test_loops() -> None:
    after = parse_profile("p", "1 1\n2 0.5\nLOOPAFTER 3\n").events()
    assert [next(after) for _ in range(4)] == [(1.0, 1.0), (2.0, 0.5), (6.0, 1.0), (7.0, 0.5)]
    periodic = parse_profile("p", "0 1\n2 0.5\n", periodicity=10).events()
    assert [next(periodic)[0] for _ in range(5)] == [0.0, 2.0, 10.0, 12.0, 20.0]
    assert list(parse_profile("p", "1 1\n").events()) == [(1.0, 1.0)]


@pytest.mark.parametrize(("text", "message"), [
    ("2 1\n1 1", "must be sorted"),
    ("-1 1", "negative"),
    ("1 -1", "negative"),
    ("1", "two numbers"),
    ("STOCHASTIC\nNORM 1 1 1", "stochastic"),
    ("5 1\nPERIODICITY 2", "not realizable"),
])
def test_bad_profiles(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_profile("p", text)


HOST = '<host id="master_host" speed="1Gf"/><host id="n0" speed="1Gf"/>'


def platform(tmp_path: Path, body: str, top: str = "") -> str:
    path = tmp_path / "p.xml"
    path.write_text(f'<?xml version="1.0"?>\n<platform version="4.1">{top}\n'
                    f'<zone id="z" routing="Full">\n{body}\n</zone>\n</platform>\n')
    return str(path)


@pytest.mark.parametrize(("top", "body", "message"), [
    ('<trace id="t" periodicity="-1">0 1</trace>'
     '<trace_connect trace="t" element="n0"/>', HOST, "HOST_AVAIL \\(the default\\): state"),
    ("", '<host id="n0" speed="1Gf" state_file="s.txt"/>', "state_file: state profiles"),
    ('<trace id="t" periodicity="-1">0 1</trace>'
     '<trace_connect kind="SPEED" trace="t" element="nope"/>', HOST, "host 'nope' does not"),
    ('<trace_connect kind="SPEED" trace="t" element="n0"/>', HOST, "trace 't' is unknown"),
    ('<trace id="t" periodicity="-1">0 1</trace><trace id="u" periodicity="-1">0 1</trace>'
     '<trace_connect kind="SPEED" trace="t" element="n0"/>'
     '<trace_connect kind="SPEED" trace="u" element="n0"/>', HOST, "already has a SPEED"),
    ("", '<host id="n0" speed="1Gf" speed_file="missing.txt"/>', "not found"),
    ('<trace id="t" periodicity="x">0 1</trace>', HOST, "periodicity 'x' is not a number"),
])
def test_bad_attachments(tmp_path: Path, top: str, body: str, message: str) -> None:
    with pytest.raises(PlatformError, match=message):
        load_platform(platform(tmp_path, body, top))


# ---------------------------------------------------------------------- Batsim runs


def run_jobs(tmp_path: Path, xml: str, jobs: list, profiles: dict, *args: str) -> list[dict]:
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 1, "jobs": jobs,
                                                 "profiles": profiles}))
    res = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", xml, "-w",
                          str(tmp_path / "w.json"), "--scheduler", "fcfs", "-q", "-e",
                          str(tmp_path / "out"), *args], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    with open(tmp_path / "out_jobs.csv") as f:
        return list(csv.DictReader(f))


def test_speed_profile_slows_a_job(tmp_path: Path) -> None:
    """n0 runs at full speed until 0.5, then at half: 1e9 flops take 0.5 + 1 s (ideal
    timing: the job starts at 0)."""
    (tmp_path / "speed.txt").write_text("0 1.0\n0.5 0.5\n")
    xml = platform(tmp_path, '<host id="master_host" speed="1Gf"/>'
                             '<host id="n0" speed="1Gf" speed_file="speed.txt"/>')
    row, = run_jobs(tmp_path, xml, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                    {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
                    "--timing", "ideal")
    assert float(row["execution_time"]) == 1.5


def test_latency_profile_delays_batsim_messages(tmp_path: Path) -> None:
    """From t=10 the link to the master has 0.1 s of latency: job 1's completion message
    (at 15) reaches the server 0.1 s later, so job 2 (same machine, FCFS) starts at 15.1."""
    (tmp_path / "lat.txt").write_text("10 0.1\n")
    xml = platform(tmp_path, HOST + '<link id="l" bandwidth="1GBps" latency="1ms" '
                                    'latency_file="lat.txt"/>'
                                    '<route src="master_host" dst="n0"><link_ctn id="l"/>'
                                    "</route>")
    rows = run_jobs(tmp_path, xml, [{"id": 1, "subtime": 0, "res": 1, "profile": "d"},
                                    {"id": 2, "subtime": 1, "res": 1, "profile": "d"}],
                    {"d": {"type": "delay", "delay": 15}})
    start = {r["job_id"]: float(r["starting_time"]) for r in rows}
    assert start["2"] == pytest.approx(15.1, abs=1e-4)
    assert start["1"] == pytest.approx(0.0, abs=1e-4)  # before t=10: 1 ms latencies


def test_energy_follows_the_speed_profile(tmp_path: Path) -> None:
    """100 W idle, 200 W at full load; the speed halves at t=1: 1 s at load 1 (200 J), then
    2 s at load 0.5 against the pstate speed (150 W: 300 J), as SimGrid's plugin counts."""
    (tmp_path / "speed.txt").write_text("1 0.5\n")
    xml = platform(tmp_path, '<host id="master_host" speed="1Gf"/>'
                             '<host id="n0" speed="1Gf" speed_file="speed.txt">'
                             '<prop id="wattage_per_state" value="100:200"/>'
                             '<prop id="wattage_off" value="10"/></host>')
    row, = run_jobs(tmp_path, xml, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                    {"p": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}},
                    "--timing", "ideal", "-E")
    assert float(row["execution_time"]) == 3.0
    assert float(row["consumed_energy"]) == pytest.approx(500.0)
