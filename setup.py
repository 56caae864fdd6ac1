"""Build: the hot modules of the simulation kernel are compiled to C with mypyc when possible.

mypyc (part of mypy) turns type-annotated Python into a C extension with the same behaviour:
IEEE doubles stay doubles, so outputs are identical, and the round loop runs about a quarter
faster. Without a C compiler (or if mypyc fails) the install goes on with the pure-Python
modules, after saying so: `batsim_py.native.compiled_modules()` tells which ones are compiled.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

# Kept in step with batsim_py/native.py (COMPILED), which checks them at import.
COMPILED = ["batsim_py/sim/engine.py"]


class OptionalBuildExt(build_ext):
    """Build the compiled modules, or fall back to the pure-Python ones with a warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no Python headers...
            print(f"WARNING: batsim-py: compiling the kernel failed ({exc}); installing the "
                  "pure-Python modules (same results, slower)", file=sys.stderr)
            for path in self.get_outputs():  # no half-built set of modules
                if os.path.exists(path):
                    os.remove(path)
            self.extensions = []


def _extensions() -> list:
    if os.environ.get("BATSIM_PY_PURE"):  # explicit opt-out: pure Python only
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("WARNING: batsim-py: mypyc is not available; installing the pure-Python modules",
              file=sys.stderr)
        return []
    try:
        return mypycify(COMPILED, opt_level="3")
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error: stay pure
        print(f"WARNING: batsim-py: mypyc failed ({exc}); installing the pure-Python modules",
              file=sys.stderr)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
