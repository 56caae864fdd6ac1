"""Build: the hot modules of the simulation kernel are compiled to C with mypyc when possible.

mypyc (part of mypy) turns type-annotated Python into a C extension with the same behaviour:
IEEE doubles stay doubles, so outputs are identical, and the round loop runs about a quarter
faster. Without a C compiler (or if mypyc fails) the install goes on with the pure-Python
modules, after saying so: `batsim_py.native.compiled_modules()` tells which ones are compiled.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext


def _compiled_sources() -> list[str]:
    """The modules listed in batsim_py/native.py (COMPILED), which checks them at import."""
    tree = ast.parse((Path(__file__).parent / "batsim_py" / "native.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED":
            return [name.replace(".", "/") + ".py" for name in ast.literal_eval(node.value)]
    raise RuntimeError("batsim_py/native.py lists no COMPILED modules")


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
        return mypycify(_compiled_sources(), opt_level="3", group_name="batsim_py_kernel")
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error: stay pure
        print(f"WARNING: batsim-py: mypyc failed ({exc}); installing the pure-Python modules",
              file=sys.stderr)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
