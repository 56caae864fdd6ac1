"""Transports of the legacy protocol: a Unix STREAM socket (either side listening), or ZeroMQ.

- `UnixServer` (versions 1-3, Batsim's C++ era): batsim-py creates the socket file (removing a
  stale one), listens for one scheduler, accepts it before the first message.
- `UnixClient` (version 0, 2015): the scheduler listens; batsim-py connects, retrying until
  the connect timeout (the scheduler may start after batsim-py).
- `ZmqTransport` (version 3 in 2017): the text is a whole ZeroMQ frame; batsim-py's REQ socket
  connects to the scheduler's REP socket (the JSON mode's `ZmqPeer` does the work).
Each frame is `[u32 native size][text]`, sent with one `sendall` (protocol/legacy/framing.py).
As in the JSON mode (docs/reliability.md), nothing waits blindly: a scheduler that never
connects, stays silent past the reply timeout, closes the connection or (with
`--scheduler-command`) exits, is a `SchedulerError` naming the socket and the message awaited.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import stat
import time

from batsim_py.decision.child import ChildScheduler
from batsim_py.decision.waiting import Notices, bound
from batsim_py.errors import SchedulerError, UsageError
from batsim_py.protocol.legacy.framing import SIZE, decode_body, frame, frame_size

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_REPLY_TIMEOUT = 600.0
NOTICE_AFTER = 10.0
SLICE = 0.05  # how often a --scheduler-command process is looked at while waiting
RETRY = 0.1  # version 0: seconds between connection attempts


class LegacyTransport:
    """Send one message, return the reply's text; `finish` ends the conversation."""

    def exchange(self, text: str, what: str, ending: bool = False) -> str:
        """`what` names the message in errors; `ending`: it is the last one."""
        raise NotImplementedError

    def finish(self) -> None:
        """The last reply is in: close the connection (the scheduler reads EOF)."""

    def close(self) -> None:
        """Release everything (also after an error); called once."""


class _UnixStream(LegacyTransport):
    def __init__(self, path: str, timeout: float | None, connect_timeout: float | None,
                 command: str | None, env: dict[str, str] | None = None) -> None:
        self.path = path
        self._env = env
        self.timeout = DEFAULT_REPLY_TIMEOUT if timeout is None else timeout
        self.connect_timeout = (DEFAULT_CONNECT_TIMEOUT if connect_timeout is None
                                else connect_timeout)
        self.conn: socket.socket | None = None
        self.child: ChildScheduler | None = None
        self.ended = False
        self._ending = False
        self._command = command

    def start_child(self) -> None:
        if self._command is not None:
            self.child = ChildScheduler(self._command, self._env)

    def _connect(self, deadline: float) -> socket.socket:
        raise NotImplementedError

    def exchange(self, text: str, what: str, ending: bool = False) -> str:
        self._ending = ending
        if self.conn is None:
            self.conn = self._connect(time.monotonic() + self.connect_timeout)
        conn = self.conn
        try:
            conn.sendall(frame(text))
        except OSError as exc:
            self._gone(f"could not be sent {what} ({exc.strerror or exc})", what)
        start = time.monotonic()
        deadline = start + self.timeout
        notices = Notices(start, NOTICE_AFTER, self.timeout)
        size = frame_size(self._read(SIZE.size, deadline, what, notices))
        return decode_body(self._read(size, deadline, what, notices))

    def _read(self, n: int, deadline: float, what: str, notices: Notices) -> bytes:
        """Exactly n bytes (a frame may arrive in pieces), or a SchedulerError."""
        assert self.conn is not None
        chunks = bytearray()
        while len(chunks) < n:
            self._wait(self.conn, deadline, what, notices)
            try:
                chunk = self.conn.recv(n - len(chunks))
            except BlockingIOError:
                continue
            except OSError as exc:
                self._gone(f"broke the connection ({exc.strerror or exc})", what)
            if not chunk:
                self._gone("closed the connection", what)
            chunks += chunk
        return bytes(chunks)

    def _wait(self, sock: socket.socket, deadline: float, what: str, notices: Notices) -> None:
        """Until `sock` is readable; a SchedulerError at the deadline or if the child exits."""
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise SchedulerError(
                    f"the scheduler at '{self.path}' did not answer {what} within "
                    f"{self.timeout:g} s (it is connected but silent); let it think longer "
                    "with --scheduler-timeout SECONDS (inf: forever)")
            if notices.due(now):
                notices.say(now, f"still waiting for the scheduler at '{self.path}' to answer "
                            f"{what}; " + bound(self.timeout, "--scheduler-timeout"))
            wait = min(deadline - now, notices.next - now, 3600.0)
            if self.child is not None:
                wait = min(wait, SLICE)
            ready, _, _ = select.select([sock], [], [], max(0.0, wait))
            if ready:
                return
            self._check_child(f"while batsim-py waited at '{self.path}' for the reply to "
                              f"{what}")

    def _check_child(self, when: str) -> None:
        if self.child is not None and self.child.exit_code() is not None:
            raise SchedulerError(f"{self.child.describe_exit()} {when}")

    def _gone(self, how: str, what: str) -> None:
        if self.child is not None:
            try:
                self.child.process.wait(0.5)
            except Exception:  # noqa: BLE001 - still running
                pass
        cause = (f"; {self.child.describe_exit()}" if self.child is not None
                 and self.child.exit_code() is not None else " (it exited or crashed)")
        after = ("; the simulation was complete and its outputs are written"
                 if self._ending else "")
        raise SchedulerError(f"the scheduler at '{self.path}' {how} while batsim-py waited "
                             f"for the reply to {what}{cause}{after}")

    def finish(self) -> None:
        self.ended = True
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def close(self) -> None:
        try:
            if self.child is not None:
                self.child.stop(finished=self.ended)
        finally:
            if self.conn is not None:
                self.conn.close()
                self.conn = None


class UnixServer(_UnixStream):
    """batsim-py listens on `path` (versions 1-3)."""

    def __init__(self, path: str, timeout: float | None = None,
                 connect_timeout: float | None = None, command: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(path, timeout, connect_timeout, command, env)
        self.listener: socket.socket | None = None
        self._created = False
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise UsageError(f"cannot create the socket '{path}': the folder '{folder}' does "
                             "not exist; fix the path given to -s")
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise UsageError(f"cannot use the socket path '{path}': {exc.strerror}") from None
        if mode is not None:
            if not stat.S_ISSOCK(mode):
                raise UsageError(f"'{path}' exists and is not a socket: batsim-py will not "
                                 "remove it; give another path with -s unix:PATH")
            os.unlink(path)  # a stale socket, as Batsim removed it
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            sock.listen(1)
        except OSError as exc:
            sock.close()
            raise UsageError(f"cannot listen on the socket '{path}': "
                             f"{exc.strerror or exc}") from None
        self.listener = sock
        self._created = True
        try:
            self.start_child()
        except BaseException:
            self.close()
            raise

    def _connect(self, deadline: float) -> socket.socket:
        assert self.listener is not None
        notices = Notices(time.monotonic(), 1.0, self.connect_timeout)
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise SchedulerError(
                    f"no scheduler connected to '{self.path}' within "
                    f"{self.connect_timeout:g} s; start the scheduler (it connects to this "
                    "Unix socket), or wait longer with --scheduler-connect-timeout SECONDS "
                    "(inf: forever)")
            if notices.due(now):
                notices.say(now, f"waiting for a scheduler to connect to '{self.path}'; "
                            + bound(self.connect_timeout, "--scheduler-connect-timeout"))
            wait = min(deadline - now, notices.next - now, 3600.0)
            if self.child is not None:
                wait = min(wait, SLICE)
            ready, _, _ = select.select([self.listener], [], [], max(0.0, wait))
            if ready:
                conn, _ = self.listener.accept()
                log.debug("a scheduler connected to '%s'", self.path)
                return conn
            self._check_child(f"before connecting to '{self.path}'")

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.listener is not None:
                self.listener.close()
                self.listener = None
            if self._created:
                self._created = False
                try:
                    os.unlink(self.path)
                except OSError:
                    pass


class UnixClient(_UnixStream):
    """The scheduler listens on `path`; batsim-py connects, with retries (version 0)."""

    def __init__(self, path: str, timeout: float | None = None,
                 connect_timeout: float | None = None, command: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(path, timeout, connect_timeout, command, env)
        self.start_child()

    def _connect(self, deadline: float) -> socket.socket:
        notices = Notices(time.monotonic(), 1.0, self.connect_timeout)
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.path)
                return sock
            except OSError as exc:
                sock.close()
                why = exc.strerror or str(exc)
            now = time.monotonic()
            if now >= deadline:
                raise SchedulerError(
                    f"no scheduler listens on '{self.path}' (last attempt: {why}) after "
                    f"{self.connect_timeout:g} s; start the scheduler first (in version 0 it "
                    "is the socket's server), or wait longer with "
                    "--scheduler-connect-timeout SECONDS (inf: forever)")
            if notices.due(now):
                notices.say(now, f"waiting for a scheduler to listen on '{self.path}'; "
                            + bound(self.connect_timeout, "--scheduler-connect-timeout"))
            self._check_child(f"before listening on '{self.path}'")
            time.sleep(min(RETRY, max(0.0, deadline - now)))


class ZmqTransport(LegacyTransport):
    """Version 3 over ZeroMQ (2017): the text as one frame; batsim-py's REQ connects."""

    def __init__(self, endpoint: str, timeout: float | None = None,
                 connect_timeout: float | None = None, command: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        from batsim_py.decision.zmq_peer import ZmqPeer

        self.endpoint = endpoint
        self.peer = ZmqPeer(endpoint, timeout, connect_timeout)
        if command is not None:
            try:
                self.peer.child = ChildScheduler(command, env)
            except BaseException:
                self.peer.close()
                raise

    def exchange(self, text: str, what: str, ending: bool = False) -> str:
        return self.peer.exchange_text(text, ending=ending)

    def close(self) -> None:
        self.peer.close()
