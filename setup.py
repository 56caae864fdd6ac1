"""Build: the hot modules of the simulation kernel are compiled to C with mypyc when possible.

mypyc (part of mypy) turns type-annotated Python into a C extension with the same behaviour:
IEEE doubles stay doubles, so outputs are identical, and large runs take about 40% less time.
Without a C compiler (or if mypyc fails) the install goes on with the pure-Python modules, after
saying so; pip shows a build's messages only with -v, so the build also writes why into the
package (`batsim_py.native.NOT_COMPILED`), which `batsim-py --version` and every run on the
pure kernel report. `batsim_py.native.compiled_modules()` tells which modules are compiled.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
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
NOT_COMPILED: str | None = None  # why the kernel is not compiled (set by _extensions, build_ext)
# The native writer of the largest output files (batsim_py/output/_ctext.c, hand-written C,
# no build dependency but a C compiler), built apart from the kernel: either may fail alone.
# Without it the pure-Python writers write the same bytes, slower; the build leaves why in
# batsim_py/output/_writer_not_built.txt (batsim_py.output.fixed.writer_label).
WRITER = "batsim_py.output._ctext"
WRITER_NOTE = Path("output") / "_writer_not_built.txt"
WRITER_NOT_BUILT: str | None = None
# The native loader of large workloads (batsim_py/workload/_cload.c, hand-written C), built the
# same way: without it the pure-Python reader reads the same workloads, slower.
LOADER = "batsim_py.workload._cload"


def _package_dir(command) -> Path:
    """Where the built package lies: the source tree for an editable or in-place build, else
    the build tree the wheel is made of."""
    in_source = getattr(command, "editable_mode", False) or getattr(command, "inplace", False)
    return HERE / "batsim_py" if in_source else Path(command.build_lib) / "batsim_py"


def _write_note(command) -> None:
    """Leave in the package why the kernel is not compiled and why the native writer is not
    built (or remove earlier such notes)."""
    for name, why in ((NATIVE.NOT_COMPILED, NOT_COMPILED), (WRITER_NOTE, WRITER_NOT_BUILT)):
        note = _package_dir(command) / name
        if why is None:
            if note.exists():
                note.unlink()
        elif note.parent.is_dir():
            note.write_text(why + "\n", encoding="utf-8")


def _writer_not_built(reason: str) -> None:
    global WRITER_NOT_BUILT
    WRITER_NOT_BUILT = "not built at install: " + " ".join(reason.split())[:300]
    print(f"WARNING: batsim-py: the native output writer was {WRITER_NOT_BUILT}; the "
          "pure-Python writer writes the same files, slower", file=sys.stderr)


def _not_compiled(reason: str) -> None:
    global NOT_COMPILED
    NOT_COMPILED = "not compiled at install: " + " ".join(reason.split())[:300]
    print(f"WARNING: batsim-py: {NOT_COMPILED}; installing the pure-Python modules (same "
          "results, slower)", file=sys.stderr)


class BuildPy(build_py):
    """Copy the package, with the note saying why the kernel is not compiled (if it is not),
    and the shipped platforms and workloads (batsim_py/shipped/), so that an installed
    batsim-py finds them without a checkout (batsim_py/shipped.py). An editable install reads
    the checkout's folders instead."""

    def run(self) -> None:
        super().run()
        _write_note(self)
        if getattr(self, "editable_mode", False):
            return
        import shutil

        for folder in ("platforms", "workloads"):
            # whole folders: a platform or workload may refer to files beside it (traces)
            shutil.copytree(HERE / folder, Path(self.build_lib) / "batsim_py" / "shipped" / folder,
                            dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


class OptionalBuildExt(build_ext):
    """Build the compiled modules, or fall back to the pure-Python ones with a warning."""

    def build_extension(self, ext) -> None:
        if ext.name == LOADER:
            try:  # (alone: its failure leaves the kernel and the writer built)
                super().build_extension(ext)
                self.loader_built = True
            except Exception as exc:
                print(f"WARNING: batsim-py: the native workload loader was not built "
                      f"(compiling workload/_cload.c failed: {exc}); the pure-Python reader "
                      "reads the same workloads, slower", file=sys.stderr)
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            return
        if ext.name != WRITER:
            super().build_extension(ext)
            return
        try:  # the writer alone (built first): its failure leaves the kernel compiled
            super().build_extension(ext)
            self.writer_built = True
        except Exception as exc:
            _writer_not_built(f"compiling output/_ctext.c failed: {exc}")
            path = self.get_ext_fullpath(ext.name)
            if os.path.exists(path):
                os.remove(path)

    def run(self) -> None:
        try:
            super().run()
            self._record_sources()
        except Exception as exc:  # no compiler, no Python headers...
            writer = (self.get_ext_fullpath(WRITER)
                      if getattr(self, "writer_built", False) else None)
            if writer is None and WRITER_NOT_BUILT is None:
                _writer_not_built(f"compiling the C code failed: {exc}")
            _not_compiled(f"compiling the C code failed: {exc}")
            loader = (self.get_ext_fullpath(LOADER)
                      if getattr(self, "loader_built", False) else None)
            for path in self.get_outputs():  # no half-built set of modules
                if os.path.exists(path) and path not in (writer, loader):
                    os.remove(path)
            self.extensions = []
        _write_note(self)

    def _record_sources(self) -> None:
        """Write the hash of each compiled module's source next to the package as installed
        (`batsim_py.native` runs a module from its source when it no longer matches): in the
        source tree for an editable install, else in the build tree the wheel is made of."""
        if not [e for e in self.extensions if e.name not in (WRITER, LOADER)]:
            return
        (_package_dir(self) / NATIVE.RECORD).write_text(NATIVE.record_text(HERE))


def _metadata_only() -> bool:
    """pip runs this file three times per install, twice only for metadata (egg_info,
    dist_info): mypyc's type check there would only cost time (seconds each)."""
    commands = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    return bool(commands) and commands[0] in ("egg_info", "dist_info")


def _writer() -> list:
    """The native writer's and the native loader's extensions (none with BATSIM_PY_PURE: pure
    Python only)."""
    if _metadata_only():
        return []
    if os.environ.get("BATSIM_PY_PURE"):
        _writer_not_built("BATSIM_PY_PURE was set")
        return []
    from setuptools import Extension

    return [Extension(WRITER, ["batsim_py/output/_ctext.c"]),
            Extension(LOADER, ["batsim_py/workload/_cload.c"])]


def _extensions() -> list:
    if _metadata_only():
        return []
    if os.environ.get("BATSIM_PY_PURE"):  # explicit opt-out: pure Python only
        _not_compiled("BATSIM_PY_PURE was set")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _not_compiled("mypyc (part of mypy) is not installed in the build environment")
        return []
    output = io.StringIO()  # mypyc prints its type errors, then exits
    try:
        with contextlib.redirect_stdout(output):
            return mypycify([NATIVE.source_of(m) for m in NATIVE.COMPILED], opt_level="3",
                            group_name="batsim_py_kernel")
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error: stay pure
        errors = [line for line in output.getvalue().splitlines() if ": error:" in line]
        _not_compiled(f"mypyc failed: {errors[0] if errors else exc}")
        return []
    finally:
        sys.stdout.write(output.getvalue())


setup(ext_modules=_writer() + _extensions(),
      cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPy})
