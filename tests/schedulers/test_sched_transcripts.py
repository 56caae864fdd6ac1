"""The in-process schedulers answer every recorded Batsim request exactly as pybatsim did.

No engine involved: the k-th recorded Batsim message is fed to a fresh scheduler in order and
its reply must equal the k-th recorded pybatsim reply (same decisions, order, timestamps, now).
"""

from __future__ import annotations

import time

import pytest
from sched_transcripts import cases, messages, require, scheduler_of

from batsim_py.protocol.codec import decode_batsim_message, decode_reply, encode_reply
from batsim_py.schedulers import get_scheduler

PYBATSIM_NAMES = {"schedFcfs": "fcfs", "easyBackfill": "easy", "schedEasySjfBackfill": "easy_sjf",
                  "fillerSched": "filler"}


def _ours(case: str) -> str | None:
    info = scheduler_of(case)
    if info.get("kind") != "pybatsim":
        return None
    return PYBATSIM_NAMES.get(info.get("name", ""))


def _case_params() -> list:
    out = []
    for case in cases():
        name = _ours(case)
        if name is not None:
            big = case.startswith(("a2_", "b2_", "b3_"))
            out.append(pytest.param(case, name, id=case,
                                    marks=[pytest.mark.slow] if big and False else []))
    return out or [pytest.param(None, None, id="no-reference")]


@pytest.mark.parametrize(("case", "name"), _case_params())
def test_replies_match_pybatsim(case: str | None, name: str | None) -> None:
    if case is None:
        pytest.skip("reference transcripts not available")
    require(case)
    from batsim_py.schedulers import SCHEDULERS

    if name not in SCHEDULERS:
        pytest.skip(f"scheduler {name} not implemented")
    sched = get_scheduler(name, scheduler_of(case).get("options") or None)
    pending = None
    k = 0
    spent = 0.0
    for sender, text in messages(case):
        if sender == "batsim":
            pending = decode_batsim_message(text)
            continue
        assert pending is not None
        now, events = pending
        t0 = time.perf_counter()
        got = sched.exchange(now, events)
        spent += time.perf_counter() - t0
        want = decode_reply(text)
        # Compare what Batsim reads: our reply printed as pybatsim prints it, read back.
        got = decode_reply(encode_reply(got))
        assert got == want, f"{case}: reply {k} (to the Batsim message at now={now}) differs"
        pending = None
        k += 1
    assert k > 0
