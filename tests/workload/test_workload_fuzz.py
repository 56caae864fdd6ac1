"""Whatever the input, loading either succeeds or raises a one-line WorkloadError."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py.errors import WorkloadError
from batsim_py.workload.profiles import PARSERS
from batsim_py.workload.reader import parse_workload

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "w0", "d", "seq", "w0!1", "x!1", "delay", "composed", "parallel"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
profile_types = st.sampled_from([*PARSERS, "bogus"])  # (every parser, and one unknown type)
profile_keys = st.sampled_from(
    [
        "delay",
        "seq",
        "repeat",
        "cpu",
        "com",
        "ret",
        "bytes_to_read",
        "bytes_to_write",
        "storage",
        "nb_bytes",
        "from",
        "to",
        "trace",
        "msg",
        "sleeptime",
        "regex",
        "success",
        "polltime",
    ]
)
profiles = st.dictionaries(
    st.sampled_from(["d", "seq", "p"]),
    st.builds(
        lambda t, extra: {"type": t, **extra},
        profile_types,
        st.dictionaries(profile_keys, json_values, max_size=4),
    ),
    max_size=3,
)
job_keys = st.sampled_from(["id", "subtime", "walltime", "res", "profile", "other"])
jobs = st.lists(st.dictionaries(job_keys, json_values, max_size=6), max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries({"nb_res": json_values, "profiles": profiles, "jobs": jobs}),
        st.fixed_dictionaries({"nb_res": st.just(4), "profiles": profiles, "jobs": jobs}),
    )
)
def test_no_raw_exception(data: Any) -> None:
    try:
        parse_workload(data, name="w0", path="/x/wl.json", source="wl.json")
    except WorkloadError as e:
        assert "\n" not in str(e)
        assert str(e).startswith("wl.json")
