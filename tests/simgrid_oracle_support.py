"""What the SimGrid oracle tests share: Debian's python3-simgrid runs under the system Python."""

from __future__ import annotations

import subprocess

SYSTEM_PYTHON = "/usr/bin/python3"


def simgrid_available() -> bool:
    """True when /usr/bin/python3 can import Debian's simgrid module."""
    try:
        res = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0
