"""Fixtures of the workload tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., str]:
    """write(data_or_text, name="workload.json") -> path of the written file."""

    def _write(content: Any, name: str = "workload.json") -> str:
        path = tmp_path / name
        text = content if isinstance(content, str) else json.dumps(content)
        path.write_text(text, encoding="utf-8")
        return str(path)

    return _write
