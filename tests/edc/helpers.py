"""Shared by the batprotocol tests: run a simulation with an EDC, record the wire."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from batsim_py.decision.edc_peer import EdcPeer, EdcSettings
from batsim_py.decision.edc_transports import PythonEdc
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
SCHEMA = PROJECT / "batsim_py" / "protocol" / "batprotocol" / "batprotocol.fbs"
EDCS = Path(__file__).resolve().parent / "edcs"
FLATC = shutil.which("flatc")


class Recording:
    """A transport that records every message both ways around another transport."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.description = inner.description
        self.sent: list[bytes] = []
        self.received: list[bytes] = []

    @property
    def accepts_objects(self) -> bool:
        return getattr(self.inner, "accepts_objects", False)

    @property
    def objects(self) -> bool:
        return getattr(self.inner, "objects", False)

    @objects.setter
    def objects(self, value: bool) -> None:
        self.inner.objects = value

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        flags, hello = self.inner.init(init_data)
        self.received.append(hello)
        return flags, hello

    def take_decisions(self, data: bytes, ending: bool) -> bytes:
        self.sent.append(data)
        reply = self.inner.take_decisions(data, ending)
        self.received.append(reply)
        return reply

    def close(self) -> None:
        self.inner.close()


def run_edc(transport: Any, prefix: Path, platform: str = "platforms/small4.xml",
            workload: str = "workloads/delays_small.json", init: bytes = b"{}",
            energy: bool = False, lift: bool = False, strict: bool = True) -> Any:
    spec = RunSpec(platform=str(PROJECT / platform), workloads=[str(PROJECT / workload)],
                   options=Options(export_prefix=str(prefix), energy=energy))
    peer = EdcPeer(transport, EdcSettings(init_data=init, lift_restrictions=lift,
                                          strict_fields=strict, arguments=["batsim-py"]))
    return run_simulation(spec, peer)


def python_edc(name: str) -> PythonEdc:
    """A test EDC of tests/edc/edcs by file name, or a shipped one by module."""
    path = EDCS / f"{name}.py"
    return PythonEdc(str(path) if path.exists() else name)


def flatc_roundtrip(texts: list[str], tmp: Path) -> list[str]:
    """flatc's own reading of JSON messages (strict, with the seed schema), printed back by
    flatc (strict JSON, defaults). Raises AssertionError naming the message flatc refuses."""
    src = tmp / "src"
    out_bin = tmp / "bin"
    out_json = tmp / "json"
    for d in (src, out_bin, out_json):
        d.mkdir(exist_ok=True)
    names = []
    for i, text in enumerate(texts):
        (src / f"m{i}.json").write_text(text, encoding="utf-8")
        names.append(f"m{i}")
    done = subprocess.run([FLATC, "--binary", "--strict-json", "-o", str(out_bin), str(SCHEMA),
                           *[str(src / f"{n}.json") for n in names]],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"flatc refused a message: {done.stderr}"
    subprocess.run([FLATC, "--json", "--strict-json", "--defaults-json", "--raw-binary",
                    "-o", str(out_json), str(SCHEMA), "--",
                    *[str(out_bin / f"{n}.bin") for n in names]],
                   check=True, capture_output=True, text=True)
    return [(out_json / f"{n}.json").read_text(encoding="utf-8") for n in names]
