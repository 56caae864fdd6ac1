"""Batsim interval sets: the text form `"0-3 7"` of a set of machine ids.

Batsim accepts tokens `a` or `a-b` separated by spaces (runs of spaces compressed) and always
prints the canonical form: sorted, merged, space-separated.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_IDS = 1_000_000  # far beyond any platform; bigger sets from input would exhaust memory


def parse(text: str, max_ids: int = MAX_IDS) -> tuple[int, ...]:
    """Parse an interval set into sorted unique ids; ValueError says what is wrong.

    Sets of more than `max_ids` ids are refused before being built.
    """
    total = 0
    for token in text.split():
        lo, sep, hi = token.partition("-")
        try:
            total += (int(hi) - int(lo) + 1) if sep else 1
        except ValueError:
            break  # named below
        if total > max_ids:
            raise ValueError(f"'{token}': too many machine ids (more than {max_ids:,}); "
                             "machine ids are numbered 0..N-1 for the N machines of the platform")
    ids: set[int] = set()
    for token in text.split():
        lo, sep, hi = token.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"'{token}' is not an integer or a range a-b") from None
        if a < 0 or b < a:
            raise ValueError(f"'{token}' is not a valid range (need 0 <= a <= b)")
        ids.update(range(a, b + 1))
    if not ids:
        raise ValueError("the interval set is empty")
    return tuple(sorted(ids))


def format(ids: Iterable[int]) -> str:  # noqa: A001 - mirrors parse()
    """Canonical text of a set of ids: `0-3 7`."""
    if isinstance(ids, range) and ids.step == 1 and len(ids):  # a contiguous allocation
        return str(ids.start) if len(ids) == 1 else f"{ids.start}-{ids.stop - 1}"
    return " ".join(ranges(ids))


def ranges(ids: Iterable[int]) -> list[str]:
    """The sorted, merged runs of `ids` as `a-b` (or `a`) texts: the body of Batsim's interval
    sets and of Flux's RFC 22 idsets, which differ only in their separator."""
    parts: list[str] = []
    start = prev = None
    for i in sorted(set(ids)):
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return parts
