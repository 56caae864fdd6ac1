"""Comparison of Batsim output sets (batsim_py.output.compare)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from batsim_py.errors import UsageError
from batsim_py.output.compare import compare, locate, main

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"

JOBS = """\
job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata
1,w0,d,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000060,10.000060,0.000000,10.000060,1.000000,0,-1.000000,""
2,w0,d,1.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,10.000060,10.000000,20.000060,9.000060,19.000060,1.900006,0-1,-1.000000,"hello, world"
r,w0,d,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,""
"""  # noqa: E501

SCHEDULE = """\
batsim_version,consumed_joules,makespan,nb_jobs,scheduling_time,simulation_time,success_rate
4.2.1,0.000000,20.000060,3,0.012345,0.250000,0.666667
"""

MACHINES = """\
time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing
0,0,0,0,3,1
10.0001,0,0,0,2,2
20.0001,0,0,0,4,0
"""


def make(folder: Path, prefix: str = "out", **replace: str) -> Path:
    """Write a set of outputs; `replace` maps kind -> file text."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"jobs": JOBS, "schedule": SCHEDULE, "machine_states": MACHINES, **replace}
    for kind, text in files.items():
        if text is not None:
            (folder / f"{prefix}_{kind}.csv").write_text(text)
    return folder


def test_identical_folders(tmp_path: Path) -> None:
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b")))
    assert res.ok and res.differences == [] and res.table() == "identical"


def test_prefixes_and_files(tmp_path: Path) -> None:
    make(tmp_path / "a", prefix="run1")
    make(tmp_path / "b", prefix="run2")
    assert compare(str(tmp_path / "a" / "run1"), str(tmp_path / "b" / "run2")).ok
    assert compare(str(tmp_path / "a" / "run1_jobs.csv"), str(tmp_path / "b")).ok


def test_one_digit_reported_with_job_and_column(tmp_path: Path) -> None:
    changed = JOBS.replace("0.000000,10.000060,10.000060", "0.000000,10.000061,10.000060", 1)
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", jobs=changed)))
    assert not res.ok
    assert len(res.differences) == 1
    d = res.differences[0]
    assert (d.file, d.where, d.column, d.a, d.b) == (
        "jobs",
        "w0!1",
        "execution_time",
        "10.000060",
        "10.000061",
    )
    table = res.table()
    assert "w0!1" in table and "execution_time" in table and "10.000061" in table


def test_tolerance(tmp_path: Path) -> None:
    changed = JOBS.replace("0.000000,10.000060,10.000060", "0.000000,10.000061,10.000060", 1)
    a, b = str(make(tmp_path / "a")), str(make(tmp_path / "b", jobs=changed))
    assert compare(a, b, tolerance=1e-5).ok
    assert not compare(a, b, tolerance=1e-7).ok
    # Text cells never become equal through the tolerance.
    other = JOBS.replace("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", 1)
    assert not compare(a, str(make(tmp_path / "c", jobs=other)), tolerance=1.0).ok
    with pytest.raises(UsageError):
        compare(a, b, tolerance=-1)


def test_wall_clock_columns_ignored(tmp_path: Path) -> None:
    sched = SCHEDULE.replace("4.2.1,", "0.1.0,").replace("0.012345,0.250000", "9.0,8.0")
    assert compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", schedule=sched))).ok
    sched = SCHEDULE.replace("20.000060", "20.000061")
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "c", schedule=sched)))
    assert [(d.file, d.where, d.column) for d in res.differences] == [
        ("schedule", "line 2", "makespan")
    ]


def test_jobs_row_order_ignored(tmp_path: Path) -> None:
    header, *rows = JOBS.splitlines()
    shuffled = "\n".join([header, *reversed(rows)]) + "\n"
    assert compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", jobs=shuffled))).ok


def test_missing_and_extra_jobs(tmp_path: Path) -> None:
    fewer = "\n".join(JOBS.splitlines()[:-1]) + "\n"
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", jobs=fewer)))
    assert [(d.where, d.a, d.b) for d in res.differences] == [("w0!r", "present", "(absent)")]


def test_quoting_difference(tmp_path: Path) -> None:
    unquoted = JOBS.replace('-1.000000,""\n2', "-1.000000,\n2")
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", jobs=unquoted)))
    assert [(d.where, d.column) for d in res.differences] == [("w0!1", "(quoting)")]


def test_machine_states_row_by_row(tmp_path: Path) -> None:
    extra = MACHINES + "30,0,0,0,4,0\n"
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", machine_states=extra)))
    assert [(d.file, d.where, d.column, d.a) for d in res.differences] == [
        ("machine_states", "line 5", "(row)", "(absent)")
    ]
    changed = MACHINES.replace("10.0001,0,0,0,2,2", "10.0002,0,0,0,2,2")
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "c", machine_states=changed)))
    assert [(d.where, d.column) for d in res.differences] == [("line 3", "time")]


def test_header_difference(tmp_path: Path) -> None:
    other = MACHINES.replace("nb_idle,nb_computing", "nb_computing,nb_idle")
    res = compare(str(make(tmp_path / "a")), str(make(tmp_path / "b", machine_states=other)))
    assert res.differences[0].where == "header"


def test_file_on_one_side_only(tmp_path: Path) -> None:
    a = make(tmp_path / "a")
    b = make(tmp_path / "b", pstate_changes="time,machine_id,new_pstate\n0,0-3,0\n")
    res = compare(str(a), str(b))
    assert [(d.file, d.column, d.a) for d in res.differences] == [
        ("pstate_changes", "(file)", "(absent)")
    ]
    (b / "out_pstate_changes.csv").unlink()
    (b / "out_machine_states.csv").unlink()
    assert [d.file for d in compare(str(a), str(b)).differences] == ["machine_states"]


def test_missing_side_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = make(tmp_path / "a")
    with pytest.raises(UsageError, match="no Batsim output"):
        compare(str(a), str(tmp_path / "nothing"))
    assert main([str(a), str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "nothing" in err
    (tmp_path / "empty").mkdir()
    assert main([str(a), str(tmp_path / "empty")]) == 2


def test_a_folder_of_several_runs_is_refused_with_their_prefixes(tmp_path: Path) -> None:
    """Never pick one run of several (not even out_*): the wrong one would compare fine."""
    make(tmp_path / "a", prefix="x")
    make(tmp_path / "a", prefix="y")
    with pytest.raises(UsageError, match=r"2 runs \(prefixes x, y\); give one prefix"):
        locate(str(tmp_path / "a"))
    make(tmp_path / "a", prefix="out")
    with pytest.raises(UsageError, match=r"3 runs \(prefixes out, x, y\)"):
        locate(str(tmp_path / "a"))
    # one file of another run is enough to make the folder ambiguous
    (tmp_path / "b").mkdir()
    make(tmp_path / "b", prefix="out")
    (tmp_path / "b" / "old_machine_states.csv").write_text(MACHINES)
    with pytest.raises(UsageError, match=r"prefixes old, out"):
        locate(str(tmp_path / "b"))
    assert locate(str(tmp_path / "b" / "out"))["jobs"].endswith("out_jobs.csv")


def test_tolerance_never_hides_a_different_allocation_or_count(tmp_path: Path) -> None:
    """--tolerance is for times and energies: a machine 1 is not nearly a machine 0."""
    jobs = JOBS.replace("10.000060,1.000000,0,-1", "10.000060,1.000000,1,-1")
    machines = MACHINES.replace("10.0001,0,0,0,2,2", "10.0001,0,0,0,3,2")
    a, b = make(tmp_path / "a"), make(tmp_path / "b", jobs=jobs, machine_states=machines)
    result = compare(str(a), str(b), tolerance=10)
    assert {(d.file, d.column, d.a, d.b) for d in result.differences} == {
        ("jobs", "allocated_resources", "0", "1"), ("machine_states", "nb_idle", "2", "3")}
    drift = JOBS.replace("10.000060,1.000000,0,-1", "10.000061,1.000000,0,-1")
    c = make(tmp_path / "c", jobs=drift)
    assert compare(str(a), str(c), tolerance=1e-5).ok
    assert not compare(str(a), str(c)).ok


def test_main_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a, b = str(make(tmp_path / "a")), str(make(tmp_path / "b"))
    assert main([a, b]) == 0
    assert capsys.readouterr().out.strip() == "identical"
    changed = JOBS.replace("10.000060", "10.000061")
    c = str(make(tmp_path / "c", jobs=changed))
    assert main([a, c]) == 1
    assert "execution_time" in capsys.readouterr().out
    assert main([a, c, "--tolerance", "0.001"]) == 0
    assert main([a]) == 2
    assert main([a, b, "--tolerance", "x"]) == 2


def test_listing_is_capped(tmp_path: Path) -> None:
    lines = ["time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"]
    many_a = "\n".join(lines + [f"{i},0,0,0,4,0" for i in range(80)]) + "\n"
    many_b = "\n".join(lines + [f"{i},0,0,0,3,1" for i in range(80)]) + "\n"
    res = compare(
        str(make(tmp_path / "a", machine_states=many_a)),
        str(make(tmp_path / "b", machine_states=many_b)),
    )
    assert len(res.differences) == 160
    table = res.table()
    assert "... and 110 more differences" in table
    assert len(table.splitlines()) == 2 + 50 + 2


def _reference_expected() -> Path:
    folder = REFERENCE / "d2_energy_easy_nonet128" / "expected"
    if not folder.is_dir():
        pytest.skip(f"reference runs not available at {REFERENCE}")
    return folder


def test_reference_with_itself() -> None:
    folder = _reference_expected()
    res = compare(str(folder), str(folder / "out"))
    assert res.ok
    assert set(res.a) == {"jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy"}


def test_reference_with_modified_copy(tmp_path: Path) -> None:
    folder = _reference_expected()
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    jobs = copy / "out_jobs.csv"
    header, first, *rest = jobs.read_text().splitlines()
    cells = first.split(",")
    cells[9] = cells[9][:-1] + ("1" if cells[9][-1] != "1" else "2")  # execution_time
    jobs.write_text("\n".join([header, *reversed(rest), ",".join(cells)]) + "\n")
    res = compare(str(folder), str(copy))
    assert not res.ok
    assert [(d.where, d.column) for d in res.differences] == [(f"w0!{cells[0]}", "execution_time")]
