"""An external scheduler started by batsim-py itself (`--scheduler-command`).

Knowing the scheduler's process lets batsim-py see at once that it exited (before binding its
socket, or in the middle of a run) instead of waiting for a timeout, and stop it when the run
is over. The command is split like a shell line (`shlex`) and run without a shell, in its own
session, so a Ctrl-C in the terminal reaches batsim-py only: batsim-py writes its outputs, then
stops the scheduler itself; on Linux the scheduler also gets SIGTERM if batsim-py is killed
(SIGKILL included). Its stdout and stderr are the terminal's: the user sees its messages (and
its traceback if it crashes).
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
from collections.abc import Callable

from batsim_py.errors import UsageError

log = logging.getLogger(__name__)

END_GRACE = 5.0  # seconds a scheduler gets to exit by itself after SIMULATION_ENDS
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when batsim-py stops it


class ChildScheduler:
    def __init__(self, command: str, env: dict[str, str] | None = None) -> None:
        """`env`: variables added to batsim-py's environment for the scheduler."""
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--scheduler-command {command!r}: {exc}") from None
        if not argv:
            raise UsageError("--scheduler-command is empty: give the command that starts the "
                             "scheduler, e.g. 'python my_scheduler.py'")
        self.command = command
        try:
            self.process = subprocess.Popen(argv, start_new_session=True,
                                            stdin=subprocess.DEVNULL,
                                            env={**os.environ, **env} if env else None,
                                            preexec_fn=_death_signal())
        except OSError as exc:
            raise UsageError(
                f"--scheduler-command: cannot start '{argv[0]}' ({exc.strerror}); check the "
                "command"
            ) from None
        log.info("started the scheduler (pid %d): %s", self.process.pid, command)

    def exit_code(self) -> int | None:
        """The scheduler's exit code once it exited (negative: killed by that signal)."""
        return self.process.poll()

    def describe_exit(self) -> str:
        code = self.process.returncode
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return f"the scheduler started by --scheduler-command (pid {self.process.pid}) {how}"

    def stop(self, finished: bool) -> None:
        """Wait for a scheduler that got SIMULATION_ENDS to exit (`finished`), else stop it."""
        if finished:
            try:
                self.process.wait(END_GRACE)
            except subprocess.TimeoutExpired:
                log.warning("the scheduler (pid %d) did not exit within %g s after the end of "
                            "the simulation: stopping it", self.process.pid, END_GRACE)
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(TERM_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.process.pid, sig)  # its session: its own children too
        except OSError:
            pass  # already gone


def _death_signal() -> Callable[[], None] | None:
    """A function for the child, before exec (Linux): SIGTERM it if batsim-py dies, even by
    SIGKILL, so that no scheduler is left running. None elsewhere (batsim-py stops it on
    every exit it sees). Loaded here, in the parent: the child only calls into libc."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sigterm = int(signal.SIGTERM)
    return lambda: prctl(1, sigterm, 0, 0, 0)  # PR_SET_PDEATHSIG
