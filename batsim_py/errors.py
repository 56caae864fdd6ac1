"""One exception type per layer, each carrying a message a user can act on.

The CLI prints these messages on one line without a traceback and exits non-zero; anything
else escaping is a bug in batsim-py.
"""

from batsim_py.text import printable


class BatsimPyError(Exception):
    """Base of every user-facing error.

    Its text is `printable`: a job id or host name holding a newline or an escape sequence
    cannot split the one-line message nor drive the user's terminal.
    """

    def __str__(self) -> str:
        return printable(super().__str__())


class PlatformError(BatsimPyError):
    """The platform file is missing, malformed or inconsistent."""


class WorkloadError(BatsimPyError):
    """A workload file is missing, malformed or inconsistent."""


class ProtocolError(BatsimPyError):
    """A message on the wire is malformed."""


class SchedulerError(BatsimPyError):
    """The scheduler took an invalid decision or disappeared."""


class UsageError(BatsimPyError):
    """The command line is inconsistent."""


class NotSupportedError(BatsimPyError):
    """A feature of Batsim that batsim-py does not implement yet."""


class OutputError(BatsimPyError):
    """An output file (or the transcript) cannot be written: the message names the file."""


class SimulationError(BatsimPyError):
    """The simulation cannot advance: a bounded loop of the kernel or of the sharing solver
    reached its limit (never a silent spin), or the clock would leave the finite numbers."""


class UserCodeError(BatsimPyError):
    """User code plugged into a simulation (a SimPy process, a scheduler loaded by name) is
    missing, has the wrong shape, or failed."""


class AnalysisError(BatsimPyError):
    """An output file to analyse is missing, malformed or inconsistent."""


class GridError(BatsimPyError):
    """A grid description or a CiGri campaigns file (`batsim-py cigri`) is missing,
    malformed or inconsistent."""
