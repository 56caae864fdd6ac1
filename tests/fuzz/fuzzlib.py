"""Shared helpers of the fuzz tests: the only acceptable outcomes of any input are a normal
return or a `BatsimPyError` with a one-line message, within a few seconds."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from batsim_py.errors import BatsimPyError

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")

T = TypeVar("T")


class Hang(Exception):
    """Raised by the alarm: the code under test did not return in time."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with `Hang` instead of blocking the test run (main thread, POSIX only)."""

    def on_alarm(signum, frame):  # noqa: ANN001
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome(action: Callable[[], T], seconds: float = 5.0) -> T | BatsimPyError:
    """Run `action`: its result, or the project error it raised (checked to be one line).

    Any other exception (KeyError, RecursionError, Hang...) propagates and fails the test.
    """
    try:
        with time_limit(seconds):
            return action()
    except BatsimPyError as exc:
        message = str(exc)
        assert message, f"{type(exc).__name__} without a message"
        assert "\n" not in message, f"multi-line message: {message!r}"
        return exc
