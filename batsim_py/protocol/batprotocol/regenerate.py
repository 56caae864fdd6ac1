"""Regenerate the flatbuffers Python classes of the batprotocol schema with flatc.

    python -m batsim_py.protocol.batprotocol.regenerate          # rewrite generated/
    python -m batsim_py.protocol.batprotocol.regenerate --check  # exit 1 if they differ

The classes are committed (generated/batprotocol/fb/*.py, flatc 2.0.8's output for
`batprotocol.fbs`, the seed schema) so that batsim-py needs no flatc at install; this script
and tests/edc/test_generated.py keep them equal to what flatc makes of the schema.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "batprotocol.fbs"
GENERATED = HERE / "generated"


def generate(into: Path) -> Path:
    """flatc's Python classes for the schema, written under `into`; the package folder."""
    flatc = shutil.which("flatc")
    if flatc is None:
        raise SystemExit("flatc is not installed (Debian: apt-get install flatbuffers-compiler)")
    subprocess.run([flatc, "--python", "-o", str(into), str(SCHEMA)], check=True)
    return into / "batprotocol"


def differences(fresh: Path, committed: Path) -> list[str]:
    """Relative paths of the files that differ, are missing or are extra."""
    out = []
    fresh_files = {p.relative_to(fresh) for p in fresh.rglob("*.py")}
    committed_files = {p.relative_to(committed) for p in committed.rglob("*.py")}
    for rel in sorted(fresh_files | committed_files):
        a, b = fresh / rel, committed / rel
        if not a.exists() or not b.exists() or not filecmp.cmp(a, b, shallow=False):
            out.append(str(rel))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only compare with the committed classes")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        committed = GENERATED / "batprotocol"
        if args.check:
            diff = differences(fresh, committed)
            for rel in diff:
                print(f"differs: {rel}")
            return 1 if diff else 0
        if committed.exists():
            shutil.rmtree(committed)
        shutil.copytree(fresh, committed)
    print(f"regenerated {committed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
