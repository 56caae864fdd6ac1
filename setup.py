"""Build: the hot modules of the simulation kernel are compiled to C with mypyc when possible.

mypyc (part of mypy) turns type-annotated Python into a C extension with the same behaviour:
IEEE doubles stay doubles, so outputs are identical, and large runs take about 40% less time.
Without a C compiler (or if mypyc fails) the install goes on with the pure-Python modules, after
saying so: `batsim_py.native.compiled_modules()` tells which ones are compiled. Everything else
is in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _load_native():
    """batsim_py/native.py alone (standard library only; importing the package would run it):
    the list of compiled modules and the record of their sources are defined there."""
    spec = importlib.util.spec_from_file_location("_batsim_py_native",
                                                  HERE / "batsim_py" / "native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NATIVE = _load_native()


class OptionalBuildExt(build_ext):
    """Build the compiled modules, or fall back to the pure-Python ones with a warning."""

    def run(self) -> None:
        try:
            super().run()
            self._record_sources()
        except Exception as exc:  # no compiler, no Python headers...
            print(f"WARNING: batsim-py: compiling the kernel failed ({exc}); installing the "
                  "pure-Python modules (same results, slower)", file=sys.stderr)
            for path in self.get_outputs():  # no half-built set of modules
                if os.path.exists(path):
                    os.remove(path)
            self.extensions = []

    def _record_sources(self) -> None:
        """Write the hash of each compiled module's source next to the package as installed
        (`batsim_py.native` runs a module from its source when it no longer matches): in the
        source tree for an editable install, else in the build tree the wheel is made of."""
        if not self.extensions:
            return
        in_source = getattr(self, "editable_mode", False) or self.inplace
        package = HERE / "batsim_py" if in_source else Path(self.build_lib) / "batsim_py"
        (package / NATIVE.RECORD).write_text(NATIVE.record_text(HERE))


class BuildPyWithShipped(build_py):
    """Copy the shipped platforms and workloads into the package (batsim_py/shipped/), so that
    an installed batsim-py finds them without a checkout (batsim_py/shipped.py). An editable
    install reads the checkout's folders instead."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        import shutil

        for folder in ("platforms", "workloads"):
            # whole folders: a platform or workload may refer to files beside it (traces)
            shutil.copytree(HERE / folder, Path(self.build_lib) / "batsim_py" / "shipped" / folder,
                            dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


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
        return mypycify([NATIVE.source_of(m) for m in NATIVE.COMPILED], opt_level="3",
                        group_name="batsim_py_kernel")
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error: stay pure
        print(f"WARNING: batsim-py: mypyc failed ({exc}); installing the pure-Python modules",
              file=sys.stderr)
        return []


setup(ext_modules=_extensions(),
      cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithShipped})
