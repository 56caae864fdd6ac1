"""Shared test fixtures: where the reference runs of real Batsim live (shipped in
tests/conformance/reference, whose compressed files are written out here, once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conformance.corpus import prepare  # (tests/ is on sys.path: pytest's rootdir conftest)

from batsim_py import native

PROJECT = Path(__file__).resolve().parents[1]
REFERENCE = prepare()  # PROJECT / "tests" / "conformance" / "reference"

# A tree without compiled modules (a checkout not installed, a failed build) runs the pure
# kernel, which every run would otherwise report on stderr (batsim_py/native.py): the tests,
# and the programs they start, take it as asked for. tests/test_native.py tests the notice.
if not native.compiled_modules():
    os.environ.setdefault("BATSIM_PY_PURE", "1")


@pytest.fixture
def reference_dir() -> Path:
    return REFERENCE
