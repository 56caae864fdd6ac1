"""Binary flatbuffers: the codec against flatc, the generated classes against a fresh flatc
run, and binary EDCs giving the same outputs as JSON ones."""

from __future__ import annotations

import subprocess
import sys

import pytest

from batsim_py.errors import ProtocolError
from batsim_py.protocol.batprotocol.binary import BinaryCodec
from batsim_py.protocol.batprotocol.json_text import JsonWriter, decode_message, encode_message
from edc.examples import EXAMPLES
from edc.helpers import FLATC, PROJECT, SCHEMA, Recording, python_edc, run_edc

needs_flatc = pytest.mark.skipif(FLATC is None, reason="flatc is not installed (Debian "
                                 "flatbuffers-compiler)")


@needs_flatc
def test_generated_classes_are_flatc_output_of_the_schema():
    done = subprocess.run([sys.executable, "-m", "batsim_py.protocol.batprotocol.regenerate",
                           "--check"], cwd=PROJECT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_flatc
def test_our_binary_reads_as_flatc_reads_it_and_back(tmp_path):
    codec = BinaryCodec()
    names = sorted(EXAMPLES)
    for name in names:
        (tmp_path / f"{name}.bin").write_bytes(codec.encode(EXAMPLES[name]))
    subprocess.run([FLATC, "--json", "--strict-json", "--defaults-json", "--raw-binary", "-o",
                    str(tmp_path), str(SCHEMA), "--",
                    *[str(tmp_path / f"{n}.bin") for n in names]], check=True)
    for name in names:
        pretty = JsonWriter(compact=False).message(EXAMPLES[name])
        assert (tmp_path / f"{name}.json").read_text() == pretty, name
    # flatc's own binaries of the same messages read as the JSON reader reads them
    src = tmp_path / "src"
    src.mkdir()
    for name in names:
        (src / f"{name}.json").write_text(JsonWriter(compact=False).message(EXAMPLES[name]))
    out = tmp_path / "flatc"
    subprocess.run([FLATC, "--binary", "--strict-json", "-o", str(out), str(SCHEMA),
                    *[str(src / f"{n}.json") for n in names]], check=True)
    for name in names:
        expected = decode_message(encode_message(EXAMPLES[name]))
        assert codec.decode((out / f"{name}.bin").read_bytes()) == expected, name


def test_round_trip_without_flatc():
    codec = BinaryCodec()
    for name, example in EXAMPLES.items():
        assert codec.decode(codec.encode(example)) == decode_message(encode_message(example)), \
            name


def test_garbage_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        BinaryCodec().decode(b"\x04\x00\x00\x00\xff\xff\xff\xff\x00\x00")


@pytest.mark.parametrize("edc", ["batsim_py.edcs.easy", "batsim_py.edcs.fcfs"])
def test_binary_json_and_object_edcs_give_identical_outputs(tmp_path, edc):
    formats = (("json", b"{}"), ("binary", b'{"format_binary": true}'),
               ("objects", b'{"format_objects": true}'))
    for fmt, init in formats:
        recording = Recording(python_edc(edc))
        run_edc(recording, tmp_path / fmt, workload="workloads/mixed_small.json", init=init)
        first = recording.sent[0]
        kind = "objects" if isinstance(first, dict) else \
            "json" if first.startswith(b"{") else "binary"
        assert kind == fmt
    for fmt, _ in formats[1:]:
        for name in ("jobs.csv", "machine_states.csv"):
            assert (tmp_path / f"json_{name}").read_text() == \
                (tmp_path / f"{fmt}_{name}").read_text(), (fmt, name)
        schedule = [(tmp_path / f"{f}_schedule.csv").read_text().splitlines()
                    for f in ("json", fmt)]
        header = schedule[0][0].split(",")
        wall = {header.index(c) for c in header if c in ("simulation_time", "scheduling_time")}
        rows = [[v for i, v in enumerate(s[1].split(",")) if i not in wall] for s in schedule]
        assert rows[0] == rows[1], fmt


def test_only_in_process_python_edcs_may_exchange_objects(tmp_path):
    from batsim_py.errors import ProtocolError

    class Library:
        description = "a library"

        def init(self, data):
            return 0x4, b"{}"

        def close(self):
            pass

    with pytest.raises(ProtocolError, match="only Python EDCs run in batsim-py's process"):
        run_edc(Library(), tmp_path / "out")
