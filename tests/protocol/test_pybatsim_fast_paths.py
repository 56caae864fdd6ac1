"""The in-process pybatsim peer's fast paths give what the generic conversions give.

`_message` (JOB_SUBMITTED / JOB_COMPLETED handed over without `batsim_json.as_parsed`'s
generic walk), `_fast_reply` (pybatsim's usual replies read without `_plain` +
`decode_reply_object`) and `_Message` (a message pybatsim's logger drops is not turned into
text) are speed changes only: each must equal its generic counterpart value for value and
type for type, or step aside. The generic conversions are themselves checked against the
real text route in test_pybatsim_inprocess.py.
"""

from __future__ import annotations

import logging
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py import intervalset
from batsim_py.decision import pybatsim_peer as peer
from batsim_py.decision.events import JobCompleted, JobSubmitted, Notify
from batsim_py.protocol.batsim_events import event_object
from batsim_py.wire import read_back, wire_time
from batsim_py.workload.jobs import parse_job
from batsim_py.workload.model import DelayProfile, Job

times = st.floats(allow_nan=False, allow_infinity=False) | st.floats(0, 2e9) | st.integers(0, 10**6)
leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.floats(),
                   st.floats(-1e10, 1e10))
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def jobs(draw) -> Job:
    description = {"id": draw(st.text(max_size=4)), "subtime": draw(times),
                   "walltime": draw(times), "res": draw(st.integers(1, 64)),
                   "profile": "p"}
    description.update(draw(st.dictionaries(st.text(max_size=3), values, max_size=3)))
    return Job(id="w0!" + draw(st.text(max_size=3)), workload="w0", name="1", subtime=0.0,
               walltime=-1.0, res=1, profile="p", description=description)


events = st.one_of(
    st.builds(JobSubmitted, timestamp=times, job=jobs(),
              profile=st.none() | st.builds(lambda d: DelayProfile("p", 0, d, 1.0),
                                            st.dictionaries(st.text(max_size=3), values,
                                                            max_size=3))),
    st.builds(JobCompleted, timestamp=times, job_id=st.text(max_size=5),
              job_state=st.sampled_from(["COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED"]),
              return_code=st.integers(-2, 2),
              alloc=st.lists(st.integers(0, 99), min_size=1, max_size=5, unique=True)
              .map(lambda ids: tuple(sorted(ids)))),
    st.builds(Notify, timestamp=times, type=st.just("no_more_static_job_to_submit")),
)


@settings(max_examples=300, deadline=None)
@given(times, st.lists(events, max_size=4))
def test_the_message_is_the_generic_one(now, evs) -> None:
    try:
        generic = {"now": wire_time(now), "events": [event_object(e) for e in evs]}
    except Exception as exc:  # (non-finite floats: the text route's own reading fails)
        with pytest.raises(type(exc)):
            peer._message(now, evs)
        return
    fast = peer._message(now, evs)
    assert repr(fast) == repr(generic)  # values, key order and types (1 vs 1.0, True vs 1)


@st.composite
def read_jobs(draw) -> Job:
    """Jobs as a workload file gives them (`parse_job`: a `JobShape`, extra values kept or
    not), the form `_submitted` builds from: ints and floats for the numbers, keys in any
    order, extra keys of any JSON value."""
    obj = {"id": draw(st.integers(0, 99) | st.text("ab1", min_size=1, max_size=3)),
           "subtime": draw(st.integers(0, 10**6) | st.floats(0, 1e7)),
           "res": draw(st.integers(0, 64)), "profile": draw(st.sampled_from(["p", "delay"]))}
    if draw(st.booleans()):
        obj["walltime"] = draw(st.integers(1, 10**6) | st.floats(0.5, 1e7) | st.just(-1))
    obj.update(draw(st.dictionaries(st.text("xyz", min_size=1, max_size=2), values,
                                    max_size=2)))
    keys = draw(st.permutations(list(obj)))
    return parse_job({k: obj[k] for k in keys}, workload="w0", source="test")


@settings(max_examples=300, deadline=None)
@given(times, st.lists(st.builds(JobSubmitted, timestamp=times, job=read_jobs()), max_size=3))
def test_a_read_job_is_handed_over_as_the_generic_route_gives_it(now, evs) -> None:
    """`_submitted` builds a read job's object from its `JobShape` directly: the same values,
    types and key order as `event_object` (the job's rebuilt description, then as parsed)."""
    try:
        generic = {"now": wire_time(now), "events": [event_object(e) for e in evs]}
    except Exception as exc:  # (non-finite floats: the text route's own reading fails)
        with pytest.raises(type(exc)):
            peer._message(now, evs)
        return
    assert repr(peer._message(now, evs)) == repr(generic)


def test_read_jobs_and_completions_take_the_direct_route(monkeypatch) -> None:
    """The usual events are built without `event_object` (jobs with and without extra
    values), and a completion's allocation text is Batsim's canonical one, also when a
    range is met again or was decided as a non-canonical text ("3-3")."""
    monkeypatch.setattr(peer, "event_object", None)  # (any call would fail)
    plain = parse_job({"id": 1, "subtime": 2.5, "walltime": 10, "res": 4, "profile": "p"},
                      workload="w0", source="t")
    extra = parse_job({"id": "a", "res": 1, "x": {"y": "s"}, "subtime": 0, "profile": "p",
                       "z": 0.1234567}, workload="w0", source="t")
    msg = peer._message(2.5, [JobSubmitted(2.5, plain), JobSubmitted(2.5, extra)])
    assert [e["data"]["job"] for e in msg["events"]] == [
        {"id": "w0!1", "subtime": 2.5, "walltime": 10, "res": 4, "profile": "p"},
        {"id": "w0!a", "res": 1, "x": {"y": "s"}, "subtime": 0, "profile": "p", "z": 0.123457}]
    assert [type(v) for v in msg["events"][0]["data"]["job"].values()] == [str, float, int,
                                                                            int, str]
    ids = peer._fast_reply({"now": 1.0, "events": [
        {"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "3-3"}},
        {"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "3-3"}},
    ]}, 1.0).decisions
    assert [d.alloc for d in ids] == [range(3, 4), range(3, 4)]
    for alloc in (ids[0].alloc, ids[1].alloc, range(0, 128), (1, 2, 5)):
        done = peer._message(9.0, [JobCompleted(9.0, "w0!1", "COMPLETED_KILLED", 1, alloc)])
        assert done["events"][0]["data"]["alloc"] == intervalset.format(alloc)
    assert done["events"][0]["data"]["alloc"] == "1-2 5"


allocs = st.sampled_from(["0-3", "3", "0", "0012", "1-0", "-1", "a", "0-3 5", "3 0-2", "٣",
                          "1-1", " 2", "2 ", "0-999999", "0-1000000", "", "1--2", "+1",
                          "1_0", "0x1"]) | st.text(alphabet="0123456789- ", max_size=6)


@st.composite
def replies(draw) -> tuple[dict, float]:
    sent = wire_time(draw(st.floats(-1e10, 1e10) | st.floats(0, 1e6)))
    when = st.just(sent) | times | st.just(-sent) | st.booleans()
    now = draw(when)
    evs = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["EXECUTE_JOB", "EXECUTE_JOB", "REJECT_JOB"]))
        data = {"job_id": draw(st.text(max_size=3) | st.integers()), "alloc": draw(allocs)}
        if draw(st.integers(0, 5)) == 0:
            data[draw(st.sampled_from(["mapping", "x"]))] = {"0": 0}
        event = {"timestamp": draw(when), "type": kind, "data": data}
        if draw(st.integers(0, 9)) == 0:
            event["extra"] = 1
        evs.append(event)
    return {"now": now, "events": evs}, sent


@settings(max_examples=500, deadline=None)
@given(replies())
def test_the_fast_reply_is_the_generic_one_or_steps_aside(case) -> None:
    reply, sent = case
    fast = peer._fast_reply(reply, sent)
    if fast is None:
        return
    generic = peer._decode(reply, "pybatsim:x")  # must not raise where the fast path read
    assert repr(fast.now) == repr(generic.now)
    assert len(fast.decisions) == len(generic.decisions)
    for a, b in zip(fast.decisions, generic.decisions, strict=True):
        assert type(a) is type(b)
        assert repr(a.timestamp) == repr(b.timestamp) and a.job_id == b.job_id
        assert tuple(a.alloc) == tuple(b.alloc)  # (a range when contiguous, as easy.py's)
        assert (a.mapping, a.storage_mapping, a.additional_io_job) == (None, None, None)


def test_pybatsims_usual_replies_take_the_fast_path() -> None:
    sent = wire_time(1234.5678911)
    assert peer._fast_reply({"now": sent, "events": []}, sent).decisions == ()
    reply = {"now": sent, "events": [
        {"timestamp": sent, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "4-7"}},
        {"timestamp": sent, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "9"}},
        {"timestamp": sent, "type": "EXECUTE_JOB", "data": {"job_id": "w0!3", "alloc": "0 2"}},
    ]}
    decided = peer._fast_reply(reply, sent)
    assert [list(d.alloc) for d in decided.decisions] == [[4, 5, 6, 7], [9], [0, 2]]


@settings(max_examples=1000, deadline=None)
@given(st.floats(-1e9, 1e9, exclude_min=True, exclude_max=True))
def test_a_time_handed_over_reads_back_as_itself(t) -> None:
    """`_fast_reply` takes a number equal to the message's now without checking it."""
    v = round(t, 6)
    assert math.isfinite(v) and read_back(v) == v and round(v, 6) == v


@pytest.mark.parametrize("level, formatted", [(logging.INFO, True), (logging.WARNING, False)])
def test_a_message_is_text_only_when_pybatsim_logs_it(level, formatted, monkeypatch) -> None:
    logger = logging.getLogger("batsim.batsim")
    monkeypatch.setattr(logger, "level", level)
    logger.manager._clear_cache()
    try:
        msg = peer._message(3.5, [JobCompleted(3.5, "w0!1", "COMPLETED_SUCCESSFULLY", 0, (1, 2))])
        text = "Message Received from Batsim: {}".format(msg)  # noqa: UP032 (pybatsim's line)
        plain = "Message Received from Batsim: {}".format(dict(msg))  # noqa: UP032
        assert (text == plain) is formatted
        assert msg == dict(msg) and str(msg) == str(dict(msg)) and repr(msg) == repr(dict(msg))
    finally:
        logger.manager._clear_cache()


def test_a_reference_run_takes_the_fast_paths(tmp_path, monkeypatch) -> None:
    """easyBackfill on a reference case: every job event and every reply goes the fast way
    (the speed-up is not lost silently), and the outputs are still Batsim's."""
    pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed")
    from test_pybatsim_inprocess import run_inprocess  # (rootdir-less import: a sibling file)

    generic = {"events": [], "replies": 0}
    event_object_, decode = peer.event_object, peer._decode

    def counted_event(event):  # noqa: ANN001, ANN202
        generic["events"].append(type(event).__name__)
        return event_object_(event)

    def counted_decode(reply, ref):  # noqa: ANN001, ANN202
        generic["replies"] += 1
        return decode(reply, ref)

    monkeypatch.setattr(peer, "event_object", counted_event)
    monkeypatch.setattr(peer, "_decode", counted_decode)
    run_inprocess("b_delays_easy_small", tmp_path, monkeypatch)
    assert sorted(generic["events"]) == ["Notify", "SimulationBegins", "SimulationEnds"]
    assert generic["replies"] == 0


def _message_lines(lines) -> list[str]:
    keep = ("Message Received from Batsim: ", "Message Sent to Batsim: ")
    return [line[line.index(k):] for line in lines for k in keep if k in line]


def test_at_info_pybatsim_logs_every_message_as_over_zeromq(tmp_path, monkeypatch) -> None:
    """With pybatsim's logger at INFO (`pybatsim -v info`), its "Message Received/Sent" lines
    in-process are those it writes over ZeroMQ, character for character: the messages are
    the same, and the text sparing (`_Message`, `InProcessNetwork.send`) is off."""
    import shutil
    import subprocess
    import time

    pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed")
    if shutil.which("pybatsim") is None:
        pytest.skip("the pybatsim command is absent")
    from test_pybatsim_e2e import free_port  # (rootdir-less import: a sibling file)
    from test_pybatsim_inprocess import reference_args

    from batsim_py.cli import main

    scheduler, args = reference_args("b_delays_easy_small")
    (tmp_path / "zmq").mkdir()
    (tmp_path / "inproc").mkdir()
    port = free_port()
    with open(tmp_path / "pybatsim.log", "w") as log:
        proc = subprocess.Popen(["pybatsim", scheduler, "-s", f"tcp://127.0.0.1:{port}", "-t",
                                 "0", "-v", "info"], stdout=log, stderr=subprocess.STDOUT,
                                cwd=tmp_path / "zmq")
        try:
            time.sleep(0.3)
            assert main([*args, "-q", "-s", f"tcp://127.0.0.1:{port}", "--scheduler-timeout",
                         "60", "-e", str(tmp_path / "zmq" / "out")]) == 0
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    over_zmq = _message_lines((tmp_path / "pybatsim.log").read_text().splitlines())

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("batsim.batsim")
    handler = Keep()
    logger.addHandler(handler)
    monkeypatch.setattr(logger, "level", logging.INFO)
    logger.manager._clear_cache()
    try:
        monkeypatch.chdir(tmp_path / "inproc")
        assert main([*args, "-q", "--scheduler", f"pybatsim:{scheduler}",
                     "-e", str(tmp_path / "inproc" / "out")]) == 0
    finally:
        logger.removeHandler(handler)
        logger.manager._clear_cache()
    in_process = _message_lines(records)
    assert len(over_zmq) > 40 and any("EXECUTE_JOB" in line for line in over_zmq)
    assert in_process == over_zmq
