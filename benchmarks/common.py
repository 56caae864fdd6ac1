"""What several benchmarks need: the shipped reference corpus and a free TCP port."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reference() -> Path:
    """The reference corpus shipped in tests/conformance/reference, its compressed (f_50k)
    files written out on first use (tests/conformance/corpus.py)."""
    sys.path.insert(0, str(ROOT / "tests" / "conformance"))
    from corpus import prepare

    return prepare()


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
