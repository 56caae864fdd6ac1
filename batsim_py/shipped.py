"""The platforms, workloads and event files shipped with batsim-py, found wherever it is installed.

Why: a user who ran `pip install batsim-py-sim` has no checkout, yet the guide's first run needs a
platform and a workload. The files live once, in the project's `platforms/` and `workloads/`
folders; a built wheel carries copies in `batsim_py/shipped/` (setup.py's build_py), while a
checkout or an editable install reads the folders next to the package. `batsim-py
--list-examples` prints them, and `-p`, `-w` and `--events` accept their names (`-p small4`) when
no such file exists in the current directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FOLDERS = ("platforms", "workloads")  # the project folders that are installed
SUFFIXES = {".xml": "platform", ".json": "workload", ".jsonl": "events"}

_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class ShippedFile:
    name: str  # the file name without its suffix: what -p/-w/--events accept
    kind: str  # "platform", "workload" or "events"
    path: Path


def _folders() -> list[Path]:
    """Where the shipped files are: the wheel's copy first, else a checkout's folders."""
    installed = _PACKAGE / "shipped"
    if installed.is_dir():
        return [installed / f for f in FOLDERS]
    return [_PACKAGE.parent / f for f in FOLDERS]


def shipped_files() -> list[ShippedFile]:
    """Every shipped input, platforms first, then workloads and event files, by name."""
    found = []
    for folder in _folders():
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            kind = SUFFIXES.get(path.suffix)
            if kind is not None and path.is_file():
                found.append(ShippedFile(path.stem, kind, path))
    order = list(SUFFIXES.values())
    return sorted(found, key=lambda f: (order.index(f.kind), f.name))


def resolve(given: str, kind: str) -> str:
    """`given` unchanged when it is an existing path or not a shipped name, else the shipped
    file's path. Accepts `small4` and `small4.xml`; an existing local file always wins."""
    if "/" in given or "\\" in given or Path(given).exists():
        return given
    for f in shipped_files():
        if f.kind == kind and given in (f.name, f.path.name):
            return str(f.path)
    return given


def listing() -> str:
    """The text of `batsim-py --list-examples`: kind, name and installed path per line."""
    files = shipped_files()
    if not files:
        return "no shipped examples found (the installation is incomplete)"
    width = max(len(f.name) for f in files)
    return "\n".join(f"{f.kind:<8}  {f.name:<{width}}  {f.path}" for f in files)
