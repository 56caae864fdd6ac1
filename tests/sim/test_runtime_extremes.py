"""Issue 12 item 2, run-time half: extreme numbers that pass loading (huge speeds, bandwidths,
latencies and amounts, tiny ones, long delays) never hang the solver or the clock, never give
an internal error, nan or a numpy warning: they simulate, or stop with one clear line and the
outputs simulated so far."""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import pytest
from ptask_family import Case, FillerWithMapping

from batsim_py.decision.inprocess import InProcess
from batsim_py.errors import BatsimPyError, PlatformError, SimulationError, WorkloadError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options


def platform(speed: str = "1Gf", bw: str = "125MBps", lat: str = "20us",
             watts: str = "95:190", cores: int = 2) -> str:
    return f'''<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
<host id="master_host" speed="100Mf"/>
<host id="n0" speed="{speed}" core="{cores}"><prop id="wattage_per_state" value="{watts}"/></host>
<host id="n1" speed="{speed}" core="{cores}"><prop id="wattage_per_state" value="{watts}"/></host>
<link id="l0" bandwidth="{bw}" latency="{lat}"/><link id="l1" bandwidth="{bw}" latency="{lat}"/>
<link id="l2" bandwidth="{bw}" latency="{lat}"/>
<route src="master_host" dst="n0"><link_ctn id="l0"/><link_ctn id="l1"/></route>
<route src="master_host" dst="n1"><link_ctn id="l0"/><link_ctn id="l2"/></route>
<route src="n0" dst="n1"><link_ctn id="l1"/><link_ctn id="l2"/></route>
</zone></platform>'''


PAR = {"type": "parallel", "cpu": [1e9, 5e8], "com": [0, 1e6, 1e6, 0]}


def workload(profile: dict, jobs: list | None = None) -> dict:
    jobs = jobs or [{"id": "0", "subtime": 0, "res": 2, "profile": "p"}]
    return {"nb_res": 2, "jobs": jobs, "profiles": {"p": profile}}


LONG = [{"id": "a", "subtime": 0, "res": 1, "profile": "p"},
        {"id": "b", "subtime": 0, "res": 1, "profile": "p"},
        {"id": "c", "subtime": 0, "res": 2, "profile": "p"}]

# name, platform fields, workload, energy, expected: None (simulates) or (error type, regex)
CASES = [
    ("speed 1e308 x 2 cores (capacity inf) under a parallel job", {"speed": "1e308f"},
     workload(PAR), True, None),
    ("three executors mapped on one 1e308-speed host", {"speed": "1e308f"},
     workload({"type": "parallel", "cpu": [1e9, 5e8, 1.0], "com": [0, 1e6, 0] + [0] * 6},
              [{"id": "0", "subtime": 0, "res": 3, "profile": "p"}]), True, None),
    ("com=1e308 both ways (bytes on a link overflow)", {},
     workload({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e308, 1e308, 0]}), False,
     (WorkloadError, r"job w0!0: profile 'p': its amounts overflow")),
    ("com=1e308 homogeneous", {},
     workload({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e308}), False,
     (WorkloadError, r"job w0!0: profile 'p': its amounts overflow")),
    ("cpu=1e308 (finite, 1e299 s)", {},
     workload({"type": "parallel_homogeneous", "cpu": 1e308, "com": 0}), False, None),
    ("cpu and com 1e-320 (quotients overflow)", {},
     workload({"type": "parallel", "cpu": [1e-320, 1e-320], "com": [0, 1e-320, 0, 0]}), True,
     None),
    ("bandwidth 1e-300 under 1e30 bytes (rate underflows to 0)", {"bw": "1e-300Bps"},
     workload({"type": "parallel", "cpu": [0, 0], "com": [0, 1e30, 0, 0]}), False,
     (SimulationError, r"job w0!0 can never end: the solved rate is 0")),
    ("bandwidth 1e308", {"bw": "1e308Bps"}, workload(PAR), True, None),
    ("latency 1e308 (a two-link route sums to inf)", {"lat": "1e308s"}, workload(PAR), False,
     (SimulationError, r"is inf s away: the simulated clock would not stay finite")),
    ("speed 2.3e-308 (1e9 flops take beyond the floats)", {"speed": "2.3e-308f"},
     workload(PAR), False,
     (SimulationError, r"job w0!0 is inf s away: the simulated clock would not stay finite")),
    ("two 1e308 delays, then a third", {}, workload({"type": "delay", "delay": 1e308}, LONG),
     False, (SimulationError, r"at t=1e\+308 the next event of a sleep is 1e\+308 s away")),
    ("two 1e308 delays with energy", {}, workload({"type": "delay", "delay": 1e308}, LONG),
     True, (SimulationError, r"the consumed energy of host n0 overflows")),
    ("nan watts", {"watts": "nan:nan"}, workload(PAR), True,
     (PlatformError, r"wattage_per_state entry 'nan:nan': nan W cannot be simulated")),
    ("negative watts", {"watts": "-95:-190"}, workload(PAR), True,
     (PlatformError, r"wattage_per_state entry '-95:-190': -95 W cannot be simulated")),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_extreme_numbers_at_run_time(case: tuple, tmp_path: Path) -> None:
    _, fields, load, energy, expected = case
    (tmp_path / "p.xml").write_text(platform(**fields))
    (tmp_path / "w.json").write_text(json.dumps(load))
    prefix = tmp_path / "out"
    spec = RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                   Options(export_prefix=str(prefix), energy=energy))
    if "mapped" in case[0]:  # more executors than machines: placed with a mapping
        sched = FillerWithMapping(Case(0, "", load, (2, 2), {"0": 1}))
    else:
        sched = InProcess(get_scheduler("fcfs"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning may reach the user
        try:
            run_simulation(spec, sched)
        except BatsimPyError as exc:
            assert expected is not None, f"unexpected error: {exc}"
            assert isinstance(exc, expected[0]) and "\n" not in str(exc)
            assert re.search(expected[1], str(exc)), str(exc)
            if isinstance(exc, PlatformError):
                return
        else:
            assert expected is None, "simulated where an error was expected"
    jobs = (tmp_path / "out_jobs.csv").read_text()
    assert "nan" not in jobs.lower()
    if expected is None:
        for line in jobs.splitlines()[1:]:
            fields_ = line.split(",")
            assert fields_[7] == "COMPLETED_SUCCESSFULLY"
            assert math.isfinite(float(fields_[10]))
            if energy:
                assert 0.0 <= float(fields_[15]) < math.inf



def test_overflowing_fsum_falls_back_to_long_double(tmp_path: Path) -> None:
    """Two machines idle (or computing) for 1e308 s each: the total is beyond the doubles
    (`math.fsum` raised OverflowError, an internal error); it is written inf."""
    (tmp_path / "p.xml").write_text(platform())
    (tmp_path / "w.json").write_text(json.dumps(
        workload({"type": "delay", "delay": 1e308}, LONG[:2])))
    run_simulation(RunSpec(str(tmp_path / "p.xml"), [str(tmp_path / "w.json")],
                           Options(export_prefix=str(tmp_path / "out"))),
                   InProcess(get_scheduler("fcfs")))
    schedule = (tmp_path / "out_schedule.csv").read_text().splitlines()
    row = dict(zip(schedule[0].split(","), schedule[1].split(","), strict=True))
    assert row["time_computing"] == "inf" and row["nb_jobs_success"] == "2"
