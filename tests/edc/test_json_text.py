"""flatbuffers' strict JSON form: our writer against flatc itself, our reader's checks."""

from __future__ import annotations

import json

import pytest

from batsim_py.errors import ProtocolError
from batsim_py.protocol.batprotocol.json_text import (
    JsonWriter,
    decode_message,
    encode_message,
    escape_string,
    format_double,
)
from edc.examples import EXAMPLES
from edc.helpers import FLATC, Recording, flatc_roundtrip, python_edc

needs_flatc = pytest.mark.skipif(FLATC is None, reason="flatc is not installed (Debian "
                                 "flatbuffers-compiler): the byte-exact checks need it")


@needs_flatc
def test_writer_prints_every_example_as_flatc_does(tmp_path):
    """flatc reads each schema example and prints it back (strict JSON, defaults): our
    pretty writer gives the same bytes, so field order, defaults, unions, enums, floats and
    escapes are flatc's."""
    names = list(EXAMPLES)
    ours = [JsonWriter(compact=False).message(EXAMPLES[n]) for n in names]
    theirs = flatc_roundtrip(ours, tmp_path)
    for name, a, b in zip(names, ours, theirs, strict=True):
        assert a == b, f"example {name}: ours\n{a}\nflatc\n{b}"


@needs_flatc
def test_numbers_and_strings_print_as_flatc(tmp_path):
    values = [0.0, 1.0, 0.1, 1 / 3, 2.5e-12, 1e-7, 1e20, 123456789.987654321, 1234.5678901234567,
              86400.000001, 5e-13, 4.9e-13, 0.30000000000000004]
    strings = ['a"b\\c', "tab\there\nnew\rret\bbs\fff", "\x01\x1f\x7f", "é€😀", "/slash"]
    msgs = [{"now": v, "events": [{"timestamp": v, "event_type": "RequestedCallEvent",
                                   "event": {"call_me_later_id": s}}]}
            for v, s in zip(values, strings * 3, strict=False)]
    ours = [JsonWriter(compact=False).message(m) for m in msgs]
    assert ours == flatc_roundtrip(ours, tmp_path)


def test_format_double_and_escape_by_hand():
    """flatbuffers' NumToString<double> is fixed notation with 12 decimals, zeros trimmed."""
    assert format_double(1 / 3) == "0.333333333333"
    assert format_double(100.0) == "100.0"
    assert format_double(1e20) == "100000000000000000000.0"
    assert format_double(1e-13) == "0.0"
    assert escape_string("é\n") == '"\\u00E9\\n"'
    assert escape_string("😀") == '"\\uD83D\\uDE00"'


def test_compact_form_is_the_pretty_one_without_newlines_and_indentation():
    """Batsim sends indent_step -1: the same printer without newlines nor indentation, a
    space still after each ':' (flatbuffers' JsonPrinter), and a trailing NUL."""
    example = EXAMPLES["execute_job"]
    compact = encode_message(example)
    assert compact.endswith(b"\0") and b"\n" not in compact
    pretty = JsonWriter(compact=False).message(example)
    flattened = "".join(line.lstrip(" ") for line in pretty.splitlines())
    assert compact[:-1].decode() == flattened
    assert compact.startswith(b'{"now": 3.0,"events": [{"timestamp": 3.0,"event_type": '
                              b'"ExecuteJobEvent","event": {"job_id": "w0!1"')


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_reader_reads_every_example(name):
    example = EXAMPLES[name]
    read = decode_message(encode_message(example))
    event = read["events"][0]
    assert event["event_type"] == example["events"][0]["event_type"]
    _assert_contains(event["event"], example["events"][0]["event"])


def _assert_contains(read, written):
    for key, value in written.items():
        if isinstance(value, dict):
            _assert_contains(read[key], value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for a, b in zip(read[key], value, strict=True):
                _assert_contains(a, b)
        else:
            assert read[key] == value, key


def test_reader_fills_defaults_and_null_scalars():
    read = decode_message(b'{"now":1,"events":[{"timestamp":1,"event_type":"JobSubmittedEvent",'
                          b'"event":{"job_id":"w0!1","job":{"profile_id":"p"}}}]}\0')
    job = read["events"][0]["event"]["job"]
    assert job["resource_request"] == 0 and job["walltime"] is None
    periodic = decode_message(json.dumps(EXAMPLES["call_me_later_periodic"]))
    when = periodic["events"][0]["event"]["when"]
    assert when["offset"] == 0 and when["time_unit"] == "Second"


def test_reader_accepts_with_and_without_trailing_nul():
    text = json.dumps(EXAMPLES["reject_job"]).encode()
    assert decode_message(text) == decode_message(text + b"\0")


@pytest.mark.parametrize("mutate, message", [
    (lambda e: e.update(scheduling_constraints={}), "unknown field 'scheduling_constraints'"),
    (lambda e: e.pop("job_id"), "required field 'job_id' is missing"),
    (lambda e: e.update(job_id=3), "expected a string"),
])
def test_reader_is_strict(mutate, message):
    example = json.loads(json.dumps(EXAMPLES["reject_job"]))
    mutate(example["events"][0]["event"])
    with pytest.raises(ProtocolError, match=message):
        decode_message(json.dumps(example))


def test_unknown_fields_dropped_when_asked():
    example = json.loads(json.dumps(EXAMPLES["edc_hello"]))
    example["events"][0]["event"]["requested_simulation_features"]["compute_sharing"] = True
    ignored: list[str] = []
    read = decode_message(json.dumps(example), strict=False, ignored=ignored)
    assert ignored == ["message.events[0].event(EDCHelloEvent)"
                       ".requested_simulation_features.compute_sharing"]
    assert "compute_sharing" not in read["events"][0]["event"]["requested_simulation_features"]


@pytest.mark.parametrize("bad, message", [
    ('"event_type":"NoSuchEvent"', "not a member of union Event"),
    ('"event_type":"RejectJobEvent","event":{"job_id":"a"},"x":1', "unknown field 'x'"),
])
def test_reader_refuses_bad_unions_and_fields(bad, message):
    text = '{"now":1,"events":[{"timestamp":1,' + bad + (
        ',"event":{}}]}' if "NoSuch" in bad else "}]}")
    with pytest.raises(ProtocolError, match=message):
        decode_message(text)


def _scenarios(tmp_path):
    """Runs whose messages cover every event batsim-py sends: jobs, kills (atomic and
    sequential progress), periodic and one-shot calls, host switches, probes, registration
    with acknowledgements, external events."""
    from edc.test_kills_and_events import WORKLOAD
    from edc.test_probes_and_refusals import _probe

    kills = tmp_path / "kills.json"
    kills.write_text(json.dumps(WORKLOAD))
    events = tmp_path / "ev.jsonl"
    events.write_text('{"timestamp": 3, "type": "generic", "data": "x\\u00e9"}\n')
    yield "batsim_py.edcs.fcfs", {}, {}
    yield "killer", {"workload": str(kills)}, {"kill_after": {"w0!0": 10, "w0!1": 55}}
    yield "periodic", {}, {"calls": [{"id": "p", "period": 100, "nb": 3}],
                           "oneshot_past": True}
    yield "switcher", {"platform": "platforms/energy8.xml", "energy": True}, {}
    yield "scripted", {"platform": "platforms/energy8.xml", "energy": True}, {
        "first": [_probe("NoResourcesAggregation"), {**_probe("Sum"), "event": {
            **_probe("Sum")["event"], "probe_id": "sum"}}]}
    yield "submitter", {}, {}
    yield "batsim_py.edcs.fcfs", {"events": str(events)}, {}


@needs_flatc
def test_every_message_batsim_py_sends_is_schema_valid_and_round_trips(tmp_path):
    """Every message batsim-py sent in runs covering all its events: flatc accepts it with
    the seed schema and prints it back exactly as our writer prints it."""
    from batsim_py.decision.edc_peer import EdcPeer, EdcSettings
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.sim.options import Options
    from edc.helpers import PROJECT

    texts = []
    for i, (edc, where, init) in enumerate(_scenarios(tmp_path)):
        recording = Recording(python_edc(edc))
        spec = RunSpec(platform=str(PROJECT / where.get("platform", "platforms/small4.xml")),
                       workloads=[where.get("workload",
                                            str(PROJECT / "workloads/delays_small.json"))],
                       options=Options(export_prefix=str(tmp_path / f"o{i}"),
                                       energy=where.get("energy", False),
                                       forward_unknown_events=True),
                       events=[where["events"]] if "events" in where else [])
        run_simulation(spec, EdcPeer(recording, EdcSettings(init_data=json.dumps(init).encode(),
                                                            arguments=["batsim-py", "-p"])))
        for data in recording.sent:
            assert data.endswith(b"\0") and b"\0" not in data[:-1]
            texts.append(data[:-1].decode())
    kinds = {e["event_type"] for t in texts for e in json.loads(t)["events"]}
    assert kinds == {
        "SimulationBeginsEvent", "JobSubmittedEvent", "JobCompletedEvent", "JobsKilledEvent",
        "RequestedCallEvent", "HostsTurnedOnOffEvent", "HostsPStateChangedEvent",
        "ProbeDataEmittedEvent", "AllStaticJobsHaveBeenSubmittedEvent",
        "AllStaticExternalEventsHaveBeenInjectedEvent", "ExternalEventOccurredEvent",
        "SimulationEndsEvent"}
    theirs = flatc_roundtrip(texts, tmp_path)
    for text, back in zip(texts, theirs, strict=True):
        assert JsonWriter(compact=False).message(decode_message(text)) == back
        assert "".join(line.lstrip(" ") for line in back.splitlines()) == text
