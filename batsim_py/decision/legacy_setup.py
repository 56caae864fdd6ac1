"""From the command line to a legacy-protocol peer: which transport, which side listens.

`-s` names the socket: `unix:PATH` (or a bare path, as 2016 Batsim's `-s FILE`; default
`unix:/tmp/bat_socket`, Batsim's), `zmq:ENDPOINT` or a `tcp://`/`ipc://` endpoint for version
3 over ZeroMQ. Version 0 connects to a listening scheduler, versions 1-3 listen.
"""

from __future__ import annotations

import os
from typing import Any

from batsim_py.errors import UsageError

JSON_DEFAULT = "tcp://localhost:28000"  # -s's default (the JSON mode's)
DEFAULT_SOCKET = "/tmp/bat_socket"  # noqa: S108 - Batsim's default, a user may pick another


def parse_endpoint(text: str | None, version: int) -> tuple[str, str]:
    """('unix', absolute path) or ('zmq', endpoint). The JSON mode's default `-s` means "not
    given" (write `zmq:tcp://localhost:28000` for that ZeroMQ endpoint)."""
    if text is None or text == JSON_DEFAULT:
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
    store = None
    env: dict[str, str] = {}
    if redis_wanted(args):
        if version < 2:
            raise UsageError(f"legacy protocol version {version} had no Redis (job metadata "
                             "came from the workload file): use version 2 or 3")
        # 2016 Batsim's prefix: the socket's absolute path; over ZeroMQ, --redis-prefix.
        prefix = where if kind == "unix" and args.redis_prefix == "default" \
            else args.redis_prefix
        store = make_redis_store(args, prefix, legacy=True)
        host, port = store.where.rsplit(":", 1)
        # A scheduler started by --scheduler-command learns where Redis is (2016 schedulers
        # took it from their own options: the shipped client reads these by default).
        env = {"BATSIM_REDIS_HOST": host, "BATSIM_REDIS_PORT": port,
               "BATSIM_REDIS_PREFIX": prefix}
    command = args.scheduler_command
    try:
        if kind == "zmq":
            transport: Any = ZmqTransport(where, reply_timeout, connect_timeout, command, env)
        elif version == 0:
            transport = UnixClient(where, reply_timeout, connect_timeout, command, env)
        else:
            transport = UnixServer(where, reply_timeout, connect_timeout, command, env)
    except BaseException:
        if store is not None:
            store.close()
        raise
    return LegacyPeer(codec, transport, honor_msg_time=args.legacy_honor_msg_time,
                      store=store)


def redis_wanted(args: Any) -> bool:
    return bool(args.enable_redis or args.redis_server)


def make_redis_store(args: Any, prefix: str, legacy: bool) -> Any:
    """The Redis store of a run: a private server (`--redis-server auto`) or the user's."""
    from batsim_py.decision.redis_store import RedisServer, RedisStore, import_redis

    import_redis()  # (before the private server starts: see import_redis)
    server = None
    host, port = args.redis_hostname, args.redis_port
    if args.redis_server is not None:
        if args.redis_server != "auto":
            raise UsageError(f"--redis-server must be 'auto' (start a private redis-server), "
                             f"not '{args.redis_server}'; to use a running server give "
                             "--enable-redis --redis-hostname HOST --redis-port PORT")
        server = RedisServer()
        host, port = server.host, server.port
    try:
        return RedisStore(host, port, prefix, legacy=legacy,
                          forward_profiles=args.forward_profiles_on_submission, server=server)
    except BaseException:
        if server is not None:
            server.stop()
        raise


def make_redis_json_peer(args: Any, inner: Any) -> Any:
    """Batsim 4's --enable-redis around the JSON mode's ZeroMQ peer."""
    from batsim_py.decision.redis_json_peer import RedisJsonPeer

    try:
        if args.record_transcript:
            raise UsageError("--record-transcript is not available with Redis (the messages "
                             "it records would carry the jobs); -v network-only prints them")
        store = make_redis_store(args, args.redis_prefix, legacy=False)
    except BaseException:
        inner.close()
        raise
    host, port = store.where.rsplit(":", 1)
    return RedisJsonPeer(inner, store, host, int(port))
