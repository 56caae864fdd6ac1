"""An external scheduler over ZeroMQ, speaking the Batsim 4 JSON protocol.

Like Batsim, we connect a REQ socket to the scheduler's endpoint (the scheduler binds a REP
socket), send one message per scheduler call and block for the reply. Unlike Batsim, we never
wait blindly (docs/reliability.md):
- the endpoint is checked first (an unknown host, an ipc socket in a missing folder: an error
  at once) and, if the scheduler is not there after a second, a notice names the endpoint
  awaited; nothing accepting the connection within the connect timeout (default 30 s) is an
  error;
- a socket monitor reports the connection's life: a scheduler that exits, crashes or is killed
  closes its connection and batsim-py stops at once; ZeroMQ heartbeats detect a scheduler (or
  its host) that vanished without closing anything;
- a connected scheduler may think for as long as the reply timeout (default 600 s, `inf` to
  wait forever), with a notice after 10 s of silence;
- with `--scheduler-command`, the scheduler's process is watched too (decision/child.py).
Each failure is a `SchedulerError` naming the endpoint and the message awaited; the engine then
stops and writes what it simulated (after SIMULATION_ENDS, the outputs are already written).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import socket
import time
from collections.abc import Sequence

import zmq
from zmq.utils.monitor import recv_monitor_message

from batsim_py.decision.child import ChildScheduler
from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.waiting import Notices, bound
from batsim_py.errors import SchedulerError
from batsim_py.protocol.codec import decode_reply, encode_batsim_message

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 30.0  # seconds for the scheduler to accept the connection
DEFAULT_REPLY_TIMEOUT = 600.0  # seconds for a connected scheduler to answer one message
HEARTBEAT_INTERVAL_MS = 2_000  # ZeroMQ PINGs; the scheduler's ZeroMQ answers them by itself
HEARTBEAT_TIMEOUT_MS = 30_000  # no traffic at all for this long: the peer is gone
NOTICE_AFTER = 10.0  # seconds of silence before saying what we wait for
CONNECT_NOTICE_AFTER = 1.0
SLICE_WITH_CHILD = 0.05  # how often the scheduler process is looked at while waiting

_GONE_EVENTS = {zmq.EVENT_DISCONNECTED, zmq.EVENT_CLOSED}
_HANDSHAKE_FAILED = {
    getattr(zmq, name) for name in ("EVENT_HANDSHAKE_FAILED_NO_DETAIL",
                                    "EVENT_HANDSHAKE_FAILED_PROTOCOL",
                                    "EVENT_HANDSHAKE_FAILED_AUTH") if hasattr(zmq, name)
}


class ZmqPeer(DecisionProcess):
    def __init__(self, endpoint: str, timeout: float | None = None,
                 connect_timeout: float | None = None, command: str | None = None) -> None:
        """`timeout`: seconds to wait for each reply; `connect_timeout`: for the scheduler to
        accept the connection (None: the defaults, inf: forever); `command`: start the
        scheduler as a child process (`--scheduler-command`)."""
        self.endpoint = endpoint
        self.timeout = DEFAULT_REPLY_TIMEOUT if timeout is None else timeout
        self.connect_timeout = (DEFAULT_CONNECT_TIMEOUT if connect_timeout is None
                                else connect_timeout)
        self.nb_exchanges = 0
        self._connected = False
        self._connected_at = 0.0
        self._waiting_since: float | None = None  # the first send: connection deadline's base
        self._gone = False
        self._ended = False  # the reply to SIMULATION_ENDS came
        self._closed = False
        self.child: ChildScheduler | None = None
        _check_endpoint(endpoint)
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_INTERVAL_MS)
        self._socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        self._monitor = self._socket.get_monitor_socket()
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise SchedulerError(
                f"cannot connect to the scheduler at '{endpoint}': {exc} "
                "(expected an endpoint like tcp://localhost:28000)"
            ) from None
        if command is not None:
            try:
                self.child = ChildScheduler(command)
            except BaseException:
                self.close()
                raise

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        return decode_reply(self.exchange_text(encode_batsim_message(now, events)))

    def exchange_text(self, message: str, ending: bool | None = None) -> str:
        """Send one message, return the scheduler's raw reply; `ending`: this is the last
        message (default: a Batsim message holding SIMULATION_ENDS; other protocols, such as
        the Flux envelope, say it themselves)."""
        n = self.nb_exchanges + 1
        if ending is None:
            ending = '"SIMULATION_ENDS"' in message
        what = f"message {n}{' (SIMULATION_ENDS)' if ending else ''}"
        self._read_monitor()
        if self._gone:
            self._fail(f"went away (connection lost) after answering message {n - 1}", ending)
        try:
            self._socket.send(message.encode("utf-8"))
            self._wait_reply(what, ending)
            raw = self._socket.recv()
        except zmq.ZMQError as exc:
            raise SchedulerError(
                f"connection to the scheduler at '{self.endpoint}' broke: {exc}"
            ) from None
        self.nb_exchanges = n
        if ending:
            self._ended = True
        return raw.decode("utf-8", errors="replace")

    def _wait_reply(self, what: str, ending: bool) -> None:
        """Return once the reply can be read; raise SchedulerError if it never will."""
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        poller.register(self._monitor, zmq.POLLIN)
        sent = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = sent
        notices: Notices | None = None
        phase = ""
        while True:
            now = time.monotonic()
            if not self._connected:
                deadline = self._waiting_since + self.connect_timeout
                if phase != "connect":
                    phase = "connect"
                    notices = Notices(self._waiting_since, CONNECT_NOTICE_AFTER,
                                      self.connect_timeout)
            else:
                deadline = max(sent, self._connected_at) + self.timeout
                if phase != "reply":
                    phase = "reply"
                    notices = Notices(max(sent, self._connected_at), NOTICE_AFTER, self.timeout)
            assert notices is not None
            if now >= deadline:
                if not self._connected:
                    raise SchedulerError(
                        f"no scheduler at '{self.endpoint}': nothing accepted the connection "
                        f"within {self.connect_timeout:g} s; start the scheduler (it binds a "
                        "ZeroMQ REP socket there), check -s, or wait longer with "
                        "--scheduler-connect-timeout SECONDS (inf: forever)"
                    )
                raise SchedulerError(
                    f"the scheduler at '{self.endpoint}' did not answer {what} within "
                    f"{self.timeout:g} s (it is connected but silent){_after_end(ending)}; "
                    "let it think longer with --scheduler-timeout SECONDS (inf: forever)"
                )
            if notices.due(now):
                if not self._connected:
                    notices.say(now, f"waiting for a scheduler at '{self.endpoint}' (it binds a "
                                "ZeroMQ REP socket there); "
                                + bound(self.connect_timeout, "--scheduler-connect-timeout"))
                else:
                    notices.say(now, f"still waiting for the scheduler at '{self.endpoint}' to "
                                f"answer {what}; " + bound(self.timeout, "--scheduler-timeout"))
            wake = min(deadline, notices.next)
            wait = max(0.0, wake - now)
            if self.child is not None:
                wait = min(wait, SLICE_WITH_CHILD)
            ready = dict(poller.poll(_ms(wait)))
            if self._socket in ready:
                return
            if self._monitor in ready:
                self._read_monitor()
                if self._gone:
                    self._fail(f"went away (connection lost) while batsim-py waited for the "
                               f"reply to {what}", ending)
            if self.child is not None and self.child.exit_code() is not None:
                self._read_monitor()
                if self._socket.poll(0):  # it answered just before exiting
                    return
                when = (f"while batsim-py waited at '{self.endpoint}' for the reply to {what}"
                        if self._connected else
                        f"before accepting the connection at '{self.endpoint}'")
                raise SchedulerError(f"{self.child.describe_exit()} {when}{_after_end(ending)}")

    def _read_monitor(self) -> None:
        """Apply every pending socket event to the connection state."""
        while self._monitor is not None and self._monitor.poll(0):
            event = recv_monitor_message(self._monitor)["event"]
            if event in _HANDSHAKE_FAILED:
                raise SchedulerError(
                    f"something listens at '{self.endpoint}' but it is not a ZeroMQ scheduler "
                    "(the ZeroMQ handshake failed); check -s"
                )
            if event in (zmq.EVENT_CONNECTED, zmq.EVENT_HANDSHAKE_SUCCEEDED):
                if not self._connected:
                    self._connected = True
                    self._connected_at = time.monotonic()
                    log.debug("connected to the scheduler at '%s'", self.endpoint)
            elif self._connected and event in _GONE_EVENTS:
                self._gone = True

    def _fail(self, how: str, ending: bool) -> None:
        if self.child is not None and self.child.exit_code() is None:
            try:  # it is exiting: say how it ended if it does so at once
                self.child.process.wait(0.5)
            except Exception:  # noqa: BLE001 - still running: say what we know
                pass
        cause = (f"; {self.child.describe_exit()}" if self.child is not None
                 and self.child.exit_code() is not None else
                 f" (it exited, crashed, was killed, or its ZeroMQ stopped answering heartbeats "
                 f"for {HEARTBEAT_TIMEOUT_MS // 1000} s)")
        raise SchedulerError(f"the scheduler at '{self.endpoint}' {how}{cause}"
                             f"{_after_end(ending)}")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.child is not None:
                self.child.stop(finished=self._ended)
        finally:
            if getattr(self, "_socket", None) is not None:
                try:
                    self._socket.disable_monitor()
                except zmq.ZMQError:
                    pass
                self._monitor.close(linger=0)
                self._socket.close(linger=0)
                self._context.term()


def _after_end(ending: bool) -> str:
    return ("; the simulation was complete and its outputs are written" if ending else "")


def _ms(seconds: float) -> int:
    return int(min(seconds, 3600.0) * 1000) if math.isfinite(seconds) else 3_600_000


def _check_endpoint(endpoint: str) -> None:
    """Refuse at once an endpoint that no scheduler can ever answer at."""
    scheme, sep, address = endpoint.partition("://")
    if not sep:
        return  # zmq's connect gives the error
    if scheme == "ipc" and not address.startswith("@"):  # '@': Linux's abstract namespace
        folder = os.path.dirname(address)
        if folder and not os.path.isdir(folder):
            raise SchedulerError(
                f"no scheduler can listen at '{endpoint}': the folder '{folder}' does not "
                "exist (the scheduler binds its socket file there); fix the path given to -s"
            )
    elif scheme == "tcp":
        host = address.rpartition(";")[2].rpartition(":")[0]
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not host or host == "*":
            return
        try:
            ipaddress.ip_address(host)
            return
        except ValueError:
            pass
        try:
            socket.getaddrinfo(host, None)
        except (socket.gaierror, UnicodeError) as exc:
            why = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
            raise SchedulerError(
                f"cannot resolve the host '{host}' of the scheduler endpoint '{endpoint}' "
                f"({why}); check the host name given to -s"
            ) from None
