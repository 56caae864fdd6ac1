"""Every example message of seed 001 (`shared/seeds/001_*`, Batsim's doc/proto_description.md of
2016-09) read by batsim-py's reader and, where batsim-py sends it, written byte for byte."""

from __future__ import annotations

import struct

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.errors import ProtocolError, UsageError
from batsim_py.protocol.legacy.codec import LegacyCodec, format_machines, parse_machines
from batsim_py.protocol.legacy.framing import frame, frame_size
from batsim_py.protocol.legacy.message import format_message, parse_message
from batsim_py.workload.model import Job


def job(job_id: str, res: int = 1) -> Job:
    workload, _, name = job_id.rpartition("!")
    return Job(job_id, workload, name, 0.0, -1.0, res, "p", {})


def begins(t: float = 0.0) -> ev.SimulationBegins:
    return ev.SimulationBegins(t, 4, 4, 0, False, True, {}, (), (), {"w0": "/w.json"}, {})


def encode(version: int, now: float, events: list[ev.Event], **kw: bool) -> str | None:
    return LegacyCodec(version, **kw).encode(now, events)


# ------------------------------------------------------------------ Batsim -> scheduler
def test_simulation_starts() -> None:
    assert encode(3, 0.0, [begins()]) == "3:0.000000|0.000000:A"


def test_simulation_ends_with_the_last_completion() -> None:
    jid = "workload_profiles/test_workload_profile.json!2"
    text = encode(3, 46.556835, [ev.JobCompleted(46.556835, jid, "COMPLETED_SUCCESSFULLY", 0,
                                                 (0,)), ev.SimulationEnds(46.556835)])
    assert text == ("3:46.556835|46.556835:C:workload_profiles/test_workload_profile.json!2"
                    "|46.556835:Z")


def test_static_job_submission_and_completion() -> None:
    # The seed's examples say version 0 with WLOAD!N ids (ids that came with version 2): the
    # events are produced exactly, the version digit is the one of the run.
    assert encode(2, 10.000015, [ev.JobSubmitted(10.000015, job("static!1"))]) == \
        "2:10.000015|10.000015:S:static!1"
    assert format_message(0, 10.000015, [(10.000015, "S", "static!1")]) == \
        "0:10.000015|10.000015:S:static!1"
    assert encode(2, 15.836694, [ev.JobCompleted(15.836694, "static!1", "COMPLETED_SUCCESSFULLY",
                                                 0, (0,))]) == "2:15.836694|15.836694:C:static!1"
    # `0:13|12:S:...` and `0:40.001320|25:C:...` print some times without decimals: Batsim
    # printed every time with %f, so does batsim-py (same events, same order).
    text = encode(2, 13.0, [ev.JobSubmitted(12.0, job("static!2")),
                            ev.JobSubmitted(12.5, job("static!3")),
                            ev.JobSubmitted(13.0, job("static!4"))])
    assert text == ("2:13.000000|12.000000:S:static!2|12.500000:S:static!3"
                    "|13.000000:S:static!4")
    text = encode(2, 40.001320, [ev.JobCompleted(25.0, "static!2", "COMPLETED_SUCCESSFULLY", 0,
                                                 (0,)),
                                 ev.JobCompleted(38.002565, "static!3", "COMPLETED_SUCCESSFULLY",
                                                 0, (0,))])
    assert text == "2:40.001320|25.000000:C:static!2|38.002565:C:static!3"


def test_bare_ids_in_versions_0_and_1() -> None:
    assert encode(0, 10.000015, [ev.JobSubmitted(10.000015, job("w0!1"))]) == \
        "0:10.000015|10.000015:S:1"


@pytest.mark.parametrize("text", [
    "0:13|12:S:static!2|12.5:S:static!3|13:S:static!4",
    "0:40.001320|25:C:static!2|38.002565:C:static!3",
    "0:2|2:N", "0:42|10:N|20:N|30:N|40:N", "1:50.5|50.5:p:0=2", "1:60.5|60.5:p:0-2=0",
    "1:142.000001|142.000001:N", "1:60.000001|60.000001:e:960000",
    "3:0.000000|0.000000:A",
    "3:46.556835|46.556835:C:workload_profiles/test_workload_profile.json!2|46.556835:Z",
])
def test_every_batsim_example_parses(text: str) -> None:
    events = parse_message(text, 0.0)
    rebuilt = text.split("|")[0] + "".join(
        f"|{e.text}" for e in events)
    assert rebuilt == text
    assert all(len(e.stamp) == 1 for e in events)


def test_nop_me_later_answer_and_energy() -> None:
    assert encode(1, 142.000001, [ev.RequestedCall(142.000001)]) == "1:142.000001|142.000001:N"
    # Batsim printed the energy with %Lf: the seed's `e:960000` lacks the decimals it printed.
    assert encode(1, 60.000001, [ev.Answer(60.000001, 960000.0)], energy=True) == \
        "1:60.000001|60.000001:e:960000.000000"


def test_pstate_acknowledgements() -> None:
    assert encode(1, 50.5, [ev.ResourceStateChanged(50.5, (0,), "2")]) == \
        "1:50.500000|50.500000:p:0=2"
    assert encode(1, 60.5, [ev.ResourceStateChanged(60.5, (0, 1, 2), "0")]) == \
        "1:60.500000|60.500000:p:0-2=0"
    assert format_message(1, 60.5, [(60.5, "p", "0-2=0")]) == "1:60.500000|60.500000:p:0-2=0"


def test_nothing_to_say_is_not_sent_before_version_3() -> None:
    assert encode(1, 0.0, [begins()]) is None
    assert encode(2, 5.0, [ev.Notify(5.0, "no_more_static_job_to_submit")]) is None
    assert encode(1, 5.0, [ev.SimulationEnds(5.0)]) is None


def test_failure_stamps_are_opt_in() -> None:
    down = ev.Notify(5.0, "event_machine_unavailable", resources=(1, 2, 3, 7))
    up = ev.Notify(9.0, "event_machine_available", resources=(1, 2, 3, 7))
    assert encode(3, 9.0, [down, up]) is None
    assert encode(3, 9.0, [down, up], failure_stamps=True) == \
        "3:9.000000|5.000000:F:1-3,7|9.000000:f:1-3,7"
    with pytest.raises(UsageError, match="version 3 only"):
        LegacyCodec(2, failure_stamps=True)


def test_framing_is_a_native_u32_size_then_the_text() -> None:
    text = "3:0.000000|0.000000:A"
    assert frame(text) == struct.pack("=I", len(text)) + text.encode()
    assert b"\0" not in frame(text)[4:]
    with pytest.raises(ProtocolError, match="size 0"):
        frame_size(struct.pack("=I", 0))


# ------------------------------------------------------------------ scheduler -> Batsim
def decode(text: str, request: float, version: int = 2, energy: bool = False,
           res: dict[str, int] | None = None) -> list[d.Decision]:
    codec = LegacyCodec(version, energy=energy)
    codec.res.update(res or {})
    return codec.decode(text, request)[0]


def test_static_job_allocation_keeps_the_host_order() -> None:
    out = decode("0:15.000015|15.000015:J:static!1=1,2,0,3;static!2=3", 15.000015)
    assert out == [d.ExecuteJob(15.000015, "static!1", (0, 1, 2, 3), (1, 2, 0, 3)),
                   d.ExecuteJob(15.000015, "static!2", (3,), None)]
    out = decode("0:45.00132|45.00132:J:static!4=3,1,2,0", 45.00132)
    assert out == [d.ExecuteJob(45.00132, "static!4", (0, 1, 2, 3), (3, 1, 2, 0))]


def test_nop() -> None:
    assert decode("0:2|2:N", 2.0) == []
    assert decode("0:42|10:N|20:N|30:N|40:N", 10.0) == []


def test_pstate_modification_requests() -> None:
    assert decode("1:50|50:P:0=2", 50.0, energy=True) == [d.SetResourceState(50.0, (0,), 2)]
    assert decode("1:70|60:P:0-2=0", 60.0, energy=True) == \
        [d.SetResourceState(60.0, (0, 1, 2), 0)]
    with pytest.raises(ProtocolError, match="needs the energy model"):
        decode("1:50|50:P:0=2", 50.0)


def test_rejection_nop_me_later_and_energy_query() -> None:
    assert decode("0:50|50:R:static!5", 50.0) == [d.RejectJob(50.0, "static!5")]
    assert decode("1:100|100:n:142", 100.0) == [d.CallMeLater(100.0, 142.0)]
    assert decode("1:60|60:E", 60.0, energy=True) == [d.Query(60.0, {"consumed_energy": {}})]


# ------------------------------------------------------------------ Batsim's reader rules
def test_separators_collapse_and_the_header_is_ignored() -> None:
    assert decode("9:999||10::n::142", 10.0) == [d.CallMeLater(10.0, 142.0)]
    assert decode("garbage header|10:N", 10.0) == []


@pytest.mark.parametrize("text,match", [
    ("0:5", "at least one event"),
    ("0:5|", "DATE:STAMP"),
    ("0:5|5", "DATE:STAMP"),
    ("0:5|5:NN", "one character"),
    ("0:5|5:X", "unknown stamp 'X'"),
    ("0:5|4.9:N", "before the request's time"),
    ("0:5|6:N|5.5:N", "before the previous event's date"),
    ("0:5|5abc:N", "not a decimal number"),
    ("0:5|5:N:x", "takes no content"),
    ("0:5|5:J", "needs a content"),
    ("0:5|5:n:5", "strictly later"),
    ("0:5|5:J:w0!1=0,0", "machine 0 is given twice"),
    ("0:5|5:J:w0!1=3-1", "empty"),
    ("0:5|5:J:w0!1", "JOB=MACHINES"),
    ("0:5|5:J:a!b!c=1", "not a job id"),
    ("0:5|5:J:w0!1=0-1", "requests 1 machine"),
    ("0:5|5:S:w0!1", "unknown stamp 'S'"),
])
def test_malformed_replies_name_the_event(text: str, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        decode(text, 5.0, res={"w0!1": 1})


def test_version_limits_stamps_and_ids() -> None:
    with pytest.raises(ProtocolError, match="unknown stamp 'n' for legacy protocol version 0"):
        decode("0:5|5:n:6", 5.0, version=0)
    assert decode("0:5|5:J:3=0", 5.0, version=1) == [d.ExecuteJob(5.0, "w0!3", (0,), None)]
    with pytest.raises(UsageError, match="one -w"):
        LegacyCodec(1).encode(0.0, [ev.SimulationBegins(0.0, 4, 4, 0, False, True, {}, (), (),
                                                        {"w0": "a", "w1": "b"}, {})])
    with pytest.raises(ProtocolError, match="separator"):
        LegacyCodec(2).encode(1.0, [ev.JobSubmitted(1.0, job("w0!a:b"))])


def test_machine_sets() -> None:
    assert format_machines([7, 0, 1, 2, 3]) == "0-3,7"
    assert parse_machines("1,2,0,3", "x") == [1, 2, 0, 3]
    assert parse_machines("0-2,,5", "x") == [0, 1, 2, 5]


# ------------------------------------------------------------------ the shipped client reads them
class Recorder:
    """A LegacyScheduler recording what the library's parser dispatched."""

    def __init__(self) -> None:
        from batsim_py.legacy_client.network import LegacyScheduler

        class Rec(LegacyScheduler):
            def __init__(self) -> None:
                super().__init__()
                self.seen: list[tuple] = []

            def on_simulation_begins(self) -> None:
                self.seen.append(("A",))

            def on_job_submission(self, job) -> None:
                self.seen.append(("S", job.id))

            def on_job_completion(self, job) -> None:
                self.seen.append(("C", job.id))

            def on_nop(self) -> None:
                self.seen.append(("N",))

            def on_machine_pstate_changed(self, machines, pstate) -> None:
                self.seen.append(("p", tuple(machines), pstate))

            def on_report_energy_consumed(self, joules) -> None:
                self.seen.append(("e", joules))

        self.scheduler = Rec()


class Source:
    def begin(self) -> int:
        return 4

    def job(self, job_id: str):
        from batsim_py.legacy_client.network import Job

        return Job(job_id, 1)


@pytest.mark.parametrize("text,expected", [
    ("3:0.000000|0.000000:A", [("A",)]),
    ("0:13|12:S:static!2|12.5:S:static!3|13:S:static!4",
     [("S", "static!2"), ("S", "static!3"), ("S", "static!4")]),
    ("0:40.001320|25:C:static!2|38.002565:C:static!3", [("C", "static!2"), ("C", "static!3")]),
    ("0:42|10:N|20:N|30:N|40:N", [("N",)] * 4),
    ("1:60.5|60.5:p:0-2=0", [("p", (0, 1, 2), 0)]),
    ("1:60.000001|60.000001:e:960000", [("e", 960000.0)]),
])
def test_the_client_library_reads_the_seed_examples(text: str, expected: list) -> None:
    from batsim_py.legacy_client.network import Job, handle

    rec = Recorder().scheduler
    for job_id in ("static!2", "static!3"):
        rec.jobs[job_id] = Job(job_id, 1)
    reply, ended = handle(rec, Source(), text)  # type: ignore[arg-type]
    assert rec.seen == expected and not ended
    now = text.split("|")[0].split(":")[1]
    assert reply == f"0:{float(now):f}|{float(now):f}:N"  # pybatsim-2016's nothing-to-do
