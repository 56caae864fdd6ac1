"""The reference corpus shipped with the project: runs of the real Batsim 4.2.1 (reference/).

Every case is stored as Batsim's run left it, but for the largest (f_50k), whose big files are
xz-compressed (`NAME.xz`). `prepare()` writes them out beside their archive (git-ignored)
once, so every reader (tests, benchmarks) sees each case folder as it was produced. The tests
call it at start (tests/conftest.py); the benchmarks before reading a case.
"""

from __future__ import annotations

import lzma
import os
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent / "reference"


def cases() -> list[str]:
    """The names of the reference cases (folders holding a case.json)."""
    return sorted(p.parent.name for p in REFERENCE.glob("*/case.json"))


def prepare() -> Path:
    """Decompress the corpus's `.xz` files that are not yet beside their archive; the corpus
    folder. A file is written under a temporary name, then renamed: an interrupted run never
    leaves a truncated file that a later one would take as complete."""
    for archive in sorted(REFERENCE.glob("*/**/*.xz")):
        target = archive.with_suffix("")
        if target.exists() and target.stat().st_mtime >= archive.stat().st_mtime:
            continue
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        with lzma.open(archive) as source, open(partial, "wb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
        os.replace(partial, target)
    return REFERENCE
