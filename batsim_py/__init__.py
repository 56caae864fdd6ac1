"""batsim-py: a standalone Python simulator compatible with Batsim 4 (inputs, protocol, outputs).

The Python API (`batsim_py.api`) is imported on first use, so the command line stays light:
`batsim_py.Simulator`, `batsim_py.Results`, `batsim_py.simulate`.
"""

from typing import Any

from batsim_py.native import choose_modules

__version__ = "0.1.0"

choose_modules()  # compiled kernel modules, unless stale or BATSIM_PY_PURE is set

_API = ("Simulator", "Results", "simulate")


def __getattr__(name: str) -> Any:
    if name in _API:
        # (Dynamic: the compiled modules' type check, which follows this package's imports,
        # need not read the whole API.)
        import importlib

        return getattr(importlib.import_module("batsim_py.api"), name)
    raise AttributeError(f"module 'batsim_py' has no attribute {name!r}")


__all__ = ["__version__", *_API]
