"""The fast paths of loading a large workload: the native loader (workload/_cload.c) and
orjson, each used only when present, each giving exactly what the pure-Python reader gives.

A 50,000-job workload took 0.2-0.4 s of CPU to load in Python (a million jobs 7-9 s): json's
decoding, then per job a dozen type tests and a new `Job`, per profile a `DelayProfile`. The
native loader does the per-job and per-profile work of the common case (a workload whose jobs
all have the same keys and number types, plain delay profiles) in C, and hands anything else
back to the Python path, which decides and raises every error. orjson decodes the text about
twice as fast as json, but reads some numbers differently from Batsim's RapidJSON (integers
beyond 64 bits become floats, and a long decimal is correctly rounded where RapidJSON may be an
ulp off): it is used only for a text whose every number reads the same both ways, which the
native loader checks (`numbers_agree`); any other text, or one orjson refuses, goes to json.

`BATSIM_PY_PURE=1` selects the pure-Python path (the reference), as for the kernel and the
output writer.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

from batsim_py.native import c_extension

NATIVE_API = 1  # workload/_cload.c's API_VERSION: a build of an older source is not used


def _native() -> ModuleType | None:
    return c_extension("batsim_py.workload._cload", NATIVE_API)


def _orjson() -> ModuleType | None:
    if NATIVE is None:  # (orjson's numbers can be checked only by the native loader)
        return None
    try:
        import orjson
    except ImportError:
        return None
    return orjson


NATIVE = _native()
ORJSON = _orjson()


def decode(data: bytes) -> Any | None:
    """The JSON value of `data` as json with Batsim's number reading would give it, or None:
    no fast decoder, a number that orjson would read differently, nesting deeper than json
    may take, or a text orjson refuses (invalid JSON: json then says why)."""
    if ORJSON is None or NATIVE is None or not NATIVE.numbers_agree(data):
        return None
    try:
        return ORJSON.loads(data)
    except (ValueError, RecursionError):  # (orjson.JSONDecodeError is a ValueError)
        return None


def loader_label() -> str:
    """One line for `--version`: which loader reads workloads."""
    if NATIVE is None:
        why = ("BATSIM_PY_PURE is set" if os.environ.get("BATSIM_PY_PURE")
               else "not built: run from a source tree, or installed without the build step")
        return f"workload loader: pure Python ({why})"
    return "workload loader: native (C)" + (", orjson" if ORJSON is not None else ", json")
