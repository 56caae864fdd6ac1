"""Helpers for platform tests: write an XML snippet to a file and load it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from batsim_py.platform import Platform, load_platform

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"


def reference_file(name: str) -> Path:
    """A reference platform (same file in several case folders), or skip the test."""
    found = sorted(REFERENCE.glob(f"*/{name}")) if REFERENCE.is_dir() else []
    if not found:
        pytest.skip(f"reference platform {name} not available")
    return found[0]


@pytest.fixture
def xml_file(tmp_path: Path) -> Callable[[str], str]:
    def write(body: str, version: str = "4.1") -> str:
        path = tmp_path / "platform.xml"
        path.write_text(f'<?xml version="1.0"?>\n<platform version="{version}">\n{body}\n'
                        "</platform>\n")
        return str(path)

    return write


@pytest.fixture
def platform_of(xml_file: Callable[[str], str]) -> Callable[[str], Platform]:
    def load(body: str) -> Platform:
        return load_platform(xml_file(body))

    return load


def names(route) -> list[str]:
    return [link.name for link in route.links]
