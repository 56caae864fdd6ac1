"""In-process schedulers' replies are read as Batsim reads them over ZeroMQ.

Over the wire a scheduler's times are printed with Python's repr and parsed by RapidJSON,
which can land an ulp or more away from the double printed (`rapidjson_number`). The
in-process peers apply the same conversion (`wire.read_back`) to every time of a reply, small
ones included: `now + 100 / 3` has 17 significant digits below 1e9 too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from batsim_py.decision import decisions as d
from batsim_py.decision.events import Event
from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.interface import DecisionProcess
from batsim_py.protocol.replies import decode_reply, encode_reply
from batsim_py.rapidjson_number import rapidjson_double


class Fixed(DecisionProcess):
    """Replies with the given reply, whatever it is asked."""

    def __init__(self) -> None:
        self.reply = d.Reply(0.0, ())

    def exchange(self, now: float, events: Sequence[Event]) -> d.Reply:
        return self.reply


def _samples(n: int) -> list[float]:
    rng = random.Random(20)
    values = [100.33333333333333, 25445.960993460798, 0.1 + 0.2, 1e11 + 0.1, 12.5, 0.0]
    values += [rng.uniform(0, 1e6) + rng.random() / 3 for _ in range(n)]
    values += [round(rng.uniform(0, 1e8), 6) for _ in range(n // 4)]
    return values


def test_in_process_replies_read_as_over_zeromq() -> None:
    """Fails when small values skip the conversion: about one in ten of these differs."""
    fixed = Fixed()
    peer = InProcess(fixed)
    values = _samples(2000)
    differing = sum(1 for x in values if rapidjson_double(repr(x)) != x)
    assert differing > 100  # (the case matters)
    for x in values:
        start = min(round(x, 6), x)
        fixed.reply = d.Reply(x + 1, (d.ExecuteJob(start, "w0!1", (0,)),
                                      d.CallMeLater(x, x + 1 / 3), d.RejectJob(x, "w0!2")))
        got = peer.exchange(start, [])
        wire = decode_reply(encode_reply(fixed.reply))  # what Batsim reads from the text
        assert got == wire, x


def test_pybatsim_peer_uses_the_same_conversion() -> None:
    from batsim_py.decision.pybatsim_peer import _reads_back
    from batsim_py.wire import read_back

    for x in _samples(500):
        assert _reads_back(x) == (rapidjson_double(repr(x)) == x)
        assert read_back(x) == rapidjson_double(repr(x))


def test_a_plain_reply_is_kept_as_it_is() -> None:
    fixed = Fixed()
    fixed.reply = d.Reply(12.5, (d.ExecuteJob(12.5, "w0!1", (0, 1)),))
    assert InProcess(fixed).exchange(12.5, []) is fixed.reply


def test_a_reply_at_the_request_time_still_reads_other_times() -> None:
    """The reply's `now` is the request's, yet a decision's own time (or a CALL_ME_LATER
    date) off the 6-decimal grid is still read as over ZeroMQ (`InProcess`'s fast path only
    keeps replies whose every time is the request's)."""
    fixed = Fixed()
    peer = InProcess(fixed)
    values = [x for x in _samples(2000) if rapidjson_double(repr(x)) != x and x < round(x, 6)]
    assert len(values) > 20  # (decisions may not be later than the reply's now)
    for x in values:
        t = round(x, 6)
        for decisions in ((d.ExecuteJob(t, "w0!1", (0,)), d.RejectJob(x, "w0!2")),
                          (d.CallMeLater(t, x + 10),)):
            fixed.reply = d.Reply(t, decisions)
            got = peer.exchange(x, [])
            assert got == decode_reply(encode_reply(fixed.reply)), x
            assert got != fixed.reply, x


def test_times_handed_to_a_scheduler_read_back_as_they_are() -> None:
    """What `InProcess`'s fast path relies on: a time from Batsim's message (`wire_time`),
    below 1e9, is read back by Batsim unchanged."""
    from batsim_py.wire import read_back, wire_time

    rng = random.Random(3)
    for _ in range(20000):
        x = rng.choice([rng.uniform(0, 1e9), rng.uniform(0, 1e4), rng.random(),
                        rng.uniform(0, 1e9) / 3])
        t = wire_time(x)
        assert read_back(t) == t == rapidjson_double(repr(t)), x


class Promising(Fixed):
    """Says its replies carry the request's time (as `easy` does), whatever it replies."""

    replies_at_request_time = True


def test_a_scheduler_replying_at_request_time_is_passed_through() -> None:
    """Its reply is returned as it is (the same object, unread); one that does not say so, or
    says so at a time `read_back` would change, is read as always."""
    promising, plain = Promising(), Fixed()
    for fixed in (promising, plain):
        fixed.reply = d.Reply(5.0, (d.ExecuteJob(5.0, "w0!1", (0,)),))
    assert InProcess(promising).exchange(5.0, []) is promising.reply
    big = 1e10 + 0.5  # beyond EXACT_READ_LIMIT: the reply's times are read back
    promising.reply = d.Reply(big, (d.ExecuteJob(big, "w0!1", (0,)),))
    got = InProcess(promising).exchange(big, [])
    assert got == decode_reply(encode_reply(promising.reply))
    assert InProcess(plain).at_request is False


def test_easy_keeps_its_promise() -> None:
    """`easy` declares replies_at_request_time: every reply of a run with submissions,
    completions and rejections has the request's `now` and stamps every decision with it."""
    from batsim_py.decision.events import JobCompleted, JobSubmitted, SimulationBegins
    from batsim_py.schedulers.easy import EasyBackfill
    from batsim_py.workload.model import Job

    easy = EasyBackfill()
    assert InProcess(easy).at_request is True
    rng = random.Random(5)
    begins = SimulationBegins(0.0, 8, 8, 0, False, False, {}, (), (), {}, {})
    replies = [(0.0, easy.exchange(0.0, [begins]))]
    running: list[str] = []
    now = 0.0
    for i in range(300):
        now = round(now + rng.random() * 50, 6)
        if running and rng.random() < 0.5:
            job_id = running.pop(rng.randrange(len(running)))
            events: list[Event] = [JobCompleted(now, job_id, "COMPLETED_SUCCESSFULLY", 0, ())]
        else:
            job = Job(f"w0!{i}", "w0", str(i), now, float(rng.choice([60, 600, -1])),
                      rng.choice([1, 2, 3, 8, 9]), "p", {})
            events = [JobSubmitted(now, job)]
        reply = easy.exchange(now, events)
        running += [x.job_id for x in reply.decisions if type(x) is d.ExecuteJob]
        replies.append((now, reply))
    kinds = {type(x) for _, r in replies for x in r.decisions}
    assert kinds == {d.ExecuteJob, d.RejectJob}
    for t, reply in replies:
        assert reply.now == t and all(x.timestamp == t for x in reply.decisions)
