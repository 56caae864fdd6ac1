"""Scheduler replies, malformed or random: `decode_reply` returns decisions or raises a
one-line ProtocolError / NotSupportedError, never anything else, and never hangs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fuzzlib import outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsim_py.decision.decisions import Reply
from batsim_py.errors import BatsimPyError, ProtocolError
from batsim_py.protocol.codec import decode_reply, encode_reply

TYPES = ["EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "SET_RESOURCE_STATE",
         "SET_JOB_METADATA", "CHANGE_JOB_STATE", "REGISTER_JOB", "REGISTER_PROFILE", "NOTIFY",
         "QUERY", "ANSWER", "TO_JOB_MSG", "BOGUS", ""]
KEYS = ["job_id", "alloc", "mapping", "storage_mapping", "additional_io_job", "job_ids",
        "timestamp", "resources", "state", "metadata", "job_state", "job", "workload_name",
        "profile_name", "profile", "type", "requests", "msg", "extra"]
interval_texts = st.one_of(
    st.sampled_from(["0", "0-3", "1 3", "3-1", "-1", "a", "", " ", "0--2", "1-", "0-3 2-5",
                     "999999999999-999999999999", "0-99999999999", "0-1e3", "١", "+1",
                     "0x1", "1_000"]),
    st.text(alphabet="0123456789- ", max_size=12),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10), st.integers(),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
    st.sampled_from(["w0!1", "w0!2", "3", "RUNNING", "REJECTED", "registration_finished",
                     "continue_registration", "consumed_energy"]),
    interval_texts,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.one_of(st.sampled_from(KEYS + ["0", "1", "consumed_energy"]), st.text(max_size=3)),
        inner, max_size=4),
    max_leaves=8,
)
datas = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)
events = st.fixed_dictionaries(
    {"timestamp": st.one_of(st.floats(-1, 20, allow_nan=False), values),
     "type": st.one_of(st.sampled_from(TYPES), values), "data": st.one_of(datas, values)}
) | st.dictionaries(st.sampled_from(["timestamp", "type", "data"]), values, max_size=3)
replies = st.one_of(
    values,
    st.fixed_dictionaries({"now": st.one_of(st.floats(0, 20, allow_nan=False), values),
                           "events": st.one_of(st.lists(events, max_size=4), values)}),
    st.fixed_dictionaries({"now": st.just(20.0), "events": st.lists(events, max_size=4)}),
)


def decode(text: str | bytes) -> Reply | BatsimPyError:
    result = outcome(lambda: decode_reply(text), seconds=3.0)
    if isinstance(result, BatsimPyError):
        assert str(result).startswith("scheduler reply"), str(result)
    return result


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies)
@example({"now": 1, "events": [{"timestamp": 0, "type": "EXECUTE_JOB",
                                "data": {"job_id": "w0!1", "alloc": "0-99999999999"}}]})
@example({"now": 1, "events": [{"timestamp": 0, "type": "SET_RESOURCE_STATE",
                                "data": {"resources": "0-3", "state": "9" * 5000}}]})
def test_structured_replies(reply: Any) -> None:
    result = decode(json.dumps(reply))
    if isinstance(result, Reply):  # a valid reply survives a round trip through the writer
        assert isinstance(decode(encode_reply(result)), Reply)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=60), st.text(max_size=60)))
@example(b"\xff\xfe")
@example('{"now": 1e999, "events": []}')
@example('{"now": NaN, "events": []}')
@example('{"now": ' + "1" * 5000 + ', "events": []}')
@example("[" * 2000 + "]" * 2000)
@example('{"now": 0, "events": [' + "{" * 5000)
def test_raw_text(text: str | bytes) -> None:
    decode(text)


@pytest.mark.parametrize(("alloc", "pattern"), [
    ("0-99999999999", r"event 0 \(EXECUTE_JOB\): field 'alloc' is not an interval set "
                      r"\('0-99999999999'\): .*too many"),
    ("5-2", r"field 'alloc' is not an interval set \('5-2'\)"),
])
def test_regression_huge_interval_sets_are_refused_at_once(alloc: str, pattern: str) -> None:
    """Found by the fuzzer: '0-99999999999' used to build a set of 10^11 ids (a hang)."""
    text = json.dumps({"now": 1, "events": [{"timestamp": 0, "type": "EXECUTE_JOB",
                                             "data": {"job_id": "w0!1", "alloc": alloc}}]})
    result = outcome(lambda: decode_reply(text), seconds=2.0)
    assert isinstance(result, ProtocolError)
    assert re.search(pattern, str(result)), str(result)
