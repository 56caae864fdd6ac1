"""`--no-sched` (batexec) runs compared with the real Batsim 4.2.1's (tests/conformance/nosched).

Every output file Batsim wrote but the Pajé trace must be byte-identical; in schedule.csv the
two wall-clock columns and the version string are left out, every other column is compared as
printed (`-nan` included).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.batexec import NoScheduler
from batsim_py.sim.options import Options

NOSCHED = Path(__file__).resolve().parent / "nosched"
CASES = sorted(p.parent.name for p in NOSCHED.glob("*/case.json"))
NOT_COMPARED = {"scheduling_time", "simulation_time", "batsim_version"}


def run_case(case: str, out: Path) -> Path:
    """Run the case in-process as its case.json says; the folder of Batsim's outputs."""
    folder = NOSCHED / case
    spec = json.loads((folder / "case.json").read_text())
    args = spec["batsim_args"]
    assert "--no-sched" in args and set(args) <= {"--no-sched", "--energy"}, args
    run_simulation(
        RunSpec(
            platform=str(folder / spec["platform"]),
            workloads=[str(folder / w) for w in spec["workloads"]],
            options=Options(export_prefix=str(out / "out"), energy="--energy" in args,
                            no_sched=True),
        ),
        NoScheduler(),
    )
    return folder / "expected"


def test_the_corpus_is_there() -> None:
    assert len(CASES) >= 5, CASES


@pytest.mark.parametrize("case", CASES)
def test_nosched_case(case: str, tmp_path: Path) -> None:
    expected = run_case(case, tmp_path)
    names = sorted(p.name for p in expected.iterdir())
    assert "out_jobs.csv" in names and "out_machine_states.csv" in names
    for name in names:
        theirs = (expected / name).read_bytes()
        ours_path = tmp_path / name
        assert ours_path.exists(), f"{name} not written"
        ours = ours_path.read_bytes()
        if name != "out_schedule.csv":
            assert ours == theirs, f"{case}: {name} differs"
            continue
        (they,) = _rows(theirs)
        (we,) = _rows(ours)
        assert we.keys() == they.keys()
        for column, value in they.items():
            if column not in NOT_COMPARED:
                assert we[column] == value, f"{case}: schedule.csv {column}"


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(data.decode().splitlines()))


def test_no_jobs_rows_and_nan_metrics(tmp_path: Path) -> None:
    """What makes batexec's outputs unlike a scheduled run's (Batsim's, hence ours): no job
    row, no job counted, undefined means printed as glibc prints 0/0."""
    run_case("ns1_mixed_profiles_small", tmp_path)
    assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 1
    (row,) = _rows((tmp_path / "out_schedule.csv").read_bytes())
    assert row["nb_jobs"] == "0" and row["mean_waiting_time"] == "-nan"
    assert float(row["time_computing"]) > 0
