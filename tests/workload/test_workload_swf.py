"""SWF trace conversion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.tools.swf2json import main as swf2json_main
from batsim_py.workload.reader import load_workload
from batsim_py.workload.swf import swf_to_json, swf_to_workload

#       id  sub wait run alloc cpu mem req reqtime reqmem st uid gid exe q part prev think
TRACE = """\
; Version: 2.2
; MaxProcs: 16
; MaxNodes: 8
1   0   5   100  4  -1 -1  4   200  -1 1 1 1 1 1 1 -1 -1
2   10  0   100  2  -1 -1  2   -1   -1 1 1 1 1 1 1 -1 -1
3   20  0   50.5 -1 -1 -1  8   60   -1 1 1 1 1 1 1 -1 -1
4   30  0   0    4  -1 -1  4   60   -1 5 1 1 1 1 1 -1 -1
5   40  0   10   4  -1 -1  4
6   50  0   10   x  -1 -1  4   60   -1 1 1 1 1 1 1 -1 -1

7   60  0   10   32 -1 -1  32  60   -1 1 1 1 1 1 1 -1 -1
1   70  0   10   1  -1 -1  1   60   -1 1 1 1 1 1 1 -1 -1
8   80  0   7    -1 -1 -1  -1  60   -1 1 1 1 1 1 1 -1 -1
"""


@pytest.fixture
def trace(tmp_path: Path) -> str:
    path = tmp_path / "trace.swf"
    path.write_text(TRACE)
    return str(path)


def test_conversion(trace: str) -> None:
    conv = swf_to_json(trace)
    data = conv.data
    assert data["nb_res"] == 16  # header MaxProcs
    assert [j["id"] for j in data["jobs"]] == [1, 2, 3]
    j1, j2, j3 = data["jobs"]
    assert j1 == {"id": 1, "subtime": 0, "res": 4, "profile": "delay_100", "walltime": 200}
    assert "walltime" not in j2  # requested time unknown
    assert j2["profile"] == "delay_100"  # shared with job 1
    assert j3["res"] == 8  # allocated unknown -> requested
    assert j3["profile"] == "delay_50.5"
    assert data["profiles"] == {
        "delay_100": {"type": "delay", "delay": 100},
        "delay_50.5": {"type": "delay", "delay": 50.5},
    }


def test_invalid_lines_are_reported_with_line_numbers(trace: str) -> None:
    conv = swf_to_json(trace)
    assert conv.skipped == 6
    text = "\n".join(conv.warnings)
    for lineno, needle in [
        (7, "run time 0"),
        (8, "fields"),
        (9, "not a number"),
        (11, "32 processors"),
        (12, "already used on line 4"),
        (13, "neither allocated nor requested"),
    ]:
        assert f"trace.swf:{lineno}: " in text and needle in text


def test_strict_aborts_on_first_invalid_line(trace: str) -> None:
    with pytest.raises(WorkloadError, match=r"trace\.swf:7: run time 0"):
        swf_to_json(trace, strict=True)


def test_options(trace: str) -> None:
    data = swf_to_json(trace, nb_res=64, profile_per_job=True, use_walltime=False).data
    assert [j["profile"] for j in data["jobs"]][:3] == ["job_1", "job_2", "job_3"]
    assert all("walltime" not in j for j in data["jobs"])
    assert 7 in [j["id"] for j in data["jobs"]]  # 32 processors now fit
    shifted = swf_to_json(trace, shift_subtimes=True).data
    assert shifted["jobs"][0]["subtime"] == 0


def test_use_requested_res(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text("1 0 0 10 4 -1 -1 2 -1 -1 1 1 1 1 1 1 -1 -1\n")
    assert swf_to_json(str(path)).data["jobs"][0]["res"] == 4
    assert swf_to_json(str(path), use_requested_res=True).data["jobs"][0]["res"] == 2
    assert swf_to_json(str(path)).data["nb_res"] == 4  # no header: largest job


def test_swf_to_workload(trace: str) -> None:
    w = swf_to_workload(trace, "w2")
    assert [j.id for j in w.jobs] == ["w2!1", "w2!2", "w2!3"]
    assert w.jobs[0].walltime == 200.0 and w.jobs[1].walltime == -1.0


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="not found"):
        swf_to_json(str(tmp_path / "none.swf"))


def test_tool_writes_loadable_json(trace: str, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert swf2json_main([trace, str(out), "-q"]) == 0
    data = json.loads(out.read_text())
    assert len(data["jobs"]) == 3
    assert len(load_workload(str(out), "w0").jobs) == 3
    assert swf2json_main([trace, str(out), "--strict"]) == 1
    assert swf2json_main([]) == 2
