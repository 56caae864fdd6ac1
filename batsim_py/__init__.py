"""batsim-py: a standalone Python simulator compatible with Batsim 4 (inputs, protocol, outputs)."""

from batsim_py.native import choose_modules

__version__ = "0.1.0"

choose_modules()  # compiled kernel modules, unless stale or BATSIM_PY_PURE is set
