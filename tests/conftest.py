"""Shared test fixtures: where the reference runs of real Batsim live (when they are there)."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
REFERENCE = PROJECT.parent / "shared" / "reference"


@pytest.fixture
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip("../shared/reference is not available (fresh clone)")
    return REFERENCE
