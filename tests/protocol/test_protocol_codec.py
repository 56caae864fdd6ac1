"""Codec tests: byte-exact re-encoding of every recorded Batsim message, strict reply checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from batsim_py.decision.decisions import CallMeLater, ExecuteJob, KillJob, RejectJob, Reply
from batsim_py.decision.events import JobKilled, Notify, ProgressNode, RequestedCall
from batsim_py.errors import ProtocolError
from batsim_py.protocol import batsim_json
from batsim_py.protocol.codec import (
    decode_batsim_message,
    decode_reply,
    encode_batsim_message,
    encode_reply,
)

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"
# Each transcript line embeds the message text exactly as it travelled.
_LINE = re.compile(r'\{"seq": (\d+), "from": "(batsim|scheduler)", "msg": (.*)\}$')
_FLOAT = re.compile(r'(?<![\w."])-?\d+\.\d+(?:[eE][-+]?\d+)?')


def _transcripts() -> list:
    paths = sorted(REFERENCE.glob("*/transcript.jsonl")) if REFERENCE.is_dir() else []
    return [pytest.param(p, id=p.parent.name) for p in paths] or [
        pytest.param(None, id="no-reference")]


def _messages(path: Path):
    with path.open(encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line.rstrip("\n"))
            assert m, line[:80]
            yield m.group(2), m.group(3)


@pytest.mark.parametrize("path", _transcripts())
def test_batsim_messages_reencode_byte_for_byte(path: Path | None) -> None:
    if path is None:
        pytest.skip("reference transcripts not available")
    n = 0
    for sender, text in _messages(path):
        if sender != "batsim":
            continue
        now, events = decode_batsim_message(text)
        out = encode_batsim_message(now, events)
        assert json.loads(out) == json.loads(text)
        assert out == text, f"message {n}: first difference at {_diff(out, text)}"
        n += 1
    assert n > 0


@pytest.mark.parametrize("path", _transcripts())
def test_scheduler_replies_decode_and_round_trip(path: Path | None) -> None:
    if path is None:
        pytest.skip("reference transcripts not available")
    for sender, text in _messages(path):
        if sender == "scheduler":
            reply = decode_reply(text)
            # Batsim reads 17-digit numbers with RapidJSON's conversion, which may move them
            # by an ulp: the round trip is exact up to that.
            _assert_close(decode_reply(encode_reply(reply)), reply)


def _assert_close(a: object, b: object) -> None:
    import dataclasses
    import math

    if isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0), (a, b)
    elif dataclasses.is_dataclass(a) and type(a) is type(b):
        for f in dataclasses.fields(a):
            _assert_close(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_close(x, y)
    else:
        assert a == b


def _diff(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"{i}: ours {a[i - 40:i + 40]!r} / Batsim's {b[i - 40:i + 40]!r}"
    return f"length {len(a)} vs {len(b)}"


# ------------------------------------------------------------------ Batsim's number format


def test_floats_have_six_decimals_and_ints_stay_ints() -> None:
    text = batsim_json.dumps({"a": 1e9, "b": 0.5, "c": 3, "d": [1e-7, 2.0], "e": True,
                              "f": None, "g": 1e17})
    assert text == ('{"a":1000000000.000000,"b":0.500000,"c":3,"d":[0.000000,2.000000],'
                    '"e":true,"f":null,"g":100000000000000000.000000}')


def test_strings_escaped_like_rapidjson() -> None:
    assert batsim_json.string('a"b\\c\n\x01é/') == '"a\\"b\\\\c\\n\\u0001é/"'


def test_every_float_in_an_encoded_message_has_six_decimals() -> None:
    killed = JobKilled(5.0000305, ("w0!1",), {"w0!1": ProgressNode(
        "seq", current_task_index=1, current_task=ProgressNode("d", progress=0.25))})
    text = encode_batsim_message(5.1, [killed, RequestedCall(5.1), Notify(5.1, "x", data={
        "type": "x", "timestamp": 3.0, "n": 2})])
    floats = _FLOAT.findall(text)
    assert floats and all(len(f.split(".")[1]) == 6 for f in floats)
    assert '"current_task_index":1' in text and '"n":2' in text
    assert text.startswith('{"now":5.100000,"events":[{"timestamp":5.000031,"type":"JOB_KILLED",'
                           '"data":{"job_ids":["w0!1"],"job_progress":{"w0!1":{"profile_name":'
                           '"seq","current_task_index":1,"current_task":{"profile_name":"d",'
                           '"progress":0.250000}}}}}')


def test_notify_forms() -> None:
    text = encode_batsim_message(1.0, [
        Notify(1.0, "no_more_static_job_to_submit"),
        Notify(1.0, "event_machine_unavailable", resources=(0, 1, 3)),
    ])
    assert '{"type":"no_more_static_job_to_submit"}' in text
    assert '{"type":"event_machine_unavailable","resources":"0-1 3"}' in text
    now, events = decode_batsim_message(text)
    assert now == 1.0 and events[1].resources == (0, 1, 3)


# ------------------------------------------------------------------ scheduler replies


def _reply(*events: dict, now: float = 10.0) -> str:
    return json.dumps({"now": now, "events": list(events)})


def _ev(kind: str, data: dict, ts: float = 1.0) -> dict:
    return {"timestamp": ts, "type": kind, "data": data}


def test_decode_reply_typed() -> None:
    reply = decode_reply(_reply(
        _ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "3-4  0", "mapping": {"1": "0", "0": 2}}),
        _ev("REJECT_JOB", {"job_id": "w0!2"}),
        _ev("KILL_JOB", {"job_ids": ["w0!1"]}),
        _ev("CALL_ME_LATER", {"timestamp": 42}),
        _ev("ANSWER", {"estimate_waiting_time": {}}),
    ))
    assert reply == Reply(10.0, (
        ExecuteJob(1.0, "w0!1", (0, 3, 4), mapping=(2, 0)),
        RejectJob(1.0, "w0!2"),
        KillJob(1.0, ("w0!1",)),
        CallMeLater(1.0, 42.0),
    ))


@pytest.mark.parametrize(("events", "needle"), [
    ([_ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-a"})],
     "event 0 (EXECUTE_JOB): field 'alloc' is not an interval set ('0-a')"),
    ([_ev("REJECT_JOB", {"job_id": "w0!1"}),
      _ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0", "mapping": {"0": 0},
                          "storage_mapping": {"a": 1}})],
     "event 1 (EXECUTE_JOB): data must have 2 or 3 members"),
    ([_ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-1", "mapping": {"1": 0}})],
     "keys must be exactly 0..0"),
    ([_ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0", "mapping": {"0": 1}})],
     "outside the allocation"),
    ([_ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": ""})], "field 'alloc'"),
    ([_ev("KILL_JOB", {"job_ids": []})], "event 0 (KILL_JOB): field 'job_ids'"),
    ([_ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": 'a"b'})], "must not contain"),
    ([_ev("NOTIFY", {"type": "no_more_static_job_to_submit"})], "(NOTIFY): field 'type'"),
    ([_ev("SET_RESOURCE_STATE", {"resources": "0", "state": 3})], "field 'state'"),
    ([_ev("REJECT_JOB", {"job_id": "w0!1", "extra": 1})], "unexpected field 'extra'"),
    ([_ev("CALL_ME_LATER", {"timestamp": "5"})], "field 'timestamp' is not a number"),
    ([_ev("FOO", {})], "event 0: unknown type 'FOO'"),
    ([_ev("REJECT_JOB", {"job_id": "w0!1"}, ts=11.0)], "after the reply's now"),
    ([{"type": "REJECT_JOB", "timestamp": True, "data": {"job_id": "x"}}], "'timestamp'"),
    ([_ev("QUERY", {"requests": {"consumed_energy": {"x": 1}}})], "empty object"),
    ([_ev("CHANGE_JOB_STATE", {"job_id": "w0!1", "job_state": "DONE"})], "'job_state'"),
])
def test_decode_reply_rejects(events: list, needle: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_reply(_reply(*events))
    assert needle in str(info.value)
    assert str(info.value).startswith("scheduler reply")


@pytest.mark.parametrize("text", ["", "[]", '{"events": []}', '{"now": "1", "events": []}',
                                  '{"now": 1, "events": {}}', '{"now": 1}'])
def test_decode_reply_rejects_envelope(text: str) -> None:
    with pytest.raises(ProtocolError):
        decode_reply(text)


def test_additional_io_job_needs_its_fields() -> None:
    with pytest.raises(ProtocolError, match="profile_name"):
        decode_reply(_reply(_ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0",
                                                "additional_io_job": {}})))


def test_decode_batsim_message_errors_name_the_event() -> None:
    with pytest.raises(ProtocolError, match="event 0"):
        decode_batsim_message('{"now":1.0,"events":[{"timestamp":1.0,"type":"BOGUS","data":{}}]}')
    with pytest.raises(ProtocolError, match="'alloc'"):
        decode_batsim_message('{"now":1.0,"events":[{"timestamp":1.0,"type":"JOB_COMPLETED",'
                              '"data":{"job_id":"w0!1","job_state":"COMPLETED_KILLED",'
                              '"return_code":-2,"alloc":"x"}}]}')
