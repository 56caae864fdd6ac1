"""The `batsim` command waits for its external scheduler forever, as Batsim 4.2.1 does, but
never in silence: it says every so often on stderr what it waits for, where, and how to bound
the wait; and a scheduler it started itself (--scheduler-command) that dies ends the run.

The notices' interval is shortened through BATSIM_PY_WAIT_NOTICE_EVERY; every test bounds its
own time (a reader thread with a deadline, then SIGINT / kill)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")
DEADLINE = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Batsim:
    """`python -m batsim_py.batsim_alias ARGS` with its stderr read line by line."""

    def __init__(self, tmp_path: Path, *args: str, every: float = 0.3) -> None:
        env = dict(os.environ, PYTHONPATH=str(PROJECT), BATSIM_PY_WAIT_NOTICE_EVERY=str(every))
        self.proc = subprocess.Popen([sys.executable, "-m", "batsim_py.batsim_alias", *args],
                                     cwd=tmp_path, env=env, stderr=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        assert self.proc.stderr is not None
        stream = self.proc.stderr
        self.reader = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.reader.start()

    def wait_for(self, text: str, count: int = 1) -> list[str]:
        deadline = time.monotonic() + DEADLINE
        while True:
            found = [line for line in list(self.lines) if text in line]
            if len(found) >= count:
                return found
            assert self.proc.poll() is None or time.monotonic() < deadline, self.text()
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.05)

    def finish(self, sig: int | None = signal.SIGINT) -> int:
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(DEADLINE)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
        self.reader.join(5)
        return code

    def text(self) -> str:
        return "".join(self.lines)


def test_waiting_for_a_connection_forever_is_said_again_and_again(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    run = Batsim(tmp_path, "-p", SMALL4, "-w", DELAYS, "-s", endpoint)
    try:
        notices = run.wait_for("waiting for a scheduler at", count=3)
    finally:
        code = run.finish()
    for line in notices:
        assert f"waiting for a scheduler at '{endpoint}' (it binds a ZeroMQ REP socket there); " \
               "waiting forever, as Batsim does (bound the wait with " \
               "--scheduler-connect-timeout SECONDS); " in line, line
        assert line.rstrip().endswith(" s so far"), line
    assert code == 130 and "interrupted by SIGINT" in run.text()


def test_a_silent_scheduler_is_said_again_and_again(tmp_path: Path) -> None:
    """A scheduler that takes the connection (a Unix socket, legacy protocol 1) and never
    answers: the notices name the socket, the message awaited and --scheduler-timeout."""
    path = str(tmp_path / "sock")
    run = Batsim(tmp_path, "-p", SMALL4, "-w", DELAYS, "--legacy-protocol", "1", "-s",
                 f"unix:{path}")
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                client.connect(path)
                break
            except OSError:
                assert time.monotonic() < deadline, run.text()
                time.sleep(0.05)
        notices = run.wait_for("still waiting for the scheduler", count=2)
    finally:
        code = run.finish()
        client.close()
    assert all(f"still waiting for the scheduler at '{path}' to answer message 1 " in line
               and "waiting forever, as Batsim does (bound the wait with --scheduler-timeout "
               "SECONDS)" in line for line in notices), notices
    assert code == 130


def test_a_dead_scheduler_we_started_ends_the_run(tmp_path: Path) -> None:
    """Waiting forever, but not for a scheduler process that is gone."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    command = f"{sys.executable} -c 'import sys, time; time.sleep(1.5); sys.exit(3)'"
    run = Batsim(tmp_path, "-p", SMALL4, "-w", DELAYS, "-s", endpoint,
                 "--scheduler-command", command)
    started = time.monotonic()
    code = run.finish(sig=None)
    assert code == 1 and time.monotonic() - started < 15, run.text()
    errors = [line for line in run.lines if line.startswith("batsim-py: error:")]
    assert len(errors) == 1 and "exited with code 3 before accepting the connection at " \
        f"'{endpoint}'" in errors[0], run.text()


def test_a_bounded_wait_says_its_bound(tmp_path: Path) -> None:
    """batsim-py's own defaults (30 s to connect) are said as such."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    env = dict(os.environ, PYTHONPATH=str(PROJECT), BATSIM_PY_WAIT_NOTICE_EVERY="0.3")
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", SMALL4, "-w", DELAYS,
                           "-s", endpoint, "--scheduler-connect-timeout", "2", "-e",
                           str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=DEADLINE)
    assert done.returncode == 1
    notices = [line for line in done.stderr.splitlines() if "waiting for a scheduler" in line]
    assert len(notices) >= 2, done.stderr
    assert all("giving up after 2 s (--scheduler-connect-timeout)" in n for n in notices)


def test_a_short_interval_brings_the_first_notice_forward(monkeypatch) -> None:
    """The first notice comes after 10 s (a reply) or 1 s (a connection), or after the
    interval when it is shorter (so that the tests above need not wait 10 s)."""
    from batsim_py.decision.waiting import Notices

    monkeypatch.delenv("BATSIM_PY_WAIT_NOTICE_EVERY", raising=False)
    default = Notices(100.0, 10.0, float("inf"))
    assert not default.due(109.9) and default.due(110.0) and default.next == 170.0
    monkeypatch.setenv("BATSIM_PY_WAIT_NOTICE_EVERY", "0.3")
    short = Notices(100.0, 10.0, float("inf"))
    assert not short.due(100.2) and short.due(100.3) and not short.due(100.5)
    monkeypatch.setenv("BATSIM_PY_WAIT_NOTICE_EVERY", "30")
    assert Notices(100.0, 1.0, 30.0).next == 101.0
