"""Doubles printed as C's `%f` (six decimals), many at a time.

The output files print tens of thousands to millions of dates with `%f` (jobs.csv's columns,
the Pajé trace's dates); Python's `%f` costs about 0.2 us a value. Dates in whole seconds (every
date of a run with whole-second submissions and delays in ideal timing) print the same text
from integers, four times cheaper.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import numpy as np

from batsim_py.native import c_extension

# The native writer's API version (output/_ctext.c's API_VERSION): a build of an older source
# is not used.
NATIVE_API = 7
# Written by setup.py's build when it could not build the native writer: why (one line).
WRITER_NOT_BUILT = "_writer_not_built.txt"


def native_text() -> ModuleType | None:
    """The native writer of the trace's events and jobs.csv's rows (output/_ctext.c, built by
    setup.py next to the compiled kernel), or None: not built (no C compiler: the pure-Python
    writers write the same bytes, slower) or BATSIM_PY_PURE set (the reference writers)."""
    return c_extension("batsim_py.output._ctext", NATIVE_API)


def writer_label() -> str:
    """One line for `--version`: which writer writes the large output files, and why it is
    the pure-Python one when it is."""
    if native_text() is not None:
        return "output writer: native (C)"
    if os.environ.get("BATSIM_PY_PURE"):
        why = "BATSIM_PY_PURE is set"
    else:
        try:
            why = (Path(__file__).parent / WRITER_NOT_BUILT).read_text(encoding="utf-8").strip()
        except OSError:
            why = ""
        why = why or "not built: run from a source tree, or installed without the build step"
    return f"output writer: pure Python ({why})"

_EXACT = float(2**53)  # integers up to this one print from an int64 exactly


def fixed6(column: np.ndarray) -> tuple[str, list]:
    """How a float64 column prints as `%f`: the format and the values to give it. A column of
    whole numbers (every time of a run with whole-second dates and delays) prints its values as
    integers followed by `.000000`, the exact text of `%f` for an integral double, four times
    cheaper than `%f` (not -0.0, which prints its sign; no value beyond 2**53)."""
    if len(column) and not np.signbit(column).any():
        with np.errstate(invalid="ignore"):  # (nan, inf: not whole, not taken)
            whole = bool((np.floor(column) == column).all() and column.max() <= _EXACT)
        if whole:
            return "%d.000000", column.astype(np.int64).tolist()
    return "%f", column.tolist()
