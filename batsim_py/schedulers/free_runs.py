"""Free machines as runs of consecutive ids, for first-fit contiguous allocation in O(request).

pybatsim's `schedFcfs` (and so our `fcfs`) gives a job the first run, in machine order, of free
machines whose ids are consecutive (each one differs by 1 from the previous one in the list), and
takes its first `req` machines. Scanning the machine list for that on every attempt costs
O(machines) per attempt, which made 10,000 hosts x 100,000 jobs a matter of minutes.

`FreeRuns` keeps the same answer in a segment tree over the positions of the machine list. Each
node stores, for its slice of positions, the longest free prefix, free suffix and free run inside
it, where a run never crosses two neighbouring positions whose ids are not consecutive (that
"link" is fixed once the machine list is known). Then:
- "is there a run of `req`?" is the root's best run: O(1), so a blocked queue head costs nothing;
- the leftmost run of `req` is found top-down in O(log machines);
- taking or releasing `req` machines updates their leaves and the ancestors of that slice,
  level by level: O(log machines) Python steps plus O(req) of slice copies (a node wholly
  inside the slice is either all busy, all zeros, or all free, its values at the start).
The tree is plain Python lists (no recursion), sized to the next power of two.
"""

from __future__ import annotations

from collections.abc import Sequence


class FreeRuns:
    """Free/busy state of an ordered machine list, answering first-fit contiguous requests."""

    __slots__ = ("machines", "position", "size", "pre", "suf", "best", "link",
                 "full_pre", "full_suf", "full_best")

    def __init__(self, machines: Sequence[int]) -> None:
        self.machines = list(machines)
        self.position = {m: i for i, m in enumerate(self.machines)}
        n = len(self.machines)
        size = 1
        while size < n:
            size *= 2
        self.size = size
        self.pre = [0] * (2 * size)
        self.suf = [0] * (2 * size)
        self.best = [0] * (2 * size)
        # link[i] of an internal node: may a run cross the middle of its slice (positions mid-1
        # and mid hold machines whose ids differ by 1)? Padding positions (>= n) never link.
        link = [False] * size
        ms = self.machines
        for i in range(1, size):
            span = size >> (i.bit_length() - 1)
            mid = (i - (1 << (i.bit_length() - 1))) * span + span // 2
            link[i] = 0 < mid < n and abs(ms[mid] - ms[mid - 1]) == 1
        self.link = link
        for p in range(n):
            leaf = size + p
            self.pre[leaf] = self.suf[leaf] = self.best[leaf] = 1
        half = 1
        lo, hi = size >> 1, size - 1
        while lo >= 1:
            for i in range(lo, hi + 1):
                self._combine(i, half)
            lo >>= 1
            hi >>= 1
            half *= 2
        # Every machine is free now: these are also the values of any wholly free node.
        self.full_pre = self.pre[:]
        self.full_suf = self.suf[:]
        self.full_best = self.best[:]

    def _combine(self, i: int, half: int) -> None:
        """Recompute node `i` (children of `half` positions each) from its children."""
        pre, suf, best = self.pre, self.suf, self.best
        left = 2 * i
        right = left + 1
        pl, sl, bl = pre[left], suf[left], best[left]
        pr, sr, br = pre[right], suf[right], best[right]
        if self.link[i]:
            pre[i] = pl + pr if pl == half else pl
            suf[i] = sr + sl if sr == half else sr
            cross = sl + pr
            best[i] = bl if bl >= br and bl >= cross else (br if br >= cross else cross)
        else:
            pre[i] = pl
            suf[i] = sr
            best[i] = bl if bl >= br else br

    def _set(self, lo: int, hi: int, free: bool) -> None:
        """Mark positions [lo, hi) free or busy and update their ancestors.

        On each level, the nodes lying wholly inside [lo, hi) are copied in one slice (all
        busy: zeros; all free: their values at the start, when every machine was free), and
        only the two nodes straddling an end are recombined from their children: O(log
        machines) Python steps, the O(req) part being slice copies."""
        pre, suf, best = self.pre, self.suf, self.best
        span = 1
        first = self.size  # index of the level's first node
        while first >= 1:
            a = -(-lo // span)  # nodes wholly inside: [a, b) within the level
            b = hi // span
            if a < b:
                i, j = first + a, first + b
                if free:
                    pre[i:j] = self.full_pre[i:j]
                    suf[i:j] = self.full_suf[i:j]
                    best[i:j] = self.full_best[i:j]
                else:
                    zeros = [0] * (j - i)
                    pre[i:j] = zeros
                    suf[i:j] = zeros
                    best[i:j] = zeros
            if span > 1:
                half = span >> 1
                left = lo // span
                if left * span != lo:
                    self._combine(first + left, half)
                right = (hi - 1) // span
                if (right + 1) * span != hi and (right != left or left * span == lo):
                    self._combine(first + right, half)
            span <<= 1
            first >>= 1

    def largest(self) -> int:
        """Length of the longest run of free consecutive machines."""
        return self.best[1]

    def take(self, req: int) -> range | None:
        """The first `req` machines of the first free run of at least `req` (in list order),
        now marked busy; None (nothing changed) when no run is long enough or `req` <= 0.

        The ids of a run differ by 1 from one to the next, always in the same direction (they
        are distinct), so the run is a `range` of ids, in list order: O(1) memory however
        large the job."""
        if req <= 0 or self.best[1] < req:
            return None
        pre, suf, best, link = self.pre, self.suf, self.best, self.link
        size = self.size
        i, lo, half = 1, 0, size >> 1
        start = -1
        while i < size:
            left = 2 * i
            if best[left] >= req:
                i = left
            elif link[i] and suf[left] + pre[left + 1] >= req:
                start = lo + half - suf[left]
                break
            else:
                i = left + 1
                lo += half
            half >>= 1
        if start < 0:
            start = lo
        self._set(start, start + req, False)
        first = self.machines[start]
        if req > 1 and self.machines[start + 1] < first:
            return range(first, first - req, -1)
        return range(first, first + req)

    def release(self, alloc: Sequence[int]) -> None:
        """Free the machines of an allocation `take` returned (a run, in list order)."""
        if not alloc:
            return
        start = self.position[alloc[0]]
        self._set(start, start + len(alloc), True)
