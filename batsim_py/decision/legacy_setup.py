"""From the command line to a legacy-protocol peer: which transport, which side listens.

`-s` names the socket: `unix:PATH` (or a bare path, as 2016 Batsim's `-s FILE`; default
`unix:/tmp/bat_socket`, Batsim's), `zmq:ENDPOINT` or a `tcp://`/`ipc://` endpoint for version
3 over ZeroMQ. Version 0 connects to a listening scheduler, versions 1-3 listen.
"""

from __future__ import annotations

import os
from typing import Any

from batsim_py.errors import UsageError

DEFAULT_SOCKET = "/tmp/bat_socket"  # noqa: S108 - Batsim's default, a user may pick another


def parse_endpoint(text: str | None, version: int) -> tuple[str, str]:
    """('unix', absolute path) or ('zmq', endpoint)."""
    if text is None:
        return "unix", DEFAULT_SOCKET
    if text.startswith("zmq:"):
        kind, where = "zmq", text[4:]
    elif text.startswith(("tcp://", "ipc://", "inproc://")):
        kind, where = "zmq", text
    else:
        kind, where = "unix", text[5:] if text.startswith("unix:") else text
    if not where:
        raise UsageError(f"-s '{text}': give unix:PATH or zmq:ENDPOINT")
    if kind == "zmq" and version != 3:
        raise UsageError(f"-s '{text}': the legacy protocol went over ZeroMQ in version 3 only "
                         f"(2017); version {version} uses a Unix socket: -s unix:PATH")
    if kind == "unix":
        where = os.path.abspath(where)
    return kind, where


def make_legacy_peer(args: Any, reply_timeout: float | None,
                     connect_timeout: float | None) -> Any:
    from batsim_py.decision.legacy_peer import LegacyPeer
    from batsim_py.decision.legacy_transport import UnixClient, UnixServer, ZmqTransport
    from batsim_py.protocol.legacy.codec import LegacyCodec

    version = args.legacy_protocol
    if args.scheduler is not None:
        raise UsageError("--legacy-protocol talks to an external scheduler at -s: it cannot go "
                         "with --scheduler")
    if args.record_transcript:
        raise UsageError("--record-transcript records JSON-protocol messages: not available "
                         "with --legacy-protocol (-v network-only prints every legacy message)")
    codec = LegacyCodec(version, energy=args.energy,
                        failure_stamps=args.legacy_failure_stamps)
    kind, where = parse_endpoint(args.socket_endpoint, version)
    command = args.scheduler_command
    if kind == "zmq":
        transport: Any = ZmqTransport(where, reply_timeout, connect_timeout, command)
    elif version == 0:
        transport = UnixClient(where, reply_timeout, connect_timeout, command)
    else:
        transport = UnixServer(where, reply_timeout, connect_timeout, command)
    return LegacyPeer(codec, transport, honor_msg_time=args.legacy_honor_msg_time)
