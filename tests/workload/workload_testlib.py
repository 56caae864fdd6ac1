"""Shared data for the workload tests (a plain module: conftest names collide across folders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"
REPO = Path(__file__).resolve().parents[2]


def base_workload(**overrides: Any) -> dict[str, Any]:
    """A valid one-job workload; keyword arguments replace top-level keys."""
    data: dict[str, Any] = {
        "nb_res": 4,
        "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}},
    }
    data.update(overrides)
    return data
