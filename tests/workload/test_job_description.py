"""A job read from a file keeps only how to rebuild its JSON object (`JobShape` and its extra
values), not the object: `description` must give back exactly what Batsim forwards (the object
with its full id, same key order, same number types and values), whatever the object holds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py.protocol import batsim_json
from batsim_py.workload.jobs import parse_job
from batsim_py.workload.model import Job, JobShape

_NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=2**70),  # beyond 2**53: not a double's value
    st.floats(min_value=0.0, max_value=1e300, allow_nan=False, allow_infinity=False),
)
_EXTRA = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.text(max_size=5),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6,
)


@st.composite
def job_objects(draw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": draw(st.one_of(st.integers(0, 10**6),
                             st.from_regex(r"[a-z0-9_]{1,6}", fullmatch=True)
                             .filter(lambda s: "w0" not in s))),
        "subtime": draw(_NUMBERS),
        "res": draw(st.integers(0, 2**40)),
        "profile": draw(st.sampled_from(["p", "delay_60", "p2"])),
    }
    walltime = draw(st.one_of(st.none(), st.just(-1), st.just(-1.0),
                              st.integers(1, 2**60), st.floats(1e-3, 1e12)))
    if walltime is not None:
        fields["walltime"] = walltime
    for key in draw(st.lists(st.sampled_from(["extra", "deps", "user", "x"]), unique=True,
                             max_size=3)):
        fields[key] = draw(_EXTRA)
    keys = draw(st.permutations(list(fields)))
    return {k: fields[k] for k in keys}


def expected(obj: dict[str, Any], full_id: str) -> dict[str, Any]:
    out = dict(obj)
    out["id"] = full_id
    return out


@settings(max_examples=300, deadline=None)
@given(job_objects())
def test_description_is_the_object_read(obj: dict[str, Any]) -> None:
    job = parse_job(json.loads(json.dumps(obj)), workload="w0", source="wl.json", owned=True)
    want = expected(obj, job.id)
    got = job.description
    assert list(got) == list(want)
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    assert got == want
    assert batsim_json.dumps(got) == batsim_json.dumps(want)  # the bytes Batsim would send
    assert job.description is not got  # rebuilt, not kept


def test_jobs_of_one_layout_share_their_shape_and_keep_no_object() -> None:
    jobs = [parse_job({"id": i, "subtime": i * 1.5, "res": 2, "walltime": 60, "profile": "p"},
                      workload="w0", source="wl.json") for i in range(3)]
    assert all(type(j.json_form) is JobShape for j in jobs)
    assert jobs[0].json_form is jobs[1].json_form is jobs[2].json_form
    assert jobs[2].description == {"id": "w0!2", "subtime": 3.0, "res": 2, "walltime": 60,
                                   "profile": "p"}
    other = parse_job({"id": 7, "subtime": 0, "res": 1, "profile": "p", "user": "ann"},
                      workload="w0", source="wl.json")
    shape, extra = other.json_form
    assert type(shape) is JobShape and extra == ("ann",)


def test_a_job_given_its_object_keeps_it() -> None:
    obj = {"id": "w0!1", "subtime": 0, "res": 1, "profile": "p", "queue": "best-effort"}
    job = Job("w0!1", "w0", "1", 0.0, -1.0, 1, "p", obj)
    assert job.description is obj
