"""Which stamp exists in which protocol version and direction (seed 001's table, as decided
in docs/legacy-protocol.md: every stamp from version 1 on, except `A`/`Z`/`F`/`f`, version 3
only; `N` in every version; job ids are bare names up to version 1, `WLOAD!N` from 2).
"""

from __future__ import annotations

VERSIONS = (0, 1, 2, 3)

# stamp -> (first version, content kind)
FROM_BATSIM = {
    "A": (3, "none"),
    "S": (0, "job"),
    "C": (0, "job"),
    "N": (0, "none"),
    "p": (1, "pstate"),
    "e": (1, "float"),
    "Z": (3, "none"),
    "F": (3, "machines"),
    "f": (3, "machines"),
}
FROM_SCHEDULER = {
    "J": (0, "allocations"),
    "N": (0, "none"),
    "R": (1, "job"),
    "n": (1, "float"),
    "P": (1, "pstate"),
    "E": (1, "none"),
}


def allowed_from_scheduler(version: int) -> list[str]:
    return [s for s, (first, _) in FROM_SCHEDULER.items() if first <= version]


def bare_ids(version: int) -> bool:
    """Versions 0 and 1 name jobs by their bare id (`S:3`), later ones `WLOAD!N`."""
    return version <= 1
