"""batprotocol's own example messages (docs/expected-output/*.json of the batprotocol-cpp copy
on branch Batprotocole of Saleh1806/Batsim_Test_1), when a folder of them is given in the
environment variable BATPROTOCOL_EXAMPLES: they are not shipped (third-party files).

Our reader must agree with flatc and the seed schema on each of them (accept the valid ones,
refuse the others), and print every valid one back exactly as flatc does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from batsim_py.errors import ProtocolError
from batsim_py.protocol.batprotocol.json_text import JsonWriter, decode_message
from edc.helpers import FLATC, SCHEMA

FOLDER = os.environ.get("BATPROTOCOL_EXAMPLES")
pytestmark = pytest.mark.skipif(
    not FOLDER or FLATC is None,
    reason="set BATPROTOCOL_EXAMPLES to a folder of batprotocol's expected-output/*.json "
           "(not shipped) and install flatc to run this check")


def test_reader_agrees_with_flatc_on_the_official_examples(tmp_path):
    files = sorted(Path(FOLDER).glob("*.json"))
    assert files
    valid = 0
    for path in files:
        out = tmp_path / path.stem
        done = subprocess.run([FLATC, "--binary", "--strict-json", "-o", str(out), str(SCHEMA),
                               str(path)], capture_output=True, text=True)
        flatc_ok = done.returncode == 0
        try:
            message = decode_message(path.read_bytes())
            ours_ok = True
        except ProtocolError:
            ours_ok = False
        assert ours_ok == flatc_ok, path.name
        if flatc_ok:
            valid += 1
            subprocess.run([FLATC, "--json", "--strict-json", "--defaults-json", "--raw-binary",
                            "-o", str(out), str(SCHEMA), "--", str(out / f"{path.stem}.bin")],
                           check=True, capture_output=True)
            back = (out / f"{path.stem}.json").read_text()
            assert JsonWriter(compact=False).message(message) == back, path.name
    print(f"{valid} of {len(files)} official examples are valid under the seed schema")
