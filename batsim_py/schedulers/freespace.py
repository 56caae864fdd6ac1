"""The free-machine bookkeeping of pybatsim 3.2.1's `easyBackfill`: a list of rectangles.

pybatsim's EASY scheduler does not track machines one by one: it keeps an ordered list of free
ranges of machine ids ("free spaces"), each with a length (how long it stays free; infinite
except while a backfilling pass is running) and a side from which jobs are carved (`low_first`).
Which ids a job gets depends on those sides, which depend on the history of merges, so they are
reproduced exactly here, quirks included (the side flags a merge leaves behind, linked "virtual"
spaces during backfilling that overlap their partner).
"""

from __future__ import annotations

from typing import Final

INF: Final = float("inf")  # (Final: compiled, a constant rather than a module look-up)


class Space:
    """One free range `[lo, hi]` of machine ids."""

    __slots__ = ("lo", "hi", "length", "low_first", "partner", "gone", "prev", "next")

    def __init__(self, lo: int, hi: int, length: float, prev: Space | None,
                 nxt: Space | None) -> None:
        self.lo = lo
        self.hi = hi
        self.length = length
        self.low_first = True
        self.partner: Space | None = None
        self.gone = False
        self.prev = prev
        self.next = nxt

    @property
    def size(self) -> int:
        return self.hi - self.lo + 1

    def __repr__(self) -> str:  # debugging aid
        side = "<" if self.low_first else ">"
        return f"Space({self.lo}-{self.hi} len={self.length} {side})"


class FreeList:
    """Ordered list of free spaces; starts as one space covering every machine."""

    __slots__ = ("first", "version")

    def __init__(self, nb_machines: int | None = None) -> None:
        self.first: Space | None = None
        # Bumped on every change that can alter a later decision (ranges, sides, membership);
        # lets the scheduler reuse work done against an identical list.
        self.version = 0
        if nb_machines is not None and nb_machines > 0:
            self.first = Space(0, nb_machines - 1, INF, None, None)

    def __iter__(self):
        space = self.first
        while space is not None:
            yield space
            space = space.next

    def unlink(self, space: Space) -> None:
        prev, nxt = space.prev, space.next
        if space is self.first:
            self.first = nxt
        else:
            prev.next = nxt  # type: ignore[union-attr]
        if nxt is not None:
            nxt.prev = prev
        space.gone = True
        self.version += 1

    def insert_after(self, space: Space, lo: int, hi: int, length: float) -> Space:
        new = Space(lo, hi, length, space, space.next)
        if space.next is not None:
            space.next.prev = new
        space.next = new
        self.version += 1
        return new

    def take(self, space: Space, n: int) -> int:
        """Carve `n` machines from `space` on its preferred side; keep a linked partner in step.
        Returns the first machine taken (the job gets it and the `n - 1` after it)."""
        self.version += 1
        partner = space.partner
        if space.low_first:
            first = space.lo
            space.lo += n
            if space.hi < space.lo:
                self.unlink(space)
            if partner is not None and partner.lo < first + n:
                partner.lo = first + n
        else:
            first = space.hi - n + 1
            space.hi -= n
            if space.hi < space.lo:
                self.unlink(space)
            if partner is not None and partner.hi >= first:
                partner.hi = first - 1
        if partner is not None and not partner.gone and partner.hi < partner.lo:
            self.unlink(partner)
        return first

    def give_back(self, lo: int, hi: int) -> Space:
        """Return the range of a finished job; merge it with adjacent spaces. Returns its space.

        A merge on the left makes the space carve from its high end next time, a merge on the
        right from its low end (pybatsim places the next job near the last one).
        """
        self.version += 1
        before: Space | None = None
        after = self.first
        while after is not None and after.lo <= lo:
            before = after
            after = after.next
        join_before = before is not None and before.hi + 1 == lo
        join_after = after is not None and after.lo - 1 == hi
        if join_before and join_after:
            before.next = after.next  # type: ignore[union-attr]
            if after.next is not None:  # type: ignore[union-attr]
                after.next.prev = before  # type: ignore[union-attr]
            before.hi = after.hi  # type: ignore[union-attr]
            return before  # type: ignore[return-value]
        if join_before:
            before.hi += hi - lo + 1  # type: ignore[union-attr]
            before.low_first = False  # type: ignore[union-attr]
            return before  # type: ignore[return-value]
        if join_after:
            after.lo -= hi - lo + 1  # type: ignore[union-attr]
            after.low_first = True  # type: ignore[union-attr]
            return after  # type: ignore[return-value]
        new = Space(lo, hi, INF, before, after)
        if before is None:
            self.first = new
        else:
            before.next = new
        if after is not None:
            after.prev = new
        return new

    def clone(self) -> FreeList:
        """Independent copy (ranges, lengths and sides; never taken while partners exist)."""
        out = FreeList()
        tail: Space | None = None
        for space in self:
            copy = Space(space.lo, space.hi, space.length, tail, None)
            copy.low_first = space.low_first
            if tail is None:
                out.first = copy
            else:
                tail.next = copy
            tail = copy
        return out
