"""CallMeLater with Batsim 5's semantics (§5.2 item 4, after Batsim 5's test_periodic.py and
call-later-oneshot): counts, last_periodic_call, spacing, stop, offsets, harmonic periods,
one-shots in the past."""

from __future__ import annotations

import json

import pytest

from batsim_py.errors import SchedulerError
from edc.helpers import Recording, python_edc, run_edc

PERIODS = [(10, 1093), (100, 179), (1000, 13), (10000, 3)]


def _calls(recording):
    """call id -> [(timestamp, last_periodic_call)] in the order batsim-py sent them."""
    calls: dict[str, list[tuple[float, bool]]] = {}
    for data in recording.sent:
        for item in json.loads(data.rstrip(b"\0"))["events"]:
            if item["event_type"] == "RequestedCallEvent":
                e = item["event"]
                calls.setdefault(e["call_me_later_id"], []).append(
                    (item["timestamp"], e["last_periodic_call"]))
    return calls


def test_periodic_counts_last_flag_spacing_and_stop(tmp_path):
    calls = [{"id": f"s{p}", "period": p, "nb": nb} for p, nb in PERIODS]
    calls += [{"id": f"ms{p}", "period": p * 1000, "nb": nb, "unit": "Millisecond"}
              for p, nb in PERIODS]
    calls += [{"id": "inf", "period": 10, "nb": None}]
    init = json.dumps({"calls": calls, "stop_after": {"inf": 50}}).encode()
    recording = Recording(python_edc("periodic"))
    run_edc(recording, tmp_path / "out", init=init)
    got = _calls(recording)
    for unit in ("s", "ms"):
        for period, nb in PERIODS:
            series = got[f"{unit}{period}"]
            assert len(series) == nb
            assert [last for _, last in series] == [False] * (nb - 1) + [True]
            times = [t for t, _ in series]
            # absolute multiples of the period, the first strictly after the request (t=0)
            assert abs(times[0] - period) < 1e-3
            assert all(abs(b - a - period) < 1e-3 for a, b in zip(times, times[1:], strict=False))
    assert len(got["inf"]) == 50 and not any(last for _, last in got["inf"])
    last_message = json.loads(recording.sent[-1].rstrip(b"\0"))
    assert [e["event_type"] for e in last_message["events"]] == ["SimulationEndsEvent"]


def test_a_stopped_call_id_can_be_reused(tmp_path):
    """Stop 'a' (period 10) after 3 calls, at once ask 'a' again with period 20, 2 calls:
    5 calls in all, the stopped call's pending trigger is not counted for the new one."""
    init = {"calls": [{"id": "a", "period": 10, "nb": None}], "stop_after": {"a": 3},
            "restart": {"a": {"period": 20, "nb": 2}}}
    recording = Recording(python_edc("periodic"))
    run_edc(recording, tmp_path / "out", init=json.dumps(init).encode())
    series = _calls(recording)["a"]
    assert [round(t, 3) for t, _ in series] == [10.0, 20.0, 30.0, 40.0, 60.0]
    assert [last for _, last in series] == [False, False, False, False, True]


@pytest.mark.parametrize("calls, message", [
    ([{"id": "a", "period": 10, "nb": 2, "offset": 5}], "offset must be 0"),
    ([{"id": "a", "period": 10, "nb": 2}, {"id": "b", "period": 15, "nb": 2}],
     "do not divide each other"),
    ([{"id": "a", "period": 10, "nb": 2}, {"id": "a", "period": 20, "nb": 2}],
     "already used by a live periodic entity"),
])
def test_refused_periodic_calls(tmp_path, calls, message):
    init = json.dumps({"calls": calls}).encode()
    with pytest.raises(SchedulerError, match=message):
        run_edc(python_edc("periodic"), tmp_path / "out", init=init)


def test_lift_v5_restrictions_accepts_offsets_and_other_periods(tmp_path):
    calls = [{"id": "a", "period": 10, "nb": 3, "offset": 5},
             {"id": "b", "period": 15, "nb": 2}]
    recording = Recording(python_edc("periodic"))
    run_edc(recording, tmp_path / "out", init=json.dumps({"calls": calls}).encode(),
            lift=True)
    got = _calls(recording)
    assert [round(t, 3) for t, _ in got["a"]] == [5.0, 15.0, 25.0]
    assert [round(t, 3) for t, _ in got["b"]] == [15.0, 30.0]


def test_one_shot_in_the_past_fires_at_once(tmp_path):
    recording = Recording(python_edc("periodic"))
    run_edc(recording, tmp_path / "out", init=b'{"oneshot_past": true}')
    asked = None
    for i in range(len(recording.sent)):
        reply = json.loads(recording.received[i + 1].rstrip(b"\0"))
        if any(e["event_type"] == "CallMeLaterEvent" for e in reply["events"]):
            asked = (i, reply["now"])
            break
    assert asked is not None
    following = json.loads(recording.sent[asked[0] + 1].rstrip(b"\0"))
    fired = [e for e in following["events"] if e["event_type"] == "RequestedCallEvent"]
    assert fired and fired[0]["event"]["call_me_later_id"] == "past"
    assert fired[0]["timestamp"] - asked[1] < 1e-3  # at once, not at t=1
