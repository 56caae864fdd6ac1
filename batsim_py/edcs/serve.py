"""Run a Python EDC module, or a C-ABI EDC library, as a Batsim 5 process EDC:
`python -m batsim_py.edcs.serve EDC [ENDPOINT]` binds a ZeroMQ REP socket (default
tcp://*:28000) and answers batsim-py (or Batsim 5) until the reply to SimulationEndsEvent,
then exits. EDC is a module name, a path to a .py file, or a path to a .so library.

The wire (seed-systems §2.3): the init request is `u32 N` (native endian) + N bytes of init
data, answered with `u32 flags` + the hello message; then one message each way.
"""

from __future__ import annotations

import argparse
import struct
import sys
from typing import Any

import zmq


def _ends(codec_flags: int, data: bytes) -> bool:
    if codec_flags & 0x2:
        return b'"SimulationEndsEvent"' in data
    from batsim_py.protocol.batprotocol.binary import BinaryCodec

    msg = BinaryCodec().decode(data, "message")
    return any(e["event_type"] == "SimulationEndsEvent" for e in msg["events"])


def serve(edc_ref: str, endpoint: str) -> int:
    from batsim_py.decision.edc_transports import LibraryEdc, PythonEdc

    edc: Any = (LibraryEdc(edc_ref) if edc_ref.endswith(".so") or ".so." in edc_ref
                else PythonEdc(edc_ref))
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.bind(endpoint)
    try:
        raw = socket.recv()
        (n,) = struct.unpack("=I", raw[:4])
        flags, hello = edc.init(raw[4:4 + n])
        socket.send(struct.pack("=I", flags) + hello)
        while True:
            data = socket.recv()
            ending = _ends(flags, data)
            socket.send(edc.take_decisions(data, ending))
            if ending:
                break
    finally:
        edc.close()
        socket.close()
        context.term()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m batsim_py.edcs.serve",
                                     description="run a Python EDC as a ZeroMQ process EDC")
    parser.add_argument("edc", help="EDC module (batsim_py.edcs.fcfs), path/to/edc.py or "
                        "path/to/libedc.so")
    parser.add_argument("endpoint", nargs="?", default="tcp://*:28000",
                        help="ZeroMQ endpoint to bind (default tcp://*:28000)")
    args = parser.parse_args(argv)
    return serve(args.edc, args.endpoint)


if __name__ == "__main__":
    sys.exit(main())
