"""Free machines as runs of consecutive ids, for first-fit contiguous allocation.

pybatsim's `schedFcfs` (and so our `fcfs`) gives a job the first run, in machine order, of free
machines whose ids are consecutive (each one differs by 1 from the previous one in the list), and
takes its first `req` machines. Scanning the machine list for that on every attempt costs
O(machines) Python steps per attempt, which made 10,000 hosts x 100,000 jobs a matter of minutes.

`FreeRuns` keeps the free positions of the machine list as the bits of one integer, and the
"links" (positions i and i+1 hold machines whose ids differ by 1: a run may continue there) as
the bits of another, fixed once the machine list is known. The first run of `req` is then a few
whole-integer operations, each a C loop over machines / 64 words:
- `x = free & link`: positions that are free and whose run may go on to the next position;
- the positions `p` where `req - 1` consecutive bits of `x` start (`x & x >> 1 & ... `, built by
  doubling the span: O(log req) operations), and whose position `p + req - 1` is free, are the
  starts of a run of `req`; the lowest such bit is the answer;
- taking or releasing `req` machines flips their bits: one operation.
So an attempt costs O(log req) Python steps whatever the platform's size (a blocked queue head
too), and the machine list's size only enters through the C loops over its words.
"""

from __future__ import annotations

from collections.abc import Sequence


class FreeRuns:
    """Free/busy state of an ordered machine list, answering first-fit contiguous requests."""

    __slots__ = ("machines", "position", "free", "link", "failed_free", "failed_req")

    def __init__(self, machines: Sequence[int]) -> None:
        self.machines = list(machines)
        self.position = {m: i for i, m in enumerate(self.machines)}
        ms = self.machines
        n = len(ms)
        self.free = (1 << n) - 1  # bit i: the machine at position i is free
        link = 0  # bit i: positions i and i+1 hold consecutive ids
        for i in range(n - 1):
            if abs(ms[i + 1] - ms[i]) == 1:
                link |= 1 << i
        self.link = link
        # The last request that found no run, and the free machines then: until they change, a
        # request as large fails at once (a blocked queue head costs O(1) per pass).
        self.failed_free = -1
        self.failed_req = 0

    def _starts(self, req: int) -> int:
        """Bit p set iff positions p .. p+req-1 are free and linked: a run of `req` starts at p."""
        free = self.free
        x = free & self.link
        span = 1  # bit p of `x`: positions p .. p+span-1 free, each linked to the next
        need = req - 1
        if need == 0:
            return free
        while span < need:
            step = span if 2 * span <= need else need - span
            x &= x >> step
            span += step
        return x & (free >> need)

    def largest(self) -> int:
        """Length of the longest run of free consecutive machines."""
        lo, hi = 0, len(self.machines)  # (a run of k implies one of k - 1: bisect on k)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts(mid):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def take(self, req: int) -> range | None:
        """The first `req` machines of the first free run of at least `req` (in list order),
        now marked busy; None (nothing changed) when no run is long enough or `req` <= 0.

        The ids of a run differ by 1 from one to the next, always in the same direction (they
        are distinct), so the run is a `range` of ids, in list order: O(1) memory however
        large the job."""
        if req <= 0 or req > len(self.machines):
            return None
        if req >= self.failed_req and self.free == self.failed_free:
            return None
        starts = self._starts(req)
        if not starts:
            self.failed_free = self.free
            self.failed_req = req
            return None
        start = (starts & -starts).bit_length() - 1
        self.free ^= ((1 << req) - 1) << start
        first = self.machines[start]
        if req > 1 and self.machines[start + 1] < first:
            return range(first, first - req, -1)
        return range(first, first + req)

    def release(self, alloc: Sequence[int]) -> None:
        """Free the machines of an allocation `take` returned (a run, in list order)."""
        if not alloc:
            return
        start = self.position[alloc[0]]
        self.free |= ((1 << len(alloc)) - 1) << start
