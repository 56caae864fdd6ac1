"""The kernel modules compiled by mypyc (setup.py), and the rule that keeps them honest.

A compiled module sits next to its source and Python imports it first. After an edit of the
source (a developer's editable install) the extension would silently run the old code: a module
whose source is newer than its extension is imported from the source instead, with a warning
saying how to rebuild. `BATSIM_PY_PURE=1` in the environment runs every module from its source
(the reference behaviour; benchmarks use it to show what the compilation buys).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path

# Kept in step with setup.py (COMPILED).
COMPILED = ("batsim_py.sim.engine",)


def _extension_of(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    if origin and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        return Path(origin)
    return None


def _import_source(name: str, source: Path) -> None:
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def choose_modules() -> None:
    """Import each compiled module's source instead where the extension must not be used.

    Runs when `batsim_py` is imported, before anything imports the kernel."""
    pure = bool(os.environ.get("BATSIM_PY_PURE"))
    for name in COMPILED:
        if name in sys.modules:
            continue
        extension = _extension_of(name)
        if extension is None:
            continue
        source = extension.parent / (name.rpartition(".")[2] + ".py")
        if not source.exists():
            continue
        if not pure and source.stat().st_mtime <= extension.stat().st_mtime:
            continue
        if not pure:
            warnings.warn(
                f"batsim-py: {source} is newer than its compiled module; running the source "
                "(slower). Rebuild with: pip install -e . (or delete the .so file)",
                stacklevel=2,
            )
        _import_source(name, source)


def compiled_modules() -> list[str]:
    """The kernel modules running compiled in this process (for benchmarks and --version)."""
    out = []
    for name in COMPILED:
        module = sys.modules.get(name) or importlib.import_module(name)
        if str(getattr(module, "__file__", "")).endswith(
                tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            out.append(name)
    return out


def kernel_label() -> str:
    """One line for benchmark reports: which kernel ran."""
    names = compiled_modules()
    if not names:
        return "kernel: pure Python"
    return "kernel: compiled by mypyc (" + ", ".join(n.rpartition(".")[2] for n in names) + ")"
