"""Reading the reference transcripts of the real Batsim 4.2.1 (shared with the tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"

# Each line embeds the message text exactly as it travelled: {"seq": N, "from": F, "msg": TEXT}
_LINE = re.compile(r'\{"seq": (\d+), "from": "(batsim|scheduler)", "msg": (.*)\}$')


def cases() -> list[str]:
    if not REFERENCE.is_dir():
        return []
    return sorted(p.parent.name for p in REFERENCE.glob("*/transcript.jsonl"))


def require(case: str) -> Path:
    path = REFERENCE / case / "transcript.jsonl"
    if not path.is_file():
        pytest.skip(f"reference transcript {case} not available")
    return path


def messages(case: str) -> Iterator[tuple[str, str]]:
    """(sender, raw message text) in order."""
    with require(case).open(encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line.rstrip("\n"))
            assert m, f"{case}: unexpected transcript line {line[:80]!r}"
            yield m.group(2), m.group(3)


def scheduler_of(case: str) -> dict:
    return json.loads((REFERENCE / case / "case.json").read_text())["scheduler"]
