"""Run batsim-py in legacy-protocol mode against a scripted scheduler, in one process.

The simulator runs in the test's main thread (`batsim_py.cli.main`, as the command does), the
scheduler in a thread: a raw Unix-socket client that records every frame byte for byte and
answers each message with `script(text)` (a pybatsim-2016-like reply by default: `0:T|T:N`).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from batsim_py.cli import main

SIZE = struct.Struct("=I")
PROJECT = Path(__file__).resolve().parents[2]
PLATFORMS = PROJECT / "platforms"
WORKLOADS = PROJECT / "workloads"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nop(text: str) -> str:
    now = text.split("|")[0].split(":")[1]
    return f"0:{now}|{now}:N"


@dataclass
class Exchange:
    frames: list[bytes] = field(default_factory=list)  # every frame batsim-py sent, raw
    messages: list[str] = field(default_factory=list)  # their text
    replies: list[str] = field(default_factory=list)
    eof: bool = False  # the client read EOF after its last reply
    error: BaseException | None = None


def _read(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def connect_unix(path: str, done: threading.Event | None = None) -> socket.socket:
    """A connection to the simulator's Unix socket `path`, tried every 20 ms until it listens;
    the OSError after 20 s, or once `done` is set (the simulator ended before listening)."""
    deadline = time.monotonic() + 20
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline or (done and done.is_set()):
                raise
            time.sleep(0.02)


def events_of(text: str) -> list[tuple[float, str, str | None]]:
    """The events of a legacy message: (date, stamp, content or None) each."""
    out = []
    for part in text.split("|")[1:]:
        date, stamp, *rest = part.split(":", 2)
        out.append((float(date), stamp, rest[0] if rest else None))
    return out


def scheduler_thread(path: str, script: Callable[[str], str | None], out: Exchange,
                     listen: bool = False, done: threading.Event | None = None
                     ) -> threading.Thread:
    """A client answering with `script` (None: close the connection instead); it gives up
    connecting once `done` is set (the simulator ended before listening)."""

    def run() -> None:
        try:
            if listen:
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(path)
                server.listen(1)
                server.settimeout(20)
                sock, _ = server.accept()
                server.close()
            else:
                sock = connect_unix(path, done)
            sock.settimeout(60)
            with sock:
                while True:
                    header = _read(sock, 4)
                    if header is None:
                        out.eof = True
                        return
                    body = _read(sock, SIZE.unpack(header)[0])
                    assert body is not None
                    out.frames.append(header + body)
                    text = body.decode()
                    out.messages.append(text)
                    reply = script(text)
                    if reply is None:
                        return
                    out.replies.append(reply)
                    data = reply.encode()
                    sock.sendall(SIZE.pack(len(data)) + data)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            out.error = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def run_legacy(tmp_path: Path, workload: str, script: Callable[[str], str | None] = nop, *,
               version: int = 1, platform: str = "small4.xml", extra: Sequence[str] = (),
               prefix: str = "out") -> tuple[int, Exchange]:
    """batsim-py's exit code and what the scheduler saw."""
    path = str(tmp_path / f"sock{version}")
    out = Exchange()
    if version == 0 and os.path.exists(path):
        os.unlink(path)
    done = threading.Event()
    thread = scheduler_thread(path, script, out, listen=version == 0, done=done)
    if version == 0:
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.01)
    wl = workload if os.path.isabs(workload) else str(WORKLOADS / workload)
    rc = main(["-p", str(PLATFORMS / platform), "-w", wl, "--legacy-protocol", str(version),
               "-s", f"unix:{path}", "-e", str(tmp_path / prefix), "-q",
               "--scheduler-connect-timeout", "20", "--scheduler-timeout", "20", *extra])
    done.set()
    thread.join(30)
    assert not thread.is_alive(), "the scheduler thread did not end"
    return rc, out
