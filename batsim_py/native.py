"""The kernel modules compiled by mypyc (setup.py), and the rule that keeps them honest.

A compiled module sits next to its source and Python imports it first. After an edit of the
source (a developer's editable install) the extension would silently run the old code. The
build records each compiled source's SHA-256 in `_kernel_sources.txt` (file dates cannot tell:
a wheel install writes sources after extensions); a module whose source no longer matches is
imported from the source instead, with a warning saying how to rebuild. `BATSIM_PY_PURE=1` in
the environment runs every module from its source (the reference behaviour; benchmarks use it
to show what the compilation buys).

A failed compilation must not go unnoticed (pip hides the build's warnings): the build writes
why into `_kernel_not_compiled.txt`, `batsim-py --version` names the kernel, and a run on the
pure kernel that was not asked for logs one line saying how to compile it (`log_kernel`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType

RECORD = "_kernel_sources.txt"  # written by setup.py's build (`record_text`)
# Written by setup.py's build instead when it could not compile the kernel: why (one line).
NOT_COMPILED = "_kernel_not_compiled.txt"
# The modules setup.py compiles (it loads this file): the hot paths of a run.
COMPILED = (
    "batsim_py.sim.engine",
    "batsim_py.schedulers.freespace",
    "batsim_py.schedulers.easy",
    # the per-job path: the server and its handlers, job executors, submitters, the
    # in-process exchange and the records it carries
    "batsim_py.sim.simulation",
    "batsim_py.sim.jobs",
    "batsim_py.sim.submitter",
    "batsim_py.decision.inprocess",
    "batsim_py.wire",
    # the lean --timing ideal (its actors subclass the engine's Actor: same compilation group)
    "batsim_py.sim.lean",
    # the records made per job (events and decisions)
    "batsim_py.decision.hot",
)


def source_of(name: str) -> str:
    """A module's source file, relative to the folder holding its top-level package."""
    return name.replace(".", "/") + ".py"


def source_hash(source: Path) -> str:
    return hashlib.sha256(source.read_bytes()).hexdigest()


def record_text(root: Path) -> str:
    """What the build writes to RECORD: each compiled module and its source's hash (`root`:
    the folder holding the batsim_py package's sources)."""
    return "".join(f"{name} {source_hash(root / source_of(name))}\n" for name in COMPILED)


def _extension_of(name: str) -> Path | None:
    """The compiled file of module `name`, found without importing its package (whose
    `__init__` may import the module itself)."""
    top, *parts = name.split(".")
    spec = importlib.util.find_spec(top)  # (a top-level package is found without its import)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]).joinpath(*parts[:-1])
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / (parts[-1] + suffix)
        if path.exists():
            return path
    return None


def _recorded_hashes(extension: Path, name: str) -> dict[str, str]:
    """The build's record of the compiled sources, in the top-level package's folder."""
    record = extension.parents[name.count(".") - 1] / RECORD
    try:
        lines = record.read_text().splitlines()
    except OSError:
        return {}
    pairs = (line.split() for line in lines)
    return {p[0]: p[1] for p in pairs if len(p) == 2}


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the listed modules' sources ahead of the standard finders (which would take the
    extension), whenever they are imported: a package's `__init__` may import them first."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(self, name: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(name)
        return None if source is None else importlib.util.spec_from_file_location(name, source)


def choose_modules() -> None:
    """Have the compiled modules imported from their sources where the extensions must not be
    used. They are compiled together and call each other natively, so one changed source sends
    them all back to their sources.

    Runs when `batsim_py` is imported, before anything imports the kernel."""
    pure = bool(os.environ.get("BATSIM_PY_PURE"))
    sources: dict[str, Path] = {}
    changed: list[Path] = []
    recorded: dict[str, dict[str, str]] = {}  # per top-level package: module -> source hash
    for name in COMPILED:
        extension = _extension_of(name)
        if extension is None:
            continue
        source = extension.parent / (name.rpartition(".")[2] + ".py")
        if not source.exists():
            continue
        sources[name] = source
        top = name.partition(".")[0]
        if top not in recorded:
            recorded[top] = _recorded_hashes(extension, name)
        expected = recorded[top].get(name)  # (None: nothing recorded, cannot tell)
        if expected is not None and expected != source_hash(source):
            changed.append(source)
    global _stale
    _stale = bool(changed) and not pure
    if changed and not pure:
        warnings.warn(
            f"batsim-py: {', '.join(map(str, changed))} changed since compiled; running the "
            "kernel from its sources (slower). Rebuild with: pip install -e .",
            stacklevel=2,
        )
    if sources and (pure or changed):
        sys.meta_path.insert(0, _SourceFinder(sources))


_stale = False  # choose_modules found edited sources (and warned): they run instead
_logged = False  # log_kernel's line is given once per process


def compiled_modules() -> list[str]:
    """The kernel modules running compiled in this process (benchmarks print them)."""
    out = []
    for name in COMPILED:
        module = importlib.import_module(name)
        if str(getattr(module, "__file__", "")).endswith(
                tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            out.append(name)
    return out


def c_extension(name: str, api: int) -> ModuleType | None:
    """One of the hand-written C modules setup.py builds next to the kernel (the output writer
    output/_ctext.c, the workload loader workload/_cload.c), or None: not built (no C compiler:
    their pure-Python twins give the same results, slower), BATSIM_PY_PURE set (the reference
    code), or built from an older source (its `API` is not `api`)."""
    if os.environ.get("BATSIM_PY_PURE"):
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module if getattr(module, "API", None) == api else None


def kernel_label() -> str:
    """One line for `--version` and benchmark reports: which kernel runs, and why it is the
    pure one when it is."""
    names = compiled_modules()
    if names:
        return ("kernel: compiled by mypyc ("
                + ", ".join(n.rpartition(".")[2] for n in names) + ")")
    return f"kernel: pure Python ({_why_pure()})"


def _why_pure() -> str:
    if os.environ.get("BATSIM_PY_PURE"):
        return "BATSIM_PY_PURE is set"
    if _stale:
        return "its sources changed since compiled"
    try:
        note = (Path(__file__).parent / NOT_COMPILED).read_text(encoding="utf-8").strip()
    except OSError:
        note = ""
    return note or "not compiled: run from a source tree, or installed without the build step"


def pure_kernel_notice() -> str | None:
    """The line a run logs when it runs the pure kernel nobody asked for; None otherwise
    (compiled, BATSIM_PY_PURE set, or edited sources, which `choose_modules` warned about)."""
    if os.environ.get("BATSIM_PY_PURE") or _stale or compiled_modules():
        return None
    return (f"running the pure-Python kernel, slower than the compiled one ({_why_pure()}); "
            "to compile it, reinstall from the checkout with `pip install -v .` (or -v -e .), "
            "which shows why compiling fails (it needs a C compiler and Python's headers); "
            "BATSIM_PY_PURE=1 runs the pure kernel without this notice")


def log_kernel(logger: logging.Logger) -> None:
    """Log the pure-kernel notice (warning), once per process."""
    global _logged
    notice = pure_kernel_notice()
    if notice is not None and not _logged:
        _logged = True
        logger.warning(notice)
