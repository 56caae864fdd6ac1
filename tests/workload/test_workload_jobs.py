"""Job validation and identifier building (research §3.3)."""

from __future__ import annotations

from typing import Any

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload.jobs import parse_job


def job(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"id": 1, "subtime": 0, "res": 1, "profile": "p"}
    obj.update(fields)
    return obj


def parse(obj: dict[str, Any], workload: str = "w0"):
    return parse_job(obj, workload=workload, source="wl.json")


def error(obj: dict[str, Any], workload: str = "w0") -> str:
    with pytest.raises(WorkloadError) as info:
        parse(obj, workload)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("wl.json: ")
    return msg


@pytest.mark.parametrize(
    ("raw", "workload", "full"),
    [
        (3, "w0", "w0!3"),
        ("3", "w0", "w0!3"),
        ("job_a", "w0", "w0!job_a"),
        ("w0!3", "w0", "w0!3"),  # kept as is (observed)
        ("w0!!3", "w0", "w0!3"),  # runs of '!' count as one
        ("w1!7", "w1", "w1!7"),
        (0, "w1", "w1!0"),
        (-4, "w0", "w0!-4"),
    ],
)
def test_id_normalisation(raw: Any, workload: str, full: str) -> None:
    j = parse(job(id=raw), workload)
    assert j.id == full
    assert j.workload == workload
    assert j.name == full.split("!")[1]
    assert j.description["id"] == full


@pytest.mark.parametrize(
    ("raw", "workload", "needle"),
    [
        ("w0_3", "w0", "contains the workload name"),  # contains w0, no '!'
        ("x!1", "w0", "w0!x!1"),  # prefixed, then three parts
        ("w0!5", "w1", "w1!w0!5"),  # a job of another workload
        ("3!", "w0", "w0!3!"),
        ("w0!a!b", "w0", "contains the workload name"),
        ("aw0b!2", "w0", "workload part 'aw0b'"),  # Batsim accepts but can never find it
        ("", "w0", "empty"),
        ("w0!", "w0", "empty"),
    ],
)
def test_id_quirks_abort(raw: str, workload: str, needle: str) -> None:
    assert needle in error(job(id=raw), workload)


@pytest.mark.parametrize("raw", [True, 1.0, 1.5, None, [1], {"a": 1}])
def test_id_type(raw: Any) -> None:
    assert "string or an integer" in error(job(id=raw))


def test_missing_id() -> None:
    obj = job()
    del obj["id"]
    assert "no 'id'" in error(obj)


def test_job_not_object() -> None:
    with pytest.raises(WorkloadError, match="must be a JSON object"):
        parse_job([1, 2], workload="w0", source="wl.json")  # type: ignore[arg-type]


def test_fields() -> None:
    j = parse(job(id="a", subtime=12.5, walltime=30, res=3, profile="q"))
    assert (j.id, j.workload, j.name) == ("w0!a", "w0", "a")
    assert j.subtime == 12.5 and isinstance(j.subtime, float)
    assert j.walltime == 30.0 and isinstance(j.walltime, float)
    assert j.res == 3
    assert j.profile == "q"


def test_walltime_absent_is_minus_one() -> None:
    assert parse(job()).walltime == -1.0


@pytest.mark.parametrize("walltime", [-1, -1.0, 0.001, 1, 1e17])
def test_walltime_valid(walltime: float) -> None:
    assert parse(job(walltime=walltime)).walltime == float(walltime)


@pytest.mark.parametrize("walltime", [0, 0.0, -0.5, -2, -1.5])
def test_walltime_invalid(walltime: float) -> None:
    msg = error(job(walltime=walltime))
    assert "job w0!1" in msg and "walltime" in msg and "-1" in msg


@pytest.mark.parametrize("walltime", ["10", None, True, [10]])
def test_walltime_type(walltime: Any) -> None:
    assert "'walltime' must be a number" in error(job(walltime=walltime))


def test_subtime_no_sign_check() -> None:
    assert parse(job(subtime=-5)).subtime == -5.0


@pytest.mark.parametrize("subtime", ["0", None, True])
def test_subtime_type(subtime: Any) -> None:
    assert "'subtime' must be a number" in error(job(subtime=subtime))


def test_subtime_missing() -> None:
    obj = job()
    del obj["subtime"]
    assert "missing mandatory field 'subtime'" in error(obj)


def test_res_zero_accepted() -> None:
    assert parse(job(res=0)).res == 0


@pytest.mark.parametrize("res", [1.0, 2.5, "2", True, None])
def test_res_must_be_integer(res: Any) -> None:
    assert "'res' must be a JSON integer" in error(job(res=res))


def test_res_negative() -> None:
    assert "'res' must be >= 0" in error(job(res=-1))


def test_res_missing() -> None:
    obj = job()
    del obj["res"]
    assert "missing mandatory field 'res'" in error(obj)


@pytest.mark.parametrize("profile", [1, None, ["p"]])
def test_profile_must_be_string(profile: Any) -> None:
    assert "'profile' must be a string" in error(job(profile=profile))


def test_rank_mapping() -> None:
    parse(job(res=2, smpi_ranks_to_hosts_mapping=[0, 1, 1, 0]))
    assert "[0, res=2)" in error(job(res=2, smpi_ranks_to_hosts_mapping=[0, 2]))
    assert "array of integers" in error(job(smpi_ranks_to_hosts_mapping={"0": 0}))


def test_description_key_order_and_types() -> None:
    obj = {"subtime": 1, "walltime": 2.0, "id": 5, "extra": {"id": 9}, "res": 1, "profile": "p"}
    j = parse(obj)
    assert list(j.description) == ["subtime", "walltime", "id", "extra", "res", "profile"]
    assert j.description["id"] == "w0!5"
    assert type(j.description["subtime"]) is int
    assert type(j.description["walltime"]) is float
    assert j.description["extra"] == {"id": 9}  # nested ids are left alone (Batsim: regex quirk)
    assert obj["id"] == 5  # the input is not modified
