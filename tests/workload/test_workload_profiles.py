"""Profile validation, one test group per profile type (research §3.4, §4)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload.model import (
    ComposedProfile,
    DataStagingProfile,
    DelayProfile,
    ParallelHomogeneousPFSProfile,
    ParallelHomogeneousProfile,
    ParallelHomogeneousTotalProfile,
    ParallelProfile,
    RecvProfile,
    SendProfile,
    TraceProfile,
)
from batsim_py.workload.profiles import PARSERS, parse_profile


def parse(obj: Any, name: str = "p"):
    return parse_profile(name, obj, source="dir/wl.json")


def error(obj: Any, name: str = "p") -> str:
    with pytest.raises(WorkloadError) as info:
        parse(obj, name)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"dir/wl.json: profile '{name}'")
    return msg


# common fields ---------------------------------------------------------------------------


def test_ret_default_and_value() -> None:
    assert parse({"type": "delay", "delay": 1}).ret == 0
    assert parse({"type": "delay", "delay": 1, "ret": 3}).ret == 3
    assert parse({"type": "delay", "delay": 1, "ret": -1}).ret == -1


@pytest.mark.parametrize("ret", [1.0, "1", True, None])
def test_ret_must_be_integer(ret: Any) -> None:
    assert "'ret' must be a JSON integer" in error({"type": "delay", "delay": 1, "ret": ret})


def test_description_is_original_object() -> None:
    obj = {"delay": 2, "type": "delay", "comment": "x"}
    p = parse(obj)
    assert p.description == obj
    assert list(p.description) == ["delay", "type", "comment"]
    assert p.name == "p" and p.type == "delay"


def test_missing_type() -> None:
    assert "missing mandatory field 'type'" in error({"delay": 1})


def test_type_not_string() -> None:
    assert "'type' must be a string" in error({"type": 3})


@pytest.mark.parametrize("kind", ["unknown", "Delay", "sequence", ""])
def test_unknown_type(kind: str) -> None:
    msg = error({"type": kind, "trace": "x"})
    assert f"unknown profile type '{kind}'" in msg and "delay" in msg


@pytest.mark.parametrize("obj", [[], "delay", 3, None])
def test_profile_not_object(obj: Any) -> None:
    assert "must be a JSON object" in error(obj)


def test_every_documented_type_has_a_parser() -> None:
    assert set(PARSERS) == {
        "delay",
        "composed",
        "parallel",
        "parallel_homogeneous",
        "parallel_homogeneous_total",
        "parallel_homogeneous_pfs",
        "data_staging",
        "usage_trace",
        "smpi",
        "send",
        "recv",
    }


# delay -----------------------------------------------------------------------------------


def test_delay() -> None:
    p = parse({"type": "delay", "delay": 2.5})
    assert isinstance(p, DelayProfile) and p.delay == 2.5


@pytest.mark.parametrize("delay", [0, 0.0, -1])
def test_delay_must_be_positive(delay: float) -> None:
    assert "'delay' must be > 0" in error({"type": "delay", "delay": delay})


@pytest.mark.parametrize("delay", ["1", None, True])
def test_delay_type(delay: Any) -> None:
    assert "'delay' must be a number" in error({"type": "delay", "delay": delay})


def test_delay_missing() -> None:
    assert "missing mandatory field 'delay'" in error({"type": "delay"})


# composed --------------------------------------------------------------------------------


def test_composed() -> None:
    p = parse({"type": "composed", "seq": ["a", "b", "a"]})
    assert isinstance(p, ComposedProfile)
    assert p.seq == ("a", "b", "a") and p.repeat == 1
    assert parse({"type": "composed", "seq": ["a"], "repeat": 4}).repeat == 4


@pytest.mark.parametrize("repeat", [0, -1])
def test_composed_repeat_positive(repeat: int) -> None:
    assert "'repeat' must be >= 1" in error({"type": "composed", "seq": ["a"], "repeat": repeat})


@pytest.mark.parametrize("repeat", [2.0, "2", True])
def test_composed_repeat_integer(repeat: Any) -> None:
    msg = error({"type": "composed", "seq": ["a"], "repeat": repeat})
    assert "'repeat' must be a JSON integer" in msg


@pytest.mark.parametrize("seq", [[], "a", None, {"a": 1}])
def test_composed_seq_non_empty_array(seq: Any) -> None:
    assert "'seq' must be a non-empty array" in error({"type": "composed", "seq": seq})


def test_composed_seq_missing() -> None:
    assert "got nothing" in error({"type": "composed"})


def test_composed_seq_items_are_names() -> None:
    assert "'seq'[1]" in error({"type": "composed", "seq": ["a", 2]})


# parallel --------------------------------------------------------------------------------


def test_parallel() -> None:
    p = parse({"type": "parallel", "cpu": [1e9, 2], "com": [0, 5, 5, 0]})
    assert isinstance(p, ParallelProfile)
    assert p.cpu == (1e9, 2.0) and p.com == (0.0, 5.0, 5.0, 0.0)


def test_parallel_com_size() -> None:
    msg = error({"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0]})
    assert "len(cpu)^2 = 4" in msg


def test_parallel_cpu_empty() -> None:
    assert "'cpu' must not be empty" in error({"type": "parallel", "cpu": [], "com": []})


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"type": "parallel", "cpu": [1, -1], "com": [0, 0, 0, 0]}, "'cpu'[1] must be >= 0"),
        ({"type": "parallel", "cpu": [1], "com": [-1]}, "'com'[0] must be >= 0"),
        ({"type": "parallel", "cpu": [1, "2"], "com": [0] * 4}, "'cpu'[1] must be a finite"),
        ({"type": "parallel", "cpu": 1, "com": [0]}, "'cpu' must be an array"),
        ({"type": "parallel", "com": [0]}, "missing mandatory field 'cpu'"),
        ({"type": "parallel", "cpu": [1]}, "missing mandatory field 'com'"),
    ],
)
def test_parallel_invalid(obj: dict[str, Any], needle: str) -> None:
    assert needle in error(obj)


# parallel_homogeneous(_total) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "cls"),
    [
        ("parallel_homogeneous", ParallelHomogeneousProfile),
        ("parallel_homogeneous_total", ParallelHomogeneousTotalProfile),
    ],
)
def test_homogeneous(kind: str, cls: type) -> None:
    p = parse({"type": kind, "cpu": 1e9, "com": 0})
    assert isinstance(p, cls) and p.cpu == 1e9 and p.com == 0.0 and p.type == kind
    assert "'cpu' must be >= 0" in error({"type": kind, "cpu": -1, "com": 0})
    assert "'com' must be >= 0" in error({"type": kind, "cpu": 1, "com": -1})
    assert "'cpu' must be a number" in error({"type": kind, "cpu": [1], "com": 0})
    assert "missing mandatory field 'com'" in error({"type": kind, "cpu": 1})


# parallel_homogeneous_pfs ------------------------------------------------------------------


def test_pfs() -> None:
    p = parse({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e6})
    assert isinstance(p, ParallelHomogeneousPFSProfile)
    assert (p.bytes_to_read, p.bytes_to_write, p.storage) == (1e6, 0.0, "pfs")
    p = parse({"type": "parallel_homogeneous_pfs", "bytes_to_write": 5, "storage": "nfs"})
    assert (p.bytes_to_read, p.bytes_to_write, p.storage) == (0.0, 5.0, "nfs")
    p = parse({"type": "parallel_homogeneous_pfs", "bytes_to_write": 5, "host": "legacy"})
    assert p.storage == "legacy"


def test_pfs_invalid() -> None:
    assert "at least one of" in error({"type": "parallel_homogeneous_pfs"})
    kind = "parallel_homogeneous_pfs"
    assert "must be >= 0" in error({"type": kind, "bytes_to_read": -1})
    assert "'storage' must be a string" in error({"type": kind, "bytes_to_read": 1, "storage": 1})


# data_staging ----------------------------------------------------------------------------


def test_data_staging() -> None:
    p = parse({"type": "data_staging", "nb_bytes": 10, "from": "a", "to": "b"})
    assert isinstance(p, DataStagingProfile)
    assert (p.nb_bytes, p.source, p.destination) == (10.0, "a", "b")


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"nb_bytes": 1, "to": "b"}, "missing mandatory field 'from'"),
        ({"nb_bytes": 1, "from": "a"}, "missing mandatory field 'to'"),
        ({"from": "a", "to": "b"}, "missing mandatory field 'nb_bytes'"),
        ({"nb_bytes": -1, "from": "a", "to": "b"}, "must be >= 0"),
        ({"nb_bytes": 1, "from": 1, "to": "b"}, "'from' must be a string"),
    ],
)
def test_data_staging_invalid(obj: dict[str, Any], needle: str) -> None:
    assert needle in error({"type": "data_staging", **obj})


# usage_trace / smpi ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["usage_trace", "smpi"])
def test_trace(kind: str) -> None:
    p = parse({"type": kind, "trace": "traces/t.txt"})
    assert isinstance(p, TraceProfile) and p.kind == kind
    assert p.trace == os.path.join("dir", "traces/t.txt")  # relative to the workload file
    assert parse({"type": kind, "trace": "/abs/t.txt"}).trace == "/abs/t.txt"
    assert "missing mandatory field 'trace'" in error({"type": kind})
    assert "'trace' must not be empty" in error({"type": kind, "trace": ""})


def test_trace_base_dir() -> None:
    p = parse_profile("p", {"type": "usage_trace", "trace": "t"}, source="x", base_dir="/b")
    assert p.trace == "/b/t"


# send / recv ----------------------------------------------------------------------------


def test_send() -> None:
    p = parse({"type": "send", "msg": {"a": 1}})
    assert isinstance(p, SendProfile) and p.msg == {"a": 1} and p.sleeptime == 1e-7
    assert parse({"type": "send", "msg": {}, "sleeptime": 2}).sleeptime == 2.0
    assert "'msg' must be a JSON object" in error({"type": "send", "msg": "hi"})
    assert "'msg' must be a JSON object" in error({"type": "send"})
    assert "'sleeptime' must be > 0" in error({"type": "send", "msg": {}, "sleeptime": 0})


def test_recv() -> None:
    p = parse({"type": "recv"})
    assert isinstance(p, RecvProfile)
    assert (p.regex, p.on_success, p.on_failure, p.on_timeout, p.polltime) == (
        ".*",
        "",
        "",
        "",
        0.005,
    )
    p = parse({"type": "recv", "regex": "^go$", "success": "a", "failure": "b", "timeout": "c"})
    assert (p.regex, p.on_success, p.on_failure, p.on_timeout) == ("^go$", "a", "b", "c")
    assert "'polltime' must be > 0" in error({"type": "recv", "polltime": 0})
    assert "'success' must be a string" in error({"type": "recv", "success": 1})
