"""`parse_jobs` (column by column for uniform workloads) gives exactly what `parse_job` gives
job by job: the same jobs (fields, number types, JSON objects) and the same first error."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload import jobs as jobs_module
from batsim_py.workload.jobs import parse_job, parse_jobs
from batsim_py.workload.model import _NAME_SLOT

FIELDS = ("id", "workload", "name", "subtime", "walltime", "res", "profile", "json_form")


def _job_by_job(raw: list[Any], workload: str) -> Any:
    try:
        return tuple(parse_job(obj, workload=workload, source="wl.json") for obj in raw)
    except WorkloadError as exc:
        return str(exc)


def _bulk(raw: list[Any], workload: str) -> Any:
    try:
        return parse_jobs(raw, workload=workload, source="wl.json")
    except WorkloadError as exc:
        return str(exc)


def _same(raw: list[Any], workload: str = "w0") -> None:
    expected, got = _job_by_job(copy.deepcopy(raw), workload), _bulk(raw, workload)
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
        return
    assert len(got) == len(expected)
    for a, b in zip(expected, got, strict=True):
        for name in FIELDS:
            x, y = getattr(a, name), getattr(b, name)
            assert x == y and type(x) is type(y), (name, x, y)
        # (a job read from a file keeps no name of its own: `id` gives it, see model.Job)
        assert _NAME_SLOT.__get__(a) == _NAME_SLOT.__get__(b)
        da, db = a.description, b.description
        assert list(da.items()) == list(db.items())
        assert [type(v) for v in da.values()] == [type(v) for v in db.values()]


def _uniform(n: int, rng: random.Random, **kinds: Any) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        obj: dict[str, Any] = {"id": i if kinds.get("int_ids", True) else f"job{i}",
                               "subtime": rng.randint(0, 10**6) if kinds.get("int_sub", True)
                               else rng.random() * 1e6}
        if kinds.get("walltime", True):
            obj["walltime"] = rng.choice([-1, 60, 3600]) if kinds.get("int_wall", True) \
                else rng.choice([-1.0, 60.5, 1e4])
        obj["res"] = rng.choice([1, 2, 300, 1000])
        obj["profile"] = f"p{rng.randint(0, 5)}"
        if kinds.get("extra"):
            obj["user"] = f"u{i % 3}"
        out.append(obj)
    return out


@pytest.mark.parametrize("kinds", [
    {}, {"int_ids": False}, {"int_sub": False}, {"int_wall": False}, {"walltime": False},
    {"extra": True}, {"int_ids": False, "int_sub": False, "extra": True},
])
def test_uniform_workloads_take_the_column_path(kinds: dict[str, Any]) -> None:
    raw = _uniform(300, random.Random(1), **kinds)
    assert jobs_module._uniform_jobs(copy.deepcopy(raw), "w0") is not None
    _same(raw)


# One job changed: the column path must give up (or agree) and the first error must be the
# job-by-job one.
MUTATIONS: list[tuple[str, Any]] = [
    ("subtime", 1.5), ("subtime", -0.0), ("subtime", float("inf")), ("subtime", float("nan")),
    ("subtime", 2**60), ("subtime", True), ("subtime", "3"), ("subtime", None),
    ("walltime", 0), ("walltime", -2), ("walltime", 0.0), ("walltime", 1.5), ("walltime", -1.0),
    ("walltime", float("inf")), ("walltime", 2**60), ("walltime", True),
    ("res", -1), ("res", 1.0), ("res", True), ("res", 2**70),
    ("profile", 3), ("profile", ""), ("id", "w0!7"), ("id", "a!b"), ("id", ""), ("id", True),
    ("id", 1.0), ("id", "x,y"), ("id", "w0"), ("id", 10**30), ("id", "é"),
    ("smpi_ranks_to_hosts_mapping", [0]), ("extra", 1),
    # unhashable values (the fuzz tests found a set() of walltimes taken before their types)
    ("walltime", [60]), ("subtime", [1]), ("res", [1]), ("profile", ["p"]), ("id", [1]),
    ("walltime", {"a": 1}),
]


@pytest.mark.parametrize("key,value", MUTATIONS)
def test_one_odd_job(key: str, value: Any) -> None:
    rng = random.Random(2)
    raw = _uniform(40, rng)
    victim = raw[17]
    if key == "extra":
        raw[17] = {"extra": value, **victim}  # other keys, other order
    else:
        victim[key] = value
    _same(raw)


def test_missing_keys_and_non_objects() -> None:
    rng = random.Random(3)
    for broken in ({"subtime": 0, "res": 1, "profile": "p"}, [1, 2], "job", None):
        raw: list[Any] = _uniform(10, rng)
        raw[4] = broken
        _same(raw)
    raw = _uniform(10, rng)
    for obj in raw:
        del obj["res"]
    _same(raw)
    _same([])


def test_workload_names() -> None:
    raw = _uniform(20, random.Random(4), int_ids=False)
    for workload in ("w0", "job1", "b", "w\0"):
        _same(raw, workload)


def test_blocks(monkeypatch) -> None:
    """A large workload is taken in blocks: an odd block goes job by job, the others not."""
    monkeypatch.setattr(jobs_module, "_BLOCK", 7)
    raw = _uniform(40, random.Random(5))
    raw[20]["subtime"] = 1.5  # the third block: job by job (float among ints), no error
    _same(raw)
    raw[30]["res"] = -1  # the fifth block: the first error
    _same(raw)
